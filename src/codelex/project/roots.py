"""Which roots codelex refuses to index, and which root a directory belongs to."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from codelex.persist.layout import candidate_dirs, probe_index

__all__ = ["adoption_refusal", "discover_root", "refusal_reason"]


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


def adoption_refusal(directory: Path) -> str | None:
    """Why an ancestor ``directory`` holding an index or a ``.git`` must not be adopted as a root (None: it may).

    As git's ``safe.directory`` rule: a directory owned by another user, or
    that others may write (world-writable, sticky or not, as ``/tmp``; or
    writable by a group that is not the user's), could have had its
    ``.git``, index or configuration planted by someone else, who would
    then choose what the user's search indexes and hides.
    """
    if not hasattr(os, "geteuid"):
        return None
    try:
        st = os.stat(directory)
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or type(exc).__name__})"
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return "writable by other users"
    if st.st_mode & stat.S_IWGRP and st.st_gid != os.getegid():
        return "writable by its group"
    return None


def discover_root(start: str | os.PathLike[str] = ".") -> Path:
    """The project root that ``start`` (a directory) belongs to, as git and ripgrep find theirs.

    The nearest ancestor (``start`` included) holding a codelex index, else
    the root of the git work tree around ``start``, else ``start`` itself.
    Directories at or above the home directory are never discovered (an
    index or a ``.git`` there does not make the whole account a project);
    ``start`` itself is returned as it is, to be refused when opened.  An
    ancestor holding an index or a ``.git`` that another user owns or others
    may write is never adopted, and discovery stops there
    (:func:`adoption_refusal`; another user's ``/tmp/x/.git`` does not make
    ``/tmp/x/yours`` part of their project).  ``start`` itself, or an
    explicit root, is the user's choice.

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
        indexed = any(probe_index(d)[0] is not None for d in candidate_dirs(directory, None))
        has_git = git_root is None and os.path.lexists(directory / ".git")
        if (indexed or has_git) and directory != here and adoption_refusal(directory) is not None:
            break  # someone else's (or anyone's) directory: neither it nor anything above it
        if indexed:
            return directory
        if has_git:
            git_root = directory
    return git_root or here
