"""Debounced saving: a burst of edits becomes one atomic save after a quiet window."""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from codelex.runtime import join_bounded
from codelex.defaults import PERSIST_DEBOUNCE_ENV, PERSIST_DEBOUNCE_MS

__all__ = ["PersistScheduler", "Saveable"]

log = logging.getLogger("codelex")


class Saveable(Protocol):
    """What the scheduler saves: an index whose ``save(path)`` writes atomically."""

    def save(self, path: str | os.PathLike[str]) -> None: ...


def _debounce_from_env() -> float:
    raw = os.environ.get(PERSIST_DEBOUNCE_ENV)
    if raw is None or raw.strip() == "":
        return PERSIST_DEBOUNCE_MS
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{PERSIST_DEBOUNCE_ENV} must be a number of milliseconds >= 0, not {raw!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{PERSIST_DEBOUNCE_ENV} must be a number of milliseconds >= 0, not {raw!r}")
    return value


class _SaveState:
    """What the scheduler, its thread and its finalizer share (never the scheduler itself,
    so that an abandoned scheduler can be collected, flushing on the way out)."""

    __slots__ = ("index", "path", "cond", "save_lock", "deadline", "closed")

    def __init__(self, index: Saveable, path: Path) -> None:
        self.index = index
        self.path = path
        self.cond = threading.Condition()
        self.save_lock = threading.Lock()
        self.deadline: float | None = None
        self.closed = False

    def flush(self) -> bool:
        with self.save_lock:
            with self.cond:
                if self.deadline is None:
                    return False
                self.deadline = None
            try:
                self.index.save(self.path)
            except BaseException:
                with self.cond:  # still pending: a later flush retries
                    if self.deadline is None:
                        self.deadline = time.monotonic()
                raise
            return True

    def stop(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


def _final_flush(state: _SaveState) -> None:
    """Runs when a scheduler is collected or at interpreter exit (weakref.finalize)."""
    state.stop()
    try:
        state.flush()
    except Exception as exc:  # reported, never raised from a finalizer
        print(f"codelex: saving the index to {state.path} failed: {exc}", file=sys.stderr)


def _worker(ref: weakref.ref, state: _SaveState) -> None:
    while True:
        with state.cond:
            while not state.closed and (state.deadline is None or state.deadline > time.monotonic()):
                state.cond.wait(None if state.deadline is None else state.deadline - time.monotonic())
            if state.closed:
                return
        scheduler = ref()
        if scheduler is None:
            return
        try:
            if state.flush():
                scheduler.saves += 1
                scheduler.last_error = None
        except Exception as exc:  # a background save must not kill the thread
            scheduler.last_error = exc
            log.warning("codelex: saving the index to %s failed: %s", state.path, exc)
            if scheduler.on_error is not None:
                scheduler.on_error(exc)
            with state.cond:  # retry after another quiet window, not in a tight loop
                state.deadline = time.monotonic() + max(scheduler.debounce_ms / 1000.0, 0.05)
        del scheduler


class PersistScheduler:
    """Coalesce bursts of updates into one save after a quiet window.

    Call :meth:`schedule` after each update; the index is saved once no
    call has come for ``debounce_ms``.  :meth:`flush` saves at once if a
    save is pending.  A pending save is also written when the scheduler is
    closed, garbage-collected, or at interpreter exit.

    Parameters
    ----------
    index : WordIndex
        Or anything with a ``save(path)`` method that writes atomically.
    path : str or path-like
        The index directory (see :meth:`codelex.WordIndex.save`).
    debounce_ms : float, optional
        Quiet window; default ``$CODELEX_PERSIST_DEBOUNCE_MS`` or 1500.
        0 saves immediately, in the calling thread.
    on_error : callable, optional
        Called with the exception when a background save fails (the
        exception is also kept in :attr:`last_error` and logged); the save
        stays pending and is retried after another quiet window.

    Examples
    --------
    >>> import tempfile
    >>> from codelex import WordIndex
    >>> index = WordIndex.build([("a.py", "def alpha(): ...")])
    >>> with tempfile.TemporaryDirectory() as d, PersistScheduler(index, d, debounce_ms=50) as saver:
    ...     _ = index.update("b.py", "def beta(): ...")
    ...     saver.schedule()
    ...     saver.flush()
    ...     sorted(WordIndex.load(d).files)
    True
    ['a.py', 'b.py']
    """

    def __init__(self, index: Saveable, path: str | os.PathLike[str], *, debounce_ms: float | None = None,
                 on_error: Callable[[BaseException], object] | None = None) -> None:
        if not callable(getattr(index, "save", None)):
            raise TypeError(f"index must be a WordIndex (or have a save method), not {type(index).__name__}")
        if debounce_ms is None:
            debounce_ms = _debounce_from_env()
        if isinstance(debounce_ms, bool) or not isinstance(debounce_ms, (int, float)) or not 0 <= debounce_ms < float("inf"):
            raise ValueError(f"debounce_ms must be a number >= 0, not {debounce_ms!r}")
        self.index = index
        self.path = Path(path)
        self.debounce_ms = float(debounce_ms)
        self.on_error = on_error
        self.last_error: BaseException | None = None
        self.saves = 0
        self._state = _SaveState(index, self.path)
        self._thread: threading.Thread | None = None
        self._finalizer = weakref.finalize(self, _final_flush, self._state)

    @property
    def pending(self) -> bool:
        """Whether a save is scheduled and not yet written."""
        return self._state.deadline is not None

    def schedule(self) -> None:
        """Note that the index changed; save after the quiet window."""
        state = self._state
        if state.closed:
            raise RuntimeError("the scheduler is closed")
        with state.cond:
            state.deadline = time.monotonic() + self.debounce_ms / 1000.0
            if self.debounce_ms > 0:
                if self._thread is None:
                    self._thread = threading.Thread(target=_worker, args=(weakref.ref(self), state),
                                                    name="codelex-persist", daemon=True)
                    self._thread.start()
                state.cond.notify_all()
        if self.debounce_ms == 0:
            self.flush()

    def flush(self) -> bool:
        """Save now if a save is pending; returns whether one was written.

        Raises whatever the save raises (``OSError``...); the save then stays pending.
        """
        written = self._state.flush()
        if written:
            self.saves += 1
            self.last_error = None
        return written

    def cancel(self) -> None:
        """Drop a pending save."""
        with self._state.cond:
            self._state.deadline = None

    def close(self) -> None:
        """Flush a pending save and stop the background thread."""
        try:
            if not self._state.closed:
                self.flush()
        finally:
            self._state.stop()
            self._finalizer.detach()
            join_bounded(self._thread, what="the index saver")

    def __enter__(self) -> PersistScheduler:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
