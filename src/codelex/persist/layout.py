"""Where a project's index directory lives.

In order of preference: a directory named by the caller;
``$CODELEX_INDEX_DIR/<slug of the root>``; ``<root>/.codelex`` (created with a
``.gitignore`` of ``*``, so that the cache never shows up in ``git status``);
and, when the root is not writable, a per-user cache directory. The code
index and the docs cache share the directory.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

from codelex.defaults import INDEX_DIR_ENV, INDEX_DIR_NAME, INDEX_FILE

__all__ = [
    "candidate_dirs",
    "index_signature",
    "prepare_local_dir",
    "probe_index",
    "root_slug",
    "user_cache_dir",
    "writable_dir",
]


def root_slug(root: Path) -> str:
    """A file-name-safe, collision-resistant name for ``root`` (readable prefix + hash)."""
    text = re.sub(r"[^A-Za-z0-9-]", "", str(root).replace("\\", "/").replace("/", "-")).strip("-")[:80]
    return f"{text or 'root'}-{hashlib.sha256(os.fsencode(str(root))).hexdigest()[:12]}"


def user_cache_dir() -> Path:
    """The per-user directory holding one index directory per root (platformdirs' cache directory)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("codelex", appauthor=False)) / "projects"


def prepare_local_dir(directory: Path) -> bool:
    """Create ``<root>/.codelex`` with a ``.gitignore`` of ``*``; False when it is not writable."""
    try:
        directory.mkdir(exist_ok=True)
        ignore = directory / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# Created by codelex: the index is a cache.\n*\n", encoding="utf-8")
        # A probe of its own (threads and processes may probe the same directory at once).
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=directory)
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError:
        return False


def candidate_dirs(root: Path, explicit: Path | None) -> list[Path]:
    """The index directories to look in, in order of preference."""
    if explicit is not None:
        return [explicit]
    env = os.environ.get(INDEX_DIR_ENV)
    if env:
        return [Path(env) / root_slug(root)]
    return [root / INDEX_DIR_NAME, user_cache_dir() / root_slug(root)]


def writable_dir(root: Path, explicit: Path | None) -> Path:
    """The directory to save into: the first candidate, unless ``<root>/.codelex`` cannot be written."""
    dirs = candidate_dirs(root, explicit)
    if explicit is None and not os.environ.get(INDEX_DIR_ENV):
        return dirs[0] if prepare_local_dir(dirs[0]) else dirs[1]
    return dirs[0]


def probe_index(directory: Path, name: str = INDEX_FILE) -> tuple[os.stat_result | None, str | None]:
    """``(stat of the index file, None)``, ``(None, None)`` when absent, ``(None, why)`` when unusable.

    A candidate location that cannot be examined (an unreadable shared cache,
    say) is reported, never fatal.
    """
    try:
        st = os.stat(directory / name)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, exc.strerror or type(exc).__name__
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    return st, None


def index_signature(directory: Path) -> tuple | None:
    """``(inode, size, mtime_ns)`` of the index file, to notice another process's save cheaply."""
    st, _ = probe_index(directory)
    return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)
