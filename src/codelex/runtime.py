"""Process-level helpers shared by the stages."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collector_paused"]

_lock = threading.Lock()
_pausers = 0  # pauses in progress, in any thread
_was_enabled = True  # the collector's state before the first of them


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while building many small objects that hold no cycles.

    Hundreds of thousands of tuples and lists (an import graph's references)
    would trigger full collections over and over; paused, the same work takes
    a fraction of the time.  Nested and concurrent pauses are counted, and
    the collector is re-enabled only if it was enabled before the first.
    """
    global _pausers, _was_enabled
    with _lock:
        if _pausers == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pausers += 1
    try:
        yield
    finally:
        with _lock:
            _pausers -= 1
            if _pausers == 0 and _was_enabled:
                gc.enable()
