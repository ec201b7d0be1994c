"""Where a project's index directory lives.

In order of preference: a directory named by the caller;
``$CODELEX_INDEX_DIR/<slug of the root>``; ``<root>/.codelex`` (created with a
``.gitignore`` of ``*``, so that the cache never shows up in ``git status``);
and, when the root is not writable, a per-user cache directory. The code
index and the docs cache share the directory.

An index holds the text of every file indexed, and its caches steer what
is read next: index directories are created owner-only (0700), and one
that is a symbolic link, not a directory, owned by another user or
writable by others is neither loaded nor written (git's "dubious
ownership" rule; :func:`dir_refusal`).  ``<root>/.codelex`` is used only
when the root itself is the user's and not writable by others; otherwise
the per-user cache directory holds the root's index.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
from pathlib import Path

from codelex.defaults import INDEX_DIR_ENV, INDEX_DIR_NAME, INDEX_FILE

__all__ = [
    "candidate_dirs",
    "dir_refusal",
    "index_locations",
    "local_dir_refusal",
    "make_private",
    "make_private_dir",
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
    fast = _plain_linux_cache_dir()
    if fast is not None:
        return fast / "projects"
    import platformdirs

    return Path(platformdirs.user_cache_dir("codelex", appauthor=False)) / "projects"


def _plain_linux_cache_dir() -> Path | None:
    """platformdirs' answer in the common Linux case (no ``XDG_CACHE_HOME``, an absolute ``HOME``:
    ``~/.cache/codelex``), without importing it: platformdirs brings tempfile, shutil and random with
    it, 5-6 ms of every command's first index load.  None in any other case (platformdirs decides)."""
    if not sys.platform.startswith("linux") or "XDG_CACHE_HOME" in os.environ:
        return None
    home = os.environ.get("HOME", "")
    if not home or not os.path.isabs(home):
        return None
    return Path(home) / ".cache" / "codelex"


_POSIX_OWNERS = hasattr(os, "geteuid")


def _unsafe_mode(st: os.stat_result) -> str | None:
    """Why a directory's owner and mode let someone else put files in it (None when only its owner can)."""
    if not _POSIX_OWNERS:
        return None
    if st.st_uid != os.geteuid():
        return f"owned by another user (uid {st.st_uid})"
    sticky = st.st_mode & stat.S_ISVTX
    if st.st_mode & stat.S_IWOTH and not sticky:
        return "writable by other users"
    if st.st_mode & stat.S_IWGRP and st.st_gid != os.getegid() and not sticky:
        return "writable by its group"
    return None


def dir_refusal(directory: Path) -> str | None:
    """Why ``directory`` must not hold an index (None when it may, or does not exist yet).

    As git's "dubious ownership" rule: an index directory that is a symbolic
    link or not a directory, owned by another user, or writable by others is
    never loaded nor written (another user could plant a crafted listing or
    read what was indexed).
    """
    try:
        st = os.lstat(directory)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    if stat.S_ISLNK(st.st_mode):
        return "a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    return _unsafe_mode(st)


def local_dir_refusal(root: Path) -> str | None:
    """Why ``<root>/.codelex`` must not be used: the root is someone else's, or others may rename in it."""
    try:
        st = os.stat(root)
    except OSError as exc:
        return f"the project directory cannot be examined ({exc.strerror or type(exc).__name__})"
    why = _unsafe_mode(st)
    if why is not None:
        return f"the project directory is {why}"
    return dir_refusal(root / INDEX_DIR_NAME)


def make_private_dir(directory: Path) -> None:
    """Create ``directory`` (and missing parents) owner-only (0700), or check the existing one.

    An existing index directory of ours that others may read (an index of
    an older version) is made owner-only: it holds the text of every file
    indexed, whatever those files' own modes.

    Raises
    ------
    OSError
        When it cannot be created, or is not a safe directory (:func:`dir_refusal`).
    """
    missing = []
    here = directory
    while not os.path.lexists(here) and here.parent != here:
        missing.append(here)
        here = here.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
    why = dir_refusal(directory)
    if why is not None:
        raise PermissionError(errno.EPERM, f"not a safe index directory ({why})", str(directory))
    if _POSIX_OWNERS:
        st = os.lstat(directory)
        if st.st_mode & 0o077:
            os.chmod(directory, 0o700)


def make_private(directory: Path) -> None:
    """Bring an index directory of this user's, and the files and directories in it (one level down, as
    ``embeddings/``), back to owner-only modes (0700, 0600) when they were loosened (a ``chmod 644``): they
    hold the text of every file indexed.  Nothing is followed through a link; what is not this user's, or
    cannot be opened, is left as it is (a save replaces it)."""
    if not _POSIX_OWNERS:
        return
    uid = os.geteuid()

    def tighten(path, is_dir: bool) -> None:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
            | getattr(os, "O_CLOEXEC", 0) | (getattr(os, "O_DIRECTORY", 0) if is_dir else 0)
        try:
            fd = os.open(path, flags)
        except OSError:
            return
        try:
            st = os.fstat(fd)
            kind_ok = stat.S_ISDIR(st.st_mode) if is_dir else stat.S_ISREG(st.st_mode)
            if kind_ok and st.st_uid == uid and st.st_mode & 0o077:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & 0o700)
        except OSError:
            pass
        finally:
            os.close(fd)

    tighten(directory, True)
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_symlink():
                continue
            if entry.is_dir(follow_symlinks=False):
                tighten(entry.path, True)
                for inner in os.scandir(entry.path):
                    if inner.is_file(follow_symlinks=False):
                        tighten(inner.path, False)
            elif entry.is_file(follow_symlinks=False):
                tighten(entry.path, False)
        except OSError:
            continue


_GITIGNORE_TEXT = "# Created by codelex: the index is a cache.\n*\n"


def prepare_local_dir(directory: Path) -> bool:
    """Create ``<root>/.codelex`` (0700) with a ``.gitignore`` of ``*``; False when it cannot be used."""
    if local_dir_refusal(directory.parent) is not None:
        return False
    try:
        make_private_dir(directory)
        ignore = directory / ".gitignore"
        try:
            current = ignore.read_bytes() if ignore.is_file() and not ignore.is_symlink() else None
        except OSError:
            current = None
        if current != _GITIGNORE_TEXT.encode():  # absent, or left empty by a full disk: written whole
            from codelex.persist.atomic import replaced

            with replaced(ignore) as f:
                f.write(_GITIGNORE_TEXT.encode())
        # A probe of its own (threads and processes may probe the same directory at once).
        import tempfile

        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=directory)
        os.close(fd)
        os.unlink(probe)
        return True
    except OSError:
        return False


def index_locations(root: Path, explicit: Path | None) -> tuple[list[Path], dict[str, str]]:
    """``(usable index directories in order of preference, refused ones with the reason)``."""
    env = os.environ.get(INDEX_DIR_ENV)
    if explicit is not None:
        wanted = [explicit]
    elif env:
        wanted = [Path(env) / root_slug(root)]
    else:
        wanted = [root / INDEX_DIR_NAME]
    wanted.append(user_cache_dir() / root_slug(root))
    usable, refused = [], {}
    for i, directory in enumerate(wanted):
        why = local_dir_refusal(root) if i == 0 and explicit is None and not env else dir_refusal(directory)
        if why is None:
            usable.append(directory)
        else:
            refused[str(directory)] = why
    return usable, refused


def candidate_dirs(root: Path, explicit: Path | None) -> list[Path]:
    """The index directories to look in, in order of preference (unsafe ones left out: :func:`index_locations`)."""
    return index_locations(root, explicit)[0]


def writable_dir(root: Path, explicit: Path | None) -> Path:
    """The directory to save into: the first usable candidate, unless ``<root>/.codelex`` cannot be written.

    Raises
    ------
    PermissionError
        When no candidate is safe to use.
    """
    dirs, refused = index_locations(root, explicit)
    if not dirs:
        reasons = "; ".join(f"{d}: {why}" for d, why in refused.items())
        raise PermissionError(errno.EPERM, f"no safe index directory ({reasons})", str(root))
    if dirs[0] == root / INDEX_DIR_NAME and explicit is None and not os.environ.get(INDEX_DIR_ENV):
        return dirs[0] if prepare_local_dir(dirs[0]) or len(dirs) == 1 else dirs[1]
    return dirs[0]


def probe_index(directory: Path, name: str = INDEX_FILE) -> tuple[os.stat_result | None, str | None]:
    """``(stat of the index file, None)``, ``(None, None)`` when absent, ``(None, why)`` when unusable.

    A candidate location that cannot be examined (an unreadable shared cache,
    say) is reported, never fatal.  The file itself is examined, never what a
    symbolic link points to (a link committed as ``.codelex/index.clx`` is
    unusable; a save replaces it), and it must be this user's.
    """
    try:
        st = os.lstat(directory / name)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    except OSError as exc:
        return None, exc.strerror or type(exc).__name__
    if stat.S_ISLNK(st.st_mode):
        return None, "a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    if _POSIX_OWNERS and st.st_uid != os.geteuid():
        return None, f"owned by another user (uid {st.st_uid})"
    return st, None


def index_signature(directory: Path) -> tuple | None:
    """``(inode, size, mtime_ns)`` of the index file, to notice another process's save cheaply."""
    st, _ = probe_index(directory)
    return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)
