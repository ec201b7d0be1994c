"""Reading: the chosen files' contents, on a thread pool, each re-checked as it is opened."""

from __future__ import annotations

import collections
import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from codelex.defaults import DEFAULT_MAX_BYTES
from codelex.errors import UnsafePathError
from codelex.ingest.rules import content_skip_reason
from codelex.safefs import NotRegularFileError, read_bytes

__all__ = ["Document", "read_file", "read_files"]


@dataclass(frozen=True)
class Document:
    """A file as read: its content and the ``size``/``mtime_ns`` of exactly that content."""

    path: str
    content: bytes
    size: int
    mtime_ns: int

def read_file(root: str, path: str, max_bytes: int | None) -> Document | str:
    """Read one file, or return why it is left out (see :func:`read_files`).

    The file is opened through :mod:`codelex.safefs`: never through a
    symbolic link (``symlink``), never blocking on a FIFO or device
    (``not-a-file``); a path whose parent stopped being a directory is
    ``vanished``.
    """
    try:
        data, st = read_bytes(root, path, max_bytes)
    except FileNotFoundError:
        return "vanished"
    except NotADirectoryError:
        return "vanished"
    except UnsafePathError:
        return "symlink"
    except (NotRegularFileError, IsADirectoryError):
        return "not-a-file"
    except OSError:
        return "unreadable"
    if max_bytes is not None and len(data) > max_bytes:
        return "too-large"  # (or grew since the listing)
    reason = content_skip_reason(data)
    if reason is not None:
        return reason
    return Document(path, data, len(data), st.st_mtime_ns)


def read_files(
    root: str | os.PathLike[str],
    files: Iterable[str | object],
    *,
    max_bytes: int | None = DEFAULT_MAX_BYTES,
    skipped: collections.Counter | None = None,
    workers: int | None = None,
    window: int = 256,
    progress: Callable[[int, int, int], object] | None = None,
    should_continue: Callable[[], bool] | None = None,
    on_skip: Callable[[str, str], object] | None = None,
) -> Iterator[Document]:
    """Read ``files`` (paths, or the walk's ``SourceFile`` entries) on a thread pool; yield the admissible ones
    in order.

    Each file is opened without following symlinks, and its size and mtime
    are taken from the open file, so that they describe exactly the bytes
    read.  Files that vanished, cannot be read, grew past ``max_bytes``, hold
    a NUL byte in their first 8 KiB (``binary``) or carry a generated-file
    marker in their first 4 KiB (``generated``) are counted in ``skipped``.

    Parameters
    ----------
    progress : callable, optional
        Called as ``progress(files_done, files_total, bytes_read)``.
    should_continue : callable, optional
        Polled between files; reading stops (the generator ends) once it
        returns False.
    on_skip : callable, optional
        Called as ``on_skip(path, reason)`` for each file left out.
    """
    root_s = str(root)
    paths = [f if isinstance(f, str) else f.path for f in files]
    total = len(paths)
    workers = workers or min(8, (os.cpu_count() or 1) * 2)
    done = 0
    nbytes = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="codelex-read") as pool:
        pending: collections.deque = collections.deque()
        it = iter(paths)
        for path in it:
            pending.append(pool.submit(read_file, root_s, path, max_bytes))
            if len(pending) >= window:
                break
        try:
            while pending:
                if should_continue is not None and not should_continue():
                    return
                outcome = pending.popleft().result()
                nxt = next(it, None)
                if nxt is not None:
                    pending.append(pool.submit(read_file, root_s, nxt, max_bytes))
                done += 1
                if isinstance(outcome, str):
                    if skipped is not None:
                        skipped[outcome] += 1
                    if on_skip is not None:
                        on_skip(paths[done - 1], outcome)
                else:
                    nbytes += outcome.size
                # Reported before the file is handed on: a caller sees progress before its effect.
                if progress is not None:
                    progress(done, total, nbytes)
                if not isinstance(outcome, str):
                    yield outcome
        finally:
            for fut in pending:
                fut.cancel()
