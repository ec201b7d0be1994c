"""Background jobs of a root, one abstraction for all of them, and the debounced saver they share.

A :class:`Job` is one kind of work (the word index's build, the structure
stage, the chunks' first preparation, the embedding, a model's load, the
import graph): at most one run of it counts at a time.  It holds

- its state word (``state``): ``idle`` until a run starts, the job's busy
  word (``building``, ``running``) while one runs, then what the run ended
  with (``ready``, ``failed``...); ``reason`` says why, ``error`` keeps the
  last failure and ``progress`` ``(done, total)``;
- a generation: :meth:`Job.begin` takes a new one, and a run whose
  generation is no longer current (superseded by a newer run, cancelled, or
  stopped at interpreter exit) stops at its next :meth:`Job.check` and never
  publishes (:class:`Cancelled`);
- the thread of its last background run: :meth:`Job.wait` and
  :meth:`Job.close` wait for it within a bound, and every job that starts a
  thread is stopped and joined at interpreter exit
  (:func:`codelex.runtime.stop_at_exit`).

Readiness is asked of the jobs (their state words and results), never
found out by running a query.

:class:`DebouncedSaver` is the one debounced save of whichever object a
job last changed (:class:`codelex.PersistScheduler` underneath).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from codelex.runtime import CLOSE_JOIN_S, interpreter_exiting, join_bounded, stop_at_exit

__all__ = ["Cancelled", "DebouncedSaver", "Job", "join_all"]

log = logging.getLogger("codelex")


class Cancelled(Exception):
    """A run was superseded, cancelled or its project closed: it stops and never publishes."""


class Job:
    """One kind of background work; every field is read and written under :attr:`lock`.

    Parameters
    ----------
    what : str
        What a run does, for the log (``"building the index of /repo"``).
    lock : threading.RLock, optional
        The lock the job's fields are guarded by; a job whose results are
        published with other state passes that state's lock.
    busy : str
        The state word while a run is under way.
    after : str
        The state word a run that ended without saying otherwise leaves.
    """

    def __init__(self, what: str, *, lock=None, busy: str = "building", after: str = "idle") -> None:
        self.what = what
        self.lock = lock if lock is not None else threading.RLock()
        self.done = threading.Condition(self.lock)
        self.busy = busy
        self.after = after
        self.state = "idle"
        self.reason: str | None = None
        self.error: str | None = None
        self.progress: tuple[int, int] = (0, 0)
        self.generation = 0
        self.thread: threading.Thread | None = None
        self.closed = False  # stopped for good: nothing new starts, every wait returns

    # --- runs -------------------------------------------------------------------------

    def begin(self) -> int:
        """Start a run: a new generation (superseding any run under way), the busy state; returns it."""
        with self.lock:
            self.generation += 1
            self.state, self.reason = self.busy, None
            self.done.notify_all()
            return self.generation

    def current(self, generation: int) -> bool:
        """Whether ``generation``'s run still counts (not superseded, cancelled or stopped)."""
        return generation == self.generation and not self.closed

    def check(self, generation: int) -> None:
        """Raise :class:`Cancelled` when ``generation``'s run no longer counts."""
        if not self.current(generation):
            raise Cancelled

    def finish(self, generation: int, state: str = "ready", reason: str | None = None) -> bool:
        """End ``generation``'s run in ``state``; False (nothing changes) when it no longer counts."""
        with self.lock:
            if not self.current(generation):
                return False
            self.state, self.reason = state, reason
            self.done.notify_all()
            return True

    def fail(self, generation: int, exc: BaseException | str) -> bool:
        """End ``generation``'s run as ``failed``, keeping why in :attr:`reason` and :attr:`error`."""
        why = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
        with self.lock:
            if not self.finish(generation, "failed", why):
                return False
            self.error = why
            return True

    def report(self, done: int, total: int) -> None:
        """Note a run's progress (:attr:`progress`)."""
        with self.lock:
            self.progress = (done, total)

    def run(self, generation: int, target: Callable, *args, raise_errors: bool = False) -> None:
        """Run ``target(generation, *args)`` in this thread as ``generation``'s run.

        :class:`Cancelled` ends it quietly; another exception is logged and
        the run ends ``failed`` (raised instead with ``raise_errors``), unless
        the run no longer counts or the interpreter is exiting (then the error
        is the shutdown's).  A run that ends without saying how leaves
        :attr:`after`.
        """
        try:
            target(generation, *args)
        except Cancelled:
            return
        except Exception as exc:  # reported through the state; never raised into a query
            if raise_errors:
                raise
            if interpreter_exiting() or not self.current(generation):
                return
            log.warning("codelex: %s failed: %s", self.what, exc, exc_info=True)
            self.fail(generation, exc)
            return
        finally:
            with self.lock:
                if self.current(generation) and self.state == self.busy:
                    self.state = self.after
                    self.done.notify_all()

    def spawn(self, generation: int, target: Callable, *args, name: str = "codelex-job") -> threading.Thread:
        """Run ``target(generation, *args)`` on a daemon thread (see :meth:`run`), stopped at interpreter exit."""
        thread = threading.Thread(target=self.run, args=(generation, target, *args), daemon=True, name=name)
        with self.lock:
            self.thread = thread
        stop_at_exit(self)
        thread.start()
        return thread

    def start(self, target: Callable, *args, name: str = "codelex-job") -> int | None:
        """:meth:`begin` and :meth:`spawn` in one; None (nothing starts) when the job is closed."""
        with self.lock:
            if self.closed:
                return None
            generation = self.begin()
        self.spawn(generation, target, *args, name=name)
        return generation

    # --- readiness ---------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a run is under way (its thread alive, or a run in a caller's thread)."""
        thread = self.thread
        return (thread is not None and thread.is_alive()) or (self.state == self.busy and not self.closed)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until no run is under way, at most ``timeout`` s (None: as long as it takes); True when none is."""
        return self.wait_until(lambda: self.state != self.busy or self.closed, timeout)

    def wait_until(self, ready: Callable[[], bool], timeout: float | None = None) -> bool:
        """Wait until ``ready()`` (asked under :attr:`lock` whenever a run begins or ends, and at once), at most
        ``timeout`` s (None: as long as it takes; a closed job ends the wait); True when it holds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.done:
            while not ready():
                remaining = None if deadline is None else deadline - time.monotonic()
                if self.closed or (remaining is not None and remaining <= 0):
                    return ready()
                self.done.wait(remaining)
        return True

    # --- ending ------------------------------------------------------------------------

    def cancel(self, generation: int | None = None, state: str | None = None) -> bool:
        """Cancel ``generation``'s run (None: whichever runs): it stops at its next check and never publishes.

        ``state`` becomes the job's state word.  False when that run had
        already been superseded (nothing changes).
        """
        with self.lock:
            if generation is not None and generation != self.generation:
                return False
            self.generation += 1
            if state is not None:
                self.state = state
            self.done.notify_all()
            return True

    def stop(self) -> None:
        """Stop for good (at interpreter exit, or closing): the run under way stops at its next check."""
        with self.lock:
            self.closed = True
            self.generation += 1
            self.done.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the last run's thread, at most ``timeout`` s; True when it no longer runs."""
        thread = self.thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def close(self, timeout: float = CLOSE_JOIN_S) -> bool:
        """:meth:`stop`, then wait for the thread at most ``timeout`` s (logged past that); True when it ended."""
        self.stop()
        return join_bounded(self.thread, timeout, what=self.what)

    def status(self) -> dict:
        """``{state, reason, error, progress, running}``."""
        with self.lock:
            return {"state": self.state, "reason": self.reason, "error": self.error, "progress": self.progress,
                    "running": self.running}

    def __repr__(self) -> str:
        return f"<Job {self.what!r} {self.state} generation={self.generation}>"


def join_all(jobs, timeout: float | None) -> bool:
    """Wait for every job's thread, all within ``timeout`` s; True when none runs any more."""
    deadline = None if timeout is None else time.monotonic() + timeout
    done = True
    for job in jobs:
        done &= job.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
    return done


class DebouncedSaver:
    """One debounced save of whichever object was last scheduled (a burst of changes: one write).

    ``where()`` names the directory when a new object is first scheduled.
    Scheduling another object (a rebuilt index) closes the previous
    scheduler, which writes its pending save first.
    """

    def __init__(self, where: Callable[[], Path]) -> None:
        self.where = where
        self.lock = threading.Lock()
        self.scheduler = None  # a PersistScheduler, for the object last scheduled

    def schedule(self, target, debounce_ms: float | None = None) -> None:
        """Note that ``target`` (anything with an atomic ``save(directory)``) changed: one save after the quiet
        window (``debounce_ms``; default as :class:`codelex.PersistScheduler`)."""
        from codelex.persist.scheduler import PersistScheduler

        with self.lock:
            scheduler = self.scheduler
            if scheduler is None or scheduler.index is not target:
                if scheduler is not None:
                    scheduler.close()
                scheduler = self.scheduler = PersistScheduler(target, self.where(), debounce_ms=debounce_ms)
        scheduler.schedule()

    @property
    def pending(self) -> bool:
        scheduler = self.scheduler
        return scheduler is not None and scheduler.pending

    def cancel(self) -> None:
        """Drop a pending save and forget the scheduler (another process's newer save was adopted)."""
        with self.lock:
            scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            scheduler.cancel()
            scheduler.close()

    def close(self) -> None:
        """Write a pending save now and forget the scheduler (a later change starts another)."""
        with self.lock:
            scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            scheduler.close()
