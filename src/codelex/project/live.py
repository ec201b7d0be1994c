"""Live freshness of a project: a file watcher that applies edits as they happen, or stat checks.

:class:`LiveFreshness` is the part of :class:`codelex.Project` that starts
the watcher (:class:`codelex.project.watch.ProjectWatcher`), wires its
batches to per-edit upkeep (:mod:`codelex.project.edits`) and to the
configuration files (:mod:`codelex.project.settings`), and answers
:meth:`~codelex.Project.sync` and :attr:`~codelex.Project.watch_status`.
"""

from __future__ import annotations

import logging
from pathlib import Path

from codelex.errors import ConfigError
from codelex.project import lifecycle
from codelex.project.edits import apply_changes
from codelex.project.settings import Request, follow_config, settings_changed
from codelex.project.state import RootState
from codelex.project.watch import DEBOUNCE_S, ProjectWatcher

__all__ = ["LiveFreshness"]

log = logging.getLogger("codelex")


def _sentinel_dir(state) -> Path | None:
    """The index directory when it lies under the root and exists (the watcher's sync sentinel goes there)."""
    for directory in state.candidate_dirs():
        try:
            directory.relative_to(state.root)
        except ValueError:
            continue
        if directory.is_dir() or _make_dir(state, directory):
            return directory
    return None


def _make_dir(state, directory: Path) -> bool:
    from codelex.persist.layout import prepare_local_dir

    return directory == state.preferred_dir() and prepare_local_dir(directory)


class LiveFreshness:
    """File watching and sync, for :class:`codelex.Project` (which sets what is declared here)."""

    progress: object
    build_structure: bool
    debounce_ms: float | None
    _state: RootState
    _request: Request

    def sync(self, timeout: float = 5.0) -> bool:
        """Make the index reflect every file change made before the call.

        A watched project applies at once what the watcher has been told (see
        :mod:`codelex.project.watch`: without this, within its debounce
        window of 20 ms); otherwise the files are checked by ``stat`` and
        refreshed (:meth:`refresh`).  Returns True when nothing may be
        missing (False: the watcher's queue did not drain within ``timeout``).
        """
        watcher = self._state.watcher
        if watcher is not None and watcher.watching:
            drained = watcher.sync(timeout)  # (configuration and ignore files changed are followed on the way)
            follow_config(self._state, self._request, start=True, wait=True, progress=self.progress,
                          structure=self.build_structure)
            return drained
        self.refresh()
        return True

    @property
    def watch_status(self) -> dict:
        """``state`` (``watching``, ``off``, ``failed``: then ``reason``, and freshness comes from stat
        checks), the watcher's ``backend``, ``debounce_ms``, ``events`` and ``batches`` applied."""
        watcher = self._state.watcher
        if watcher is None:
            reason = self._state.watch_failure
            return {"state": "failed" if reason else "off", "reason": reason}
        return {"state": watcher.state if watcher.state != "stopped" else "off", "reason": watcher.reason,
                "backend": watcher.backend, "debounce_ms": DEBOUNCE_S * 1e3, "events": watcher.events,
                "batches": watcher.applied, "overflows": watcher.overflows}

    @property
    def watching(self) -> bool:
        """Whether a file watcher keeps this project fresh (its answers carry no staleness note)."""
        watcher = self._state.watcher
        return watcher is not None and watcher.watching

    def start_watching(self) -> dict:
        """Start following file changes now (idempotent; :meth:`open` does it for ``watch=True``).

        Returns :attr:`watch_status`.
        """
        self._start_watching()
        return self.watch_status

    def _start_watching(self) -> None:
        state = self._state
        with state.lock:
            if state.watcher is not None or state.status in ("refused", "closed"):
                return
            sentinel = _sentinel_dir(state)
            debounce_ms = self.debounce_ms
            progress, structure, request = self.progress, self.build_structure, self._request

            def recheck() -> None:  # events were lost: a stat check, as refresh() does
                try:
                    follow_config(state, request, start=False)
                except ConfigError as exc:
                    log.warning("codelex: %s (the previous settings stay until it is fixed)", exc)
                lifecycle.start(state, full=False, wait_for_it=True, reason=None, supersede=True,
                                progress=progress, structure=structure)

            from codelex.project.config import CONFIG_FILES, is_settings_file

            def settings(rel: str) -> bool:  # a file whose change may change what is indexed
                if not is_settings_file(rel):
                    return False
                parent = rel.rpartition("/")[0]  # a nested .gitignore counts where its directory is walked
                return rel in CONFIG_FILES or not parent or state.options.admission.admits(parent, True)

            def apply(changes) -> None:
                if changes.settings:  # first: the edits below are then admitted by the settings now in force
                    settings_changed(state, request, changes.settings, progress, structure)
                apply_changes(state, changes, debounce_ms)

            watcher = ProjectWatcher(
                state.root, lambda rel, is_dir: state.options.admission.admits(rel, is_dir), apply,
                sentinel_dir=sentinel, on_overflow=recheck, settings=settings)
            failure = watcher.start()
            if failure is None:
                state.watcher = watcher
            state.watch_failure = failure
