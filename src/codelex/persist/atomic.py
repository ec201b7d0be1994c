"""Replacing a file whole, so that a crash at any point leaves the old file or the new one.

:func:`replaced` is the one way codelex writes a file over another: the content goes to a temporary beside
the target (created exclusively, never through a link, with the mode asked for), is fsynced, is renamed over
the target, and the directory is fsynced; on an error the temporary is removed.  The index's container
(:func:`codelex.persist.container.atomic_file`, under the directory's lock), the index directory's
``.gitignore`` and an agent client's configuration file (:mod:`codelex.mcp_install`) are written through it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

__all__ = ["fsync_directory", "replaced"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@contextlib.contextmanager
def replaced(path: Path, *, mode: int = 0o600, before_rename: Callable[[], None] | None = None):
    """A binary file to write ``path`` through: it replaces the old one only once complete and durable.

    Parameters
    ----------
    path : Path
        The file to replace (or create).
    mode : int
        The new file's permission bits (set on the open file: the umask does not change them).
    before_rename : callable, optional
        Called once the content is durable, before the rename: it may refuse by raising (e.g. the target
        changed since it was read), and the temporary is then removed.

    Raises
    ------
    OSError
        When the temporary cannot be created or written.
    """
    directory = path.parent
    tmp = directory / f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                     | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0), mode)
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    fsync_directory(directory)


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (POSIX; a file system that cannot fsync a directory is let be)."""
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # some file systems cannot fsync a directory; the rename still stands
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EACCES):
            raise
    finally:
        os.close(fd)
