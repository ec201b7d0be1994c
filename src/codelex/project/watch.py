"""Live freshness: a file watcher that feeds a project's per-edit upkeep.

:class:`ProjectWatcher` follows a root with the ``watchdog`` package
(inotify on Linux, FSEvents on macOS, ReadDirectoryChangesW on Windows) and
hands changed paths, debounced, to a callback: edits, creations, deletions
and renames of files, and whole directories created, moved in, deleted or
moved out.  Paths the project would not index (its admission rules, its
ignore files and settings, ``.git/`` and the index directory itself) never
trigger work, except the settings files themselves (configuration and ignore
files): their changes are handed over apart, so that the project re-reads its
settings and lists the tree again.

Debouncing: a batch is applied once no event arrived for
:data:`DEBOUNCE_S` (20 ms), or once its oldest event is :data:`MAX_DELAY_S`
(0.5 s) old during a continuous burst.  :meth:`ProjectWatcher.sync` applies
everything the operating system has reported up to the call, at once: it
writes a sentinel file in the index directory and waits for its event,
which the notification queue delivers after every earlier one.

When the kernel drops events (inotify's queue overflowed, e.g. under a
checkout of many thousand files), the project is checked by ``stat`` once,
as a refresh does.  When the watcher cannot start (``watchdog`` missing, the inotify watch
limit, a filesystem that does not notify) :meth:`ProjectWatcher.start`
returns the reason and the project falls back to checking files by ``stat``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from codelex.errors import UnsafePathError
from codelex.safefs import contained_relative

log = logging.getLogger("codelex")

__all__ = ["DEBOUNCE_S", "MAX_DELAY_S", "Changes", "ProjectWatcher"]

#: Quiet time after the last event before a batch is applied.
DEBOUNCE_S = 0.02
#: Longest a reported change waits during a continuous burst of events.
MAX_DELAY_S = 0.5
_SENTINEL_PREFIX = ".sync-"


class Changes:
    """A debounced batch: files changed (any kind of change), directories that appeared and that went,
    and settings files (configuration, ignore files) that changed."""

    __slots__ = ("files", "new_dirs", "gone_dirs", "settings")

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.new_dirs: set[str] = set()
        self.gone_dirs: set[str] = set()
        self.settings: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.files or self.new_dirs or self.gone_dirs or self.settings)


class ProjectWatcher:
    """Follows ``root``; ``apply(changes)`` runs on the watcher's thread (or :meth:`sync`'s caller).

    Parameters
    ----------
    root : Path
        The project root (resolved).
    admit : callable
        ``admit(rel, is_dir) -> bool``: whether a root-relative path may be
        indexed (for a directory: whether files under it may be).
    apply : callable
        ``apply(changes)`` with a :class:`Changes`; exceptions are logged.
    sentinel_dir : Path, optional
        A writable directory under ``root`` whose events are otherwise
        ignored (the index directory): :meth:`sync` writes its sentinel there.
    settings : callable, optional
        ``settings(rel) -> bool``: whether a file is a settings file (a
        configuration or ignore file) whose change may change what is
        indexed; its changes go to :attr:`Changes.settings`, wherever it is
        (in ``skip_dirs`` too), whether or not ``admit`` takes it.
    """

    def __init__(self, root: Path, admit: Callable[[str, bool], bool], apply: Callable[[Changes], None], *,
                 sentinel_dir: Path | None = None, debounce_s: float = DEBOUNCE_S,
                 max_delay_s: float = MAX_DELAY_S, skip_dirs: tuple[str, ...] = (".git",),
                 on_overflow: Callable[[], None] | None = None,
                 settings: Callable[[str], bool] | None = None) -> None:
        self.root = root
        self._settings = settings
        self._root_s = os.fspath(root)
        self._admit = admit
        self._apply = apply
        self._sentinel_dir = sentinel_dir
        self._debounce = debounce_s
        self._max_delay = max_delay_s
        self._skip = set(skip_dirs)
        if sentinel_dir is not None:
            try:
                self._skip.add(sentinel_dir.relative_to(root).parts[0])
            except (ValueError, IndexError):
                pass
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._apply_lock = threading.Lock()
        self._pending = Changes()
        self._first_at = 0.0
        self._last_at = 0.0
        self._seen_sentinels: set[str] = set()
        self._on_overflow = on_overflow
        self._overflowed = False
        self._log_hook: logging.Handler | None = None
        self._observer = None
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.state = "stopped"  # stopped | watching | failed
        self.reason: str | None = None
        self.backend: str | None = None
        self.events = 0  # events received (filtered ones included)
        self.applied = 0  # batches applied
        self.overflows = 0  # times the kernel dropped events (each followed by a stat check)

    # --- lifecycle --------------------------------------------------------------

    def start(self) -> str | None:
        """Start watching; None on success, else why the watcher could not start (it stays stopped)."""
        try:
            from watchdog import events
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError as exc:
            return self._failed(f"the watchdog package is not installed ({exc}); pip install 'codelex[watch]'")
        watcher = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:  # noqa: D401 - watchdog's callback
                watcher._on_event(event)

        observer = Observer()
        try:
            # Only changes: opening and reading files (every build and best line does) would flood the
            # kernel's queue; a write is seen when its file is closed, created, moved or deleted.
            wanted = [events.FileCreatedEvent, events.FileDeletedEvent, events.FileMovedEvent,
                      events.FileModifiedEvent, events.FileClosedEvent, events.DirCreatedEvent,
                      events.DirDeletedEvent, events.DirMovedEvent]
            observer.schedule(_Handler(), self._root_s, recursive=True, event_filter=wanted)
            observer.start()
        except Exception as exc:  # inotify limits, unsupported filesystems: OSError and others
            try:
                observer.stop()
            except Exception:
                pass
            return self._failed(f"the file watcher cannot start: {exc}")
        self._observer = observer
        self.backend = type(observer).__name__
        self._hook_overflow()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="codelex-watch", daemon=True)
        self._thread.start()
        self.state, self.reason = "watching", None
        return None

    def _hook_overflow(self) -> None:
        """Notice the kernel dropping events (inotify's queue overflowed: watchdog says so only in its log)."""
        watcher = self

        class _Overflow(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if "overflow" in record.getMessage():
                    with watcher._lock:
                        watcher._overflowed = True
                        watcher._wake.notify_all()

        self._log_hook = _Overflow(logging.WARNING)
        logging.getLogger("watchdog.observers.inotify_c").addHandler(self._log_hook)

    def _failed(self, reason: str) -> str:
        self.state, self.reason = "failed", reason
        log.info("codelex: %s; falling back to stat checks", reason)
        return reason

    def stop(self) -> None:
        """Stop watching; pending changes are applied first."""
        observer, self._observer = self._observer, None
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=5)
            except Exception:  # pragma: no cover - shutdown is best effort
                pass
        if self._log_hook is not None:
            logging.getLogger("watchdog.observers.inotify_c").removeHandler(self._log_hook)
            self._log_hook = None
        with self._lock:
            self._stopping = True
            self._wake.notify_all()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self._thread = None
        self._flush(timeout=5)  # (a batch still being applied keeps its changes for the next stat check)
        if self.state == "watching":
            self.state = "stopped"

    @property
    def watching(self) -> bool:
        return self.state == "watching"

    # --- events -----------------------------------------------------------------

    def _relative(self, path) -> str | None:
        """An event's path as a clean root-relative path, by the one containment rule; None outside the root."""
        if not path:
            return None
        try:
            return contained_relative(self._root_s, path)
        except (UnsafePathError, ValueError):
            return None

    def _on_event(self, event) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write"):
            return
        self.events += 1
        paths = [(event.src_path, kind in ("deleted", "moved"))]
        dest = getattr(event, "dest_path", None)
        if kind == "moved" and dest:
            paths.append((dest, False))
        now = time.monotonic()
        sentinels: list[str] = []
        wanted: list[tuple[str, bool]] = []
        settings: list[str] = []
        # Admission (which may read ignore files) runs before the lock is taken: sync() and stop() only
        # ever wait for short sections under it.
        for path, gone in paths:
            rel = self._relative(path)
            if rel is None:
                continue
            if not event.is_directory and self._settings is not None and self._settings(rel):
                settings.append(rel)  # (also in the index directory, skipped below)
            if rel.split("/", 1)[0] in self._skip:
                name = rel.rsplit("/", 1)[-1]
                if name.startswith(_SENTINEL_PREFIX) and not gone:
                    sentinels.append(name)
                continue
            if event.is_directory:
                if kind != "modified" and self._admit(rel, True):
                    wanted.append((rel, gone))
            elif self._admit(rel, False):
                wanted.append((rel, gone))
        if not sentinels and not wanted and not settings:
            return
        with self._lock:
            self._seen_sentinels.update(sentinels)
            self._pending.settings.update(settings)
            for rel, gone in wanted:
                if event.is_directory:
                    (self._pending.gone_dirs if gone else self._pending.new_dirs).add(rel)
                else:
                    self._pending.files.add(rel)
            if sentinels:
                self._wake.notify_all()
            if wanted or settings:
                if not self._first_at:
                    self._first_at = now
                self._last_at = now
                self._wake.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._stopping and not self._overflowed:
                    if self._pending:
                        now = time.monotonic()
                        due = min(self._last_at + self._debounce, self._first_at + self._max_delay)
                        if now >= due:
                            break
                        self._wake.wait(due - now)
                    else:
                        self._wake.wait()
                if self._stopping:
                    return
                overflowed, self._overflowed = self._overflowed, False
            if overflowed:
                self.overflows += 1
                self._recover()
            self._flush()

    def _recover(self) -> None:
        """Events were lost: what is pending is dropped and the project is checked by stat instead."""
        with self._apply_lock:
            with self._lock:
                self._pending = Changes()
                self._first_at = self._last_at = 0.0
            if self._on_overflow is not None:
                try:
                    self._on_overflow()
                except Exception:
                    log.exception("codelex: the refresh after lost file events failed")

    def _flush(self, timeout: float | None = None) -> bool:
        """Apply what is pending; False when another batch still held the apply lock after ``timeout`` s."""
        if not self._apply_lock.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            return False
        try:
            with self._lock:
                batch, self._pending = self._pending, Changes()
                self._first_at = self._last_at = 0.0
            if not batch:
                return True
            try:
                self._apply(batch)
                self.applied += 1
            except Exception:  # the watcher must outlive a bad batch; the next stat check repairs it
                log.exception("codelex: applying watched changes failed")
            return True
        finally:
            self._apply_lock.release()

    # --- sync -------------------------------------------------------------------

    def sync(self, timeout: float = 5.0) -> bool:
        """Apply every change reported up to now; True when the watcher's queue was drained and applied.

        With a sentinel directory this waits for the event of a file written
        now, so every earlier event has arrived; without one it waits one
        debounce window.  Never longer than ``timeout`` seconds in all: False
        when the event did not come, or a batch being applied on the
        watcher's thread did not finish, in time.
        """
        if not self.watching:
            return False
        deadline = time.monotonic() + timeout
        drained = True
        sentinel = None
        if self._sentinel_dir is not None:
            name = f"{_SENTINEL_PREFIX}{os.getpid()}-{threading.get_ident()}-{time.monotonic_ns()}"
            sentinel = self._sentinel_dir / name
            try:  # created, never opened if something is there already (a FIFO would block an open for writing)
                os.close(os.open(sentinel, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                                 | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0), 0o600))
            except OSError:
                sentinel = None
        if sentinel is not None:
            with self._lock:
                while sentinel.name not in self._seen_sentinels and self.watching:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        drained = False
                        break
                    self._wake.wait(left)
                self._seen_sentinels.discard(sentinel.name)
            try:
                os.unlink(sentinel)
            except OSError:
                pass
        else:
            time.sleep(self._debounce * 2)
        # Bounded: a batch the watcher's thread is applying (however slow) cannot hold the caller past timeout.
        return self._flush(deadline - time.monotonic()) and drained
