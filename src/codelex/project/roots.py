"""Which roots codelex refuses to index, and which root a directory belongs to."""

from __future__ import annotations

import os
from pathlib import Path

from codelex.persist.layout import candidate_dirs, probe_index

__all__ = ["discover_root", "refusal_reason"]


def refusal_reason(root: Path) -> str | None:
    """Why codelex refuses to index ``root`` (a resolved path), or None.

    Roots at or above the home directory are refused: indexing them would
    read a user's whole account.
    """
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):
        return None
    if root == home or root in home.parents:
        return f"root at/above home directory ({root})"
    return None


def discover_root(start: str | os.PathLike[str] = ".") -> Path:
    """The project root that ``start`` (a directory) belongs to, as git and ripgrep find theirs.

    The nearest ancestor (``start`` included) holding a codelex index, else
    the root of the git work tree around ``start``, else ``start`` itself.
    Directories at or above the home directory are never discovered (an
    index or a ``.git`` there does not make the whole account a project);
    ``start`` itself is returned as it is, to be refused when opened.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp()).resolve()
    >>> (root / ".git").mkdir(); (root / "src").mkdir()
    >>> discover_root(root / "src") == root
    True
    """
    here = Path(start).expanduser().resolve()
    git_root = None
    for directory in (here, *here.parents):
        if refusal_reason(directory):
            break  # every further parent is above home too
        if any(probe_index(d)[0] is not None for d in candidate_dirs(directory, None)):
            return directory
        if git_root is None and os.path.exists(directory / ".git"):
            git_root = directory
    return git_root or here
