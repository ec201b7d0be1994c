"""Process-level helpers shared by the stages."""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import sys
import threading
import time
import weakref
from collections.abc import Iterator

__all__ = ["CLOSE_JOIN_S", "EXIT_JOIN_S", "child_import_path", "collector_paused", "interpreter_exiting", "join_bounded", "neutral_cwd",
           "python_command", "stop_at_exit", "thread_niceness", "trusted_executable", "yield_this_thread"]

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


# --- child processes ---------------------------------------------------------------------

# What a child interpreter runs: the parent's import path, then one of codelex's own entry points.
_CHILD_BOOT = ("import sys, json, importlib; sys.path[:] = json.loads(sys.argv[1]); "
               "module, _, function = sys.argv[2].partition(':'); "
               "getattr(importlib.import_module(module), function)()")


def neutral_cwd() -> str:
    """A working directory for child processes that no checkout controls (the file system's root)."""
    return os.path.abspath(os.sep)


def child_import_path() -> list[str]:
    """The parent's ``sys.path`` without anything that depends on the current directory.

    ``""`` and relative entries resolve against whatever directory a process
    runs in, and the current directory itself is the checkout being indexed:
    a ``json.py`` or ``codelex/`` there must never shadow the real ones.  The
    directory codelex itself was imported from is kept, wherever it is.
    """
    from codelex import defaults

    own = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(defaults.__file__))))
    try:
        here = os.path.abspath(os.getcwd())
    except OSError:
        here = None
    out = []
    for entry in sys.path:
        if not isinstance(entry, str) or not entry or not os.path.isabs(entry):
            continue
        if entry == here and entry != own:
            continue
        if entry not in out:
            out.append(entry)
    return out


def python_command(entry: str) -> list[str]:
    """The command line that runs ``entry`` (``"package.module:function"``) of codelex in a fresh interpreter.

    Isolated (``-I``: no ``PYTHON*`` variables, no user site, neither the
    script's nor the current directory on ``sys.path``), with the parent's
    import path handed over explicitly (:func:`child_import_path`), so a
    checkout's ``codelex/``, ``json.py`` or ``numpy/`` is never imported.
    Run it with ``cwd=``:func:`neutral_cwd`.
    """
    import json

    return [sys.executable, "-I", "-c", _CHILD_BOOT, json.dumps(child_import_path()), entry]


def trusted_executable(name: str) -> str | None:
    """The absolute path of an external program (``git``), looked up in ``PATH``'s absolute entries only.

    A relative ``PATH`` entry (``.``, ``bin``) would let the checkout being
    indexed provide the program.
    """
    import shutil

    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))
    return shutil.which(name, path=path) if path else None


# --- background work at interpreter exit ---------------------------------------------------

#: At interpreter exit, how long background work gets to reach a stopping point.  A daemon thread still
#: inside native code (a model, a native build) when the interpreter finalizes aborts the process
#: ("terminate called without an active exception"), so exit waits for the step in progress, up to this.
EXIT_JOIN_S = 60.0
#: Longest ``close()`` waits for a background thread before giving up on it (logged).
CLOSE_JOIN_S = 60.0

_exit_jobs: weakref.WeakSet = weakref.WeakSet()
_exit_lock = threading.Lock()
_exit_hook = False


def stop_at_exit(job) -> None:
    """Stop and join ``job`` at interpreter exit (it has ``stop()`` and ``join(timeout) -> bool``).

    Held weakly: a job nobody holds needs no stopping.  Registered with
    :mod:`atexit`, which runs while daemon threads still run, before the
    interpreter finalizes.
    """
    global _exit_hook
    with _exit_lock:
        _exit_jobs.add(job)
        if not _exit_hook:
            # Before the thread pools shut down (concurrent.futures registers the same way, earlier, and these
            # run last-registered first), so a stopped job reaches its own stopping point, not their refusal.
            register = getattr(threading, "_register_atexit", None)
            try:
                (register or atexit.register)(_stop_all_at_exit)
            except RuntimeError:  # already shutting down
                atexit.register(_stop_all_at_exit)
            _exit_hook = True


def interpreter_exiting() -> bool:
    """Whether the interpreter is shutting down (the main thread has finished): background errors then are
    the shutdown's, not the work's."""
    return not threading.main_thread().is_alive() or sys.is_finalizing()


def _stop_all_at_exit() -> None:
    deadline = time.monotonic() + EXIT_JOIN_S
    with _exit_lock:
        jobs = list(_exit_jobs)
    for job in jobs:
        try:
            job.stop()
        except Exception:  # pragma: no cover - best effort at exit
            pass
    for job in jobs:
        try:
            job.join(max(0.0, deadline - time.monotonic()))
        except Exception:  # pragma: no cover
            pass


def join_bounded(thread, timeout: float = CLOSE_JOIN_S, what: str = "a background thread") -> bool:
    """Join ``thread`` (None or the current thread: nothing to do) for at most ``timeout`` s; False if it runs on."""
    if thread is None or thread is threading.current_thread():
        return True
    thread.join(timeout)
    if thread.is_alive():
        import logging

        logging.getLogger("codelex").warning("codelex: %s did not stop within %.0f s; not waiting for it", what,
                                             timeout)
        return False
    return True


def yield_this_thread(niceness: int) -> None:
    """Lower the scheduling priority of the calling thread (and of the threads it then starts on its behalf,
    :func:`thread_niceness`) to ``niceness``: background work that must leave the cores to queries first.

    Linux schedules threads one by one (a thread id is a ``setpriority`` target there); elsewhere the call
    would renice the whole process, so it does nothing.  A thread cannot be made more urgent again: call it
    only in a thread that ends with the work.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < niceness:
            os.setpriority(os.PRIO_PROCESS, tid, niceness)
    except OSError:  # (a sandbox that forbids it: the work runs at the usual priority)
        pass


def thread_niceness() -> int:
    """The calling thread's niceness on Linux (0 elsewhere): what worker threads started for it take on."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except OSError:
        return 0
