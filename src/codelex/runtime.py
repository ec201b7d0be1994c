"""Process-level helpers shared by the stages."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["child_import_path", "collector_paused", "neutral_cwd", "python_command", "trusted_executable"]

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
