"""Files and paths codelex did not write: the one place that decides whether one may be opened.

codelex runs inside checkouts its user did not write.  Every path that comes
from outside (a listing, a watcher's event, a cache, an MCP or command-line
argument) and every file it reads there (sources, configuration, ignore files,
best lines) goes through this module:

- a root-relative path is checked first (:func:`check_relative`): not
  absolute, no ``..`` or ``.`` component, no empty one, no NUL;
- a file is opened without following a symbolic link in *any* component and
  without blocking (``O_NOFOLLOW | O_NONBLOCK``: a FIFO returns at once
  instead of waiting for a writer), and refused unless it is a regular file
  (:func:`open_file`, :func:`read_bytes`);
- a directory is entered the same way (:func:`check_directory`) and listed
  from the descriptor so opened (:func:`list_directory`).

Intermediate components are checked before anything is opened for reading:
on Linux the path is first taken as a handle (``O_PATH``, which opens
nothing: no FIFO writer is woken, no device sees an open), one ``readlink``
of ``/proc/self/fd/N`` must give back the path asked for (the kernel's own
name of what was reached) and its type must be a regular file, and only then
is it reopened for reading through that handle; elsewhere the path is walked
one component at a time with ``openat(O_NOFOLLOW | O_DIRECTORY)``, which no
rename in between can redirect, and the last component's type is checked
before it is opened.  Either way what is read is the file the path names
inside the root, or nothing.
"""

from __future__ import annotations

import errno
import functools
import os
import stat

from codelex.errors import UnsafePathError

__all__ = [
    "NotRegularFileError",
    "check_directory",
    "check_relative",
    "check_relatives",
    "contained_relative",
    "list_directory",
    "open_file",
    "read_bytes",
]

_O_READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
           | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
_O_DIR = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
          | getattr(os, "O_NONBLOCK", 0))
_WINDOWS = os.name == "nt"
_PROC_FD = "/proc/self/fd"
_CAN_WALK = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd
_O_PATH = getattr(os, "O_PATH", 0)


class NotRegularFileError(OSError):
    """The path names a FIFO, socket, device or directory: codelex reads regular files only."""


def check_relative(rel: str) -> str:
    """``rel`` itself when it is a clean root-relative ``/`` path; else :class:`~codelex.UnsafePathError`.

    Clean: not empty, not absolute, no ``..``, ``.`` or empty component, no
    NUL (on Windows also no backslash, drive or stream colon).
    """
    if not isinstance(rel, str):
        raise TypeError(f"a path must be str, not {type(rel).__name__}")
    if not rel or "\x00" in rel:
        raise UnsafePathError(f"not a usable path: {rel!r}")
    if rel.startswith("/") or (_WINDOWS and ("\\" in rel or ":" in rel)):
        raise UnsafePathError(f"not a root-relative path: {rel!r}")
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            raise UnsafePathError(f"path leaves or escapes the root: {rel!r}")
    return rel


# In "\0" + "\0".join(paths) + "\0" with every "/" made "\0" too: an empty path, an absolute one, an empty, "."
# or ".." component (three substring searches: much faster than a regex over a large listing).
_UNCLEAN = ("\0\0", "\0.\0", "\0..\0")


def check_relatives(rels: list[str]) -> None:
    """:func:`check_relative` of every path of ``rels``, in one pass over their text (a listing's many paths).

    Raises
    ------
    codelex.UnsafePathError
        Naming the first path that is not clean, as :func:`check_relative` would.
    TypeError
        For a path that is not a str.
    """
    if not rels:
        return
    text = "\0" + "\0".join(rels) + "\0"  # (TypeError for a path that is not a str)
    if text.count("\0") != len(rels) + 1 or (_WINDOWS and ("\\" in text or ":" in text)):
        split = None
    else:
        split = text.replace("/", "\0")
    if split is None or any(bad in split for bad in _UNCLEAN):
        for rel in rels:  # the first one at fault, named as check_relative names it
            check_relative(rel)


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    return os.path.realpath(root)


def _classify_open_error(exc: OSError, full: str) -> OSError:
    """An open that failed: ELOOP on the last component is a symbolic link (refused, not missing)."""
    if exc.errno == errno.ELOOP or (exc.errno == errno.EMLINK and not _WINDOWS):  # (EMLINK: FreeBSD's O_NOFOLLOW)
        return UnsafePathError(f"a symbolic link (not followed): {full}")
    if exc.errno == errno.ENOTDIR:  # a component turned into a file: the path no longer names anything
        return FileNotFoundError(errno.ENOENT, "no such file (a parent is not a directory)", full)
    return exc


def _check_fd_path(fd: int, root: str, rel: str, full: str) -> None:
    """Raise unless the open descriptor ``fd`` is ``root/rel`` reached without a symbolic link."""
    try:
        actual = os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:
        actual = None
    if actual is not None:
        expected = os.path.join(_real_root(root), rel)
        if actual == expected:
            return
        if actual == expected + " (deleted)":
            raise FileNotFoundError(errno.ENOENT, "vanished while being opened", full)
        raise UnsafePathError(f"reached through a symbolic link (not followed): {full}")
    _check_components(root, rel, full)


def _require_directory(st: os.stat_result, full: str) -> None:
    """A component on the way to ``full``: a symbolic link is refused, anything but a directory is missing."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePathError(f"reached through a symbolic link (not followed): {full}")
    if not stat.S_ISDIR(st.st_mode):
        raise FileNotFoundError(errno.ENOENT, "no such file (a parent is not a directory)", full)


def _check_components(root: str, rel: str, full: str) -> None:
    """No directory component of ``rel`` under ``root`` is a symbolic link (lstat, one per component)."""
    parts = rel.split("/")[:-1]
    here = root
    for part in parts:
        here = os.path.join(here, part)
        try:
            st = os.lstat(here)
        except OSError as exc:
            raise _classify_open_error(exc, full) from None
        _require_directory(st, full)


def _open_walk(root: str, rel: str, full: str, last_flags: int) -> int:
    """Open ``root/rel`` one component at a time (``openat``, no symbolic link anywhere)."""
    parts = rel.split("/")
    dir_fd = os.open(root, _O_DIR & ~getattr(os, "O_NOFOLLOW", 0))  # the root itself may be reached via links
    try:
        for part in parts[:-1]:
            try:
                nxt = os.open(part, _O_DIR, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    try:
                        st = os.lstat(part, dir_fd=dir_fd)
                    except OSError:
                        raise _classify_open_error(exc, full) from None
                    _require_directory(st, full)
                raise
            os.close(dir_fd)
            dir_fd = nxt
        if last_flags == _O_READ:  # a file: never opened unless it is a regular one (a FIFO's writer not woken)
            try:
                st = os.stat(parts[-1], dir_fd=dir_fd, follow_symlinks=False)
            except OSError as exc:
                raise _classify_open_error(exc, full) from None
            if stat.S_ISLNK(st.st_mode):
                raise UnsafePathError(f"a symbolic link (not followed): {full}")
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFileError(errno.EINVAL, "not a regular file", full)
        try:
            return os.open(parts[-1], last_flags, dir_fd=dir_fd)
        except OSError as exc:
            raise _classify_open_error(exc, full) from None
    finally:
        os.close(dir_fd)


def open_file(root: str | os.PathLike[str], rel: str) -> tuple[int, os.stat_result]:
    """Open the regular file ``rel`` under ``root`` for reading: ``(descriptor, its fstat)``.

    The descriptor is blocking again once the file is known to be regular;
    the caller closes it.

    Raises
    ------
    codelex.UnsafePathError
        ``rel`` is not a clean relative path, or a component of it
        (the last one included) is a symbolic link.
    NotRegularFileError
        It names a FIFO, socket, device or directory.
    OSError
        ``FileNotFoundError`` (also when a parent is not a directory),
        ``PermissionError`` and the like.
    """
    root_s = os.fspath(root)
    check_relative(rel)
    full = os.path.join(root_s, rel)
    if _O_PATH and _proc_fd():
        return _open_by_path_handle(root_s, rel, full)
    if _CAN_WALK:
        fd = _open_walk(root_s, rel, full, _O_READ)
        walked = True
    else:
        try:
            fd = os.open(full, _O_READ)
        except OSError as exc:
            raise _classify_open_error(exc, full) from None
        walked = False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", full)
        if not walked and "/" in rel:
            _check_fd_path(fd, root_s, rel, full)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return fd, st
    except BaseException:
        os.close(fd)
        raise


def _open_by_path_handle(root: str, rel: str, full: str) -> tuple[int, os.stat_result]:
    """Linux: a path handle first (``O_PATH``: nothing is opened, so a FIFO's writer is not woken and a device
    sees no open), checked for containment and type, then reopened for reading through ``/proc/self/fd``."""
    try:
        handle = os.open(full, _O_PATH | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if "/" in rel:  # through a link, "missing" would say what exists outside the root: refuse instead
            _check_components(root, rel, full)
        raise _classify_open_error(exc, full) from None
    try:
        st = os.fstat(handle)
        if stat.S_ISLNK(st.st_mode):  # (O_PATH | O_NOFOLLOW hands back the link itself)
            raise UnsafePathError(f"a symbolic link (not followed): {full}")
        if "/" in rel:
            _check_fd_path(handle, root, rel, full)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", full)
        fd = os.open(f"{_PROC_FD}/{handle}", _O_READ & ~getattr(os, "O_NOFOLLOW", 0))
    finally:
        os.close(handle)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):  # (cannot happen: the handle pins the inode)
            raise UnsafePathError(f"changed while being opened: {full}")
        os.set_blocking(fd, True)
        return fd, opened
    except BaseException:
        os.close(fd)
        raise


@functools.lru_cache(maxsize=1)
def _proc_fd() -> bool:
    return os.path.isdir(_PROC_FD)


def read_bytes(root: str | os.PathLike[str], rel: str, max_bytes: int | None = None) -> tuple[bytes, os.stat_result]:
    """The content of the regular file ``rel`` under ``root`` and the ``fstat`` taken before reading it.

    With ``max_bytes``, at most ``max_bytes + 1`` bytes are read (so a caller
    can tell a file that grew past its cap).  Raises as :func:`open_file`.
    """
    fd, st = open_file(root, rel)
    try:
        chunks = []
        total = 0
        while max_bytes is None or total <= max_bytes:  # to EOF, or one byte past the cap
            want = max(st.st_size + 1 - total, 65536)
            if max_bytes is not None:
                want = min(want, max_bytes + 1 - total)
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def check_directory(root: str | os.PathLike[str], rel: str) -> None:
    """Raise unless ``rel`` names a real directory under ``root``, reached without a symbolic link.

    ``""`` is the root itself.  Raises :class:`~codelex.UnsafePathError`,
    ``NotADirectoryError`` or ``FileNotFoundError``.
    """
    root_s = os.fspath(root)
    if rel == "":
        return
    check_relative(rel)
    full = os.path.join(root_s, rel)
    if _CAN_WALK:
        fd = _open_walk(root_s, rel, full, _O_DIR)
        os.close(fd)
        return
    _check_components(root_s, rel + "/x", full)


def list_directory(root: str | os.PathLike[str], rel: str) -> list[tuple[str, bool]]:
    """The entries of the directory ``rel`` under root (``""``: the root), as ``(name, is_directory)``.

    The directory is opened as :func:`check_directory` checks it (no
    symbolic link in any component) and listed from that descriptor, so a
    rename in between cannot make it list another directory.  A symbolic
    link among the entries is reported as not a directory: a caller that
    descends only into directories never follows one.

    Raises
    ------
    codelex.UnsafePathError
        A component of ``rel`` is a symbolic link, or ``rel`` is not clean.
    OSError
        ``NotADirectoryError``, ``FileNotFoundError``, ``PermissionError``.
    """
    root_s = os.fspath(root)
    if rel:
        check_relative(rel)
    full = os.path.join(root_s, rel) if rel else root_s
    if _CAN_WALK and os.scandir in os.supports_fd:
        fd = _open_walk(root_s, rel, full, _O_DIR) if rel else os.open(root_s, _O_DIR & ~getattr(os, "O_NOFOLLOW", 0))
        try:
            with os.scandir(fd) as it:
                return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in it]
        finally:
            os.close(fd)
    check_directory(root_s, rel)
    with os.scandir(full) as it:
        return [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in it]


def contained_relative(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str:
    """``path`` (absolute, or relative to ``root``) as a clean root-relative ``/`` path.

    The path is normalised lexically (``a/../b`` is ``b``), never by
    following links; what it then names is checked when it is opened.

    Raises
    ------
    codelex.UnsafePathError
        When it lies outside ``root`` (or is ``root`` itself) or holds NUL.
    """
    root_s = os.fspath(root)
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if "\x00" in text:
        raise UnsafePathError("a path contains a NUL character")
    full = text if os.path.isabs(text) else os.path.join(root_s, text)
    full = os.path.normpath(full)
    base = os.path.normpath(root_s)
    real_base = _real_root(base)
    # Lexically under the root as given or as resolved; else, when the path itself resolves under the
    # resolved root (it was written through an alias of the root, such as /tmp for /private/tmp), its
    # resolved form, which holds no link at all.
    for candidate, candidate_root in ((full, base), (full, real_base), (os.path.realpath(full), real_base)):
        try:
            rel = os.path.relpath(candidate, candidate_root)
        except ValueError:  # another drive (Windows)
            continue
        if rel != os.curdir and rel != os.pardir and not rel.startswith(os.pardir + os.sep):
            rel = rel.replace(os.sep, "/")
            return check_relative(rel)
    raise UnsafePathError(f"{text} is outside the project root {root_s}")
