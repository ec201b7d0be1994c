"""The word index service of one root: its index kept fresh by builds, edits and the file watcher.

:class:`IndexService` owns what a root's index is (the shared
:class:`~codelex.project.state.RootState`, one per root and request: the
build job, the published index, the saver) and is the one door the query
classes (:mod:`codelex.project.search`, :mod:`~codelex.project.symbols`,
:mod:`~codelex.project.code_search`) go through: they ask it for the
current index, the stage services built beside it (:attr:`structure`,
:attr:`graph`, :attr:`chunks`) and their readiness, and never read the
root's state themselves.  Its implementation is the stage modules
:mod:`~codelex.project.lifecycle` (builds), :mod:`~codelex.project.refresh`,
:mod:`~codelex.project.edits`, :mod:`~codelex.project.settings` and
:mod:`~codelex.project.watch`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from codelex.defaults import DOCS_WAIT_S
from codelex.errors import ConfigError
from codelex.lexical import WordIndex
from codelex.project import lifecycle
from codelex.project.code import CodeUpkeep
from codelex.project.edits import apply_changes, edit, relative_path
from codelex.project.graph_upkeep import GRAPH_WAIT_S, GraphUpkeep
from codelex.project.results import HINTS, Coverage, RefreshReport
from codelex.project.settings import checked_root, derive, follow_config, request_of, settings_changed
from codelex.project.state import RootOptions, state_for
from codelex.project.structure import StructureUpkeep
from codelex.project.watch import DEBOUNCE_S, ProjectWatcher

__all__ = ["IndexService", "ProgressCallback"]

log = logging.getLogger("codelex")

ProgressCallback = Callable[[int, int, int], object]


class IndexService:
    """A root's word index, kept fresh, and the stage services beside it (see the module's docstring).

    The parameters are :class:`codelex.Project`'s, which documents them.
    """

    def __init__(self, root, *, index_dir=None, max_files, max_bytes, progress: ProgressCallback | None = None,
                 debounce_ms: float | None = None, use_git: bool | None = None, ignore=(), include=None,
                 languages=None, build_structure: bool = True, watch: bool = False,
                 import_graph: bool | str = True) -> None:
        from codelex.project.config import config_signature, load_config

        resolved = checked_root(root)
        # What was asked for; the configuration fills in the rest, now and whenever it changes (reload_config).
        request = request_of(resolved, index_dir, use_git, max_files, max_bytes, ignore, include, languages)
        self.root = resolved
        self.request = request
        signature = config_signature(resolved)
        config = load_config(resolved)  # ConfigError for a bad file
        options, effective = derive(request, config)
        self._state = state_for(options, key=request)
        with self._state.lock:
            if self._state.config is None:
                self._state.config = (signature, effective)
        self.progress = progress
        self.debounce_ms = debounce_ms
        self.build_structure = bool(build_structure)
        self.watch = bool(watch)
        if import_graph not in (True, False, "saved"):
            raise ValueError(f"import_graph must be True, False or 'saved', not {import_graph!r}")
        self.import_graph = import_graph
        if self.import_graph is True:
            self._state.imports.wanted = True

    # --- what it holds ---------------------------------------------------------------

    @property
    def index(self) -> WordIndex | None:
        """The index published last (None until one is available)."""
        return self._state.index

    def edits_held(self):
        """A context in which no edit or refresh changes the index (they wait: hold it only as long as a
        query).  Edits take this lock first, so a reader holding it holds no other lock they wait for."""
        return self._state.edit_lock

    def published(self) -> tuple[WordIndex | None, int]:
        """``(index, number)``: the index published last, read with its publication number (a generation's
        first part: see :func:`codelex.project.results.generation_id`)."""
        return self._state.published()

    @property
    def status(self) -> str:
        """``idle``, ``building``, ``ready``, ``refused``, ``failed`` or ``closed``.

        ``building`` with an index available means a refresh is running while
        the previous index answers queries.
        """
        return self._state.status

    @property
    def status_reason(self) -> str | None:
        """Why the project is ``refused`` or ``failed`` (None otherwise)."""
        return self._state.reason

    @property
    def config(self) -> dict:
        """The effective settings: the configuration files as last read, overridden by the arguments.

        With ``sources``, the files read.  Followed as the files change (see
        :meth:`reload_config`).
        """
        return self._state.config[1]

    @property
    def options(self) -> RootOptions:
        """What the index is built with now (the configuration files' settings, followed as they change)."""
        return self._state.options

    @property
    def last_report(self) -> RefreshReport | None:
        """What the last open, refresh or rebuild did."""
        return self._state.report

    @property
    def generated_at(self) -> float | None:
        """Unix time at which the index was last built or refreshed."""
        return self._state.generated_at

    @property
    def coverage(self) -> Coverage:
        """How many files the index holds, and whether ``max_files`` cut the tree."""
        state = self._state
        with state.lock:
            return Coverage(len(state.index) if state.index is not None else 0, state.truncated)

    @property
    def structure(self) -> StructureUpkeep:
        """The structure service: definitions and chunks per file, in the structure store, and its job."""
        return self._state.structure

    @property
    def graph(self) -> GraphUpkeep:
        """The import graph service: the graph, its job and its saved counts."""
        return self._state.imports

    @property
    def chunks(self) -> CodeUpkeep:
        """The chunks and embeddings service: the chunk corpus, model loads and the background embedding."""
        return self._state.code

    def structure_dir(self) -> Path | None:
        """Where the structure store is (None: saved nowhere yet)."""
        return self._state.structure_dir()

    def writable_dir(self) -> Path:
        """Where this root's files are saved."""
        return self._state.writable_dir()

    @property
    def index_dir(self) -> Path:
        """Where the index is (or will be) saved; with no usable location, the per-user one that was refused
        (``check()["unreadable_dirs"]`` says why)."""
        preferred = self._state.preferred_dir()
        if preferred is not None:
            return preferred
        from codelex.persist.layout import root_slug, user_cache_dir

        return user_cache_dir() / root_slug(self.root)

    # --- builds ----------------------------------------------------------------------

    def follow_config(self, *, start: bool, wait: bool = False) -> bool:
        """Adopt the configuration files as they are now (see :func:`codelex.project.settings.follow_config`)."""
        return follow_config(self._state, self.request, start=start, wait=wait, progress=self.progress,
                             structure=self.build_structure)

    def open(self, wait: bool = True) -> None:
        """Load, refresh and save the index; in the background when ``wait`` is False.

        With ``wait=True`` this returns once the index is ready (or the build
        was refused or failed: see :attr:`status`).  With ``wait=False`` a
        saved index is loaded at once (memory-mapped) and answers queries
        while it is refreshed in the background; without one, the build runs
        in the background.  A build already running for this root is joined,
        not repeated.
        """
        self.follow_config(start=False)  # the build below lists with the settings as they are now
        if self.watch:  # before the build lists the tree: no edit falls between the listing and the watch
            self.start_watching()
        if not wait:
            lifecycle.adopt_saved(self._state)
        self.start(wait=wait)
        if wait:
            self.await_graph()

    def rebuild(self, wait: bool = True) -> None:
        """Build from scratch, superseding any running build."""
        self.follow_config(start=False)
        self.start(full=True, wait=wait, reason="requested", supersede=True)
        if wait:
            self.await_graph()

    def refresh(self) -> RefreshReport | None:
        """Bring the index in line with the files on disk, and with the configuration files, now (synchronously)."""
        self.follow_config(start=False)
        self.start(wait=True, supersede=True)
        self.await_graph()
        return self._state.report

    def refresh_in_background(self, full: bool = False, progress: ProgressCallback | None = None) -> bool:
        """Start bringing the index in line with the files on disk in the background, unless a build runs.

        The tree is listed again and the files added, changed or removed
        since the index was made are applied (as :meth:`refresh` does, or
        from scratch as :meth:`rebuild` with ``full``), on the root's build
        thread; this returns at once.  A build already running for this root
        (an open, a refresh, a re-listing after a configuration change) is
        neither repeated nor superseded: one runs at a time.  Follow it with
        :meth:`wait` and :attr:`last_report`.

        Parameters
        ----------
        full : bool, default False
            Rebuild from scratch (reason ``requested``) instead of refreshing
            what changed.
        progress : callable, optional
            ``progress(files_done, files_total, bytes_read)`` while files are
            read, for this build only (default: the project's ``progress``).

        Returns
        -------
        bool
            True when this call started a build; False when one was already
            running, or the root is refused (:attr:`status` says which).

        Raises
        ------
        RuntimeError
            When the project is closed.
        codelex.ConfigError
            When a configuration file is invalid.
        """
        self.follow_config(start=False)  # the build lists with the settings as they are now
        if self.watch:
            self.start_watching()
        if not full:
            lifecycle.adopt_saved(self._state)  # (a saved index answers while it is refreshed)
        state = self._state
        with state.lock:  # (re-entrant: start() takes it too) no other build can begin between the check and it
            if state.status == "building":
                return False
            self.start(full=full, wait=False, reason="requested" if full else None, supersede=full,
                       progress=progress)
            return state.status == "building"

    def reload_config(self, wait: bool = True) -> bool:
        """Adopt the configuration files as they are now, when they changed since they were read.

        Their settings (``ignore``, ``include``, ``languages``,
        ``max_bytes``, ``max_files``, ``.codelexignore``) decide which files
        are indexed: when that changed, the tree is listed again (a refresh),
        so newly ignored files leave the index and newly admitted ones enter.
        Arguments given to the constructor still override the files.
        :meth:`search`, :meth:`code_search`, :meth:`open`, :meth:`refresh`
        and :meth:`sync` call this first (a search without waiting), and a
        watched project follows these files, and every ``.gitignore``, as
        they change.  Cheap when nothing changed (an ``lstat`` per file).

        Parameters
        ----------
        wait : bool, default True
            Return once the index reflects the settings (a running build
            waited for); False: the refresh runs in the background.

        Returns
        -------
        bool
            True when the settings changed which files are indexed.

        Raises
        ------
        codelex.ConfigError
            When a configuration file is now invalid (one line naming the
            file and the key); the project keeps its previous settings until
            it is fixed.
        """
        changed = self.follow_config(start=True, wait=wait)
        if wait:
            lifecycle.wait(self._state)  # (also a re-listing a watcher started for the same change)
        return changed

    def start(self, *, full: bool = False, wait: bool, reason: str | None = None, supersede: bool = False,
              progress: ProgressCallback | None = None) -> None:
        """Start a build of the index (joined when one runs, unless ``supersede``); waited for with ``wait``."""
        lifecycle.start(self._state, full=full, wait_for_it=wait, reason=reason, supersede=supersede,
                        progress=progress or self.progress, structure=self.build_structure)

    def adopt_saved(self) -> None:
        """Publish the saved index at once (memory-mapped), if there is one, while a build refreshes it."""
        lifecycle.adopt_saved(self._state)

    def available_index(self) -> tuple[WordIndex | None, str | None, str | None]:
        """``(index, None, None)`` when one is published, else ``(None, why, hint)`` (``why`` a reason of
        :data:`~codelex.project.results.HINTS`), a build started when one should be: a query never waits."""
        index = self.index
        if index is not None:
            return index, None, None
        why, reason, start = self.availability()
        if start:
            self.open(wait=False)
        return None, why, HINTS[why].format(reason=reason)

    def availability(self) -> tuple[str, str | None, bool]:
        """Why no index answers yet: see :func:`codelex.project.lifecycle.availability`."""
        return lifecycle.availability(self._state)

    def wait_build(self, timeout: float | None = None) -> bool:
        """Wait for a running build (not for the graph); True when none is running (any more)."""
        return lifecycle.wait(self._state, timeout)

    def wait_build_until(self, ready: Callable[[], bool], timeout: float | None) -> bool:
        """Wait until ``ready()``, asked whenever a build begins or ends (see :meth:`Job.wait_until`)."""
        return self._state.build.wait_until(ready, timeout)

    def await_graph(self, timeout: float = GRAPH_WAIT_S) -> None:
        """The import graph's prior changes rankings: after a waited-for build, wait for it too (within
        :data:`GRAPH_WAIT_S`), so the next query ranks as every later one does."""
        state = self._state
        if self.import_graph is True and state.index is not None:
            state.imports.wait(state, max(0.0, min(timeout, GRAPH_WAIT_S)))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a build, then for the import graph its ranking uses (see :meth:`codelex.Project.wait`)."""
        start = time.monotonic()
        done = lifecycle.wait(self._state, timeout)
        if done:
            self.await_graph(GRAPH_WAIT_S if timeout is None else timeout - (time.monotonic() - start))
        return done

    def drop_corrupt(self, index: WordIndex, exc: Exception) -> None:
        """A chunk of ``index`` failed its digest: drop it (unless already replaced) and rebuild in the background."""
        state = self._state
        log.warning("codelex: the index of %s is corrupt (%s); rebuilding it", state.root, exc)
        with state.lock:
            if state.index is not index:
                return  # already replaced
            state.index = None
        self.start(full=True, wait=False, reason="corrupt-index", supersede=True)

    def check(self) -> dict:
        """Compare the index with the files on disk, changing nothing.

        Returns
        -------
        dict
            ``indexed`` (files in the index; None without one), ``stale``,
            ``added`` and ``removed`` (file counts an open would refresh),
            ``index_dir``, ``generated_at``, ``index_bytes`` (on disk),
            ``unreadable_dirs`` (candidate index locations that could not be
            examined, with the reason), ``config`` (:attr:`config`) and
            ``skipped``: the files every rule but their size or content
            admits, with why the index leaves them out (``over max_bytes
            524288 (600,000 bytes)``, ``binary content``...).
        """
        self.follow_config(start=False)
        return lifecycle.check(self._state, self.index_dir, self.config)

    def reload_if_changed(self) -> bool:
        """Adopt an index that another process saved since this one last read or wrote it.

        Cheap when nothing changed (one ``stat``).  Returns True when a newer
        index was loaded and published.
        """
        return lifecycle.reload_if_changed(self._state)

    def close(self) -> None:
        """Cancel a running build (it never publishes), flush a pending save, release the root."""
        lifecycle.close(self._state)

    # --- the import graph's prior ----------------------------------------------------

    def graph_prior(self, mode) -> tuple[object, bool]:
        """``(counts, exact)`` a search ranks with now (see :meth:`GraphUpkeep.prior`)."""
        return self._state.imports.prior(self._state, mode)

    def ensure_graph(self) -> None:
        """Start the import graph's build in the background when it is needed and not there."""
        self._state.imports.ensure(self._state)

    def wait_graph(self, timeout: float | None):
        """The import graph, waited for at most ``timeout`` s (None while it builds)."""
        return self._state.imports.wait(self._state, timeout)

    # --- the documentation's sections ---------------------------------------------------

    def docs(self, timeout: float | None = DOCS_WAIT_S):
        """The root's documentation sections (a :class:`codelex.docs.DocsIndex`) as the files are now.

        The first call starts reading them in the background (the root's
        documentation admission: its ignore and include patterns, size cap
        and ``use_git``) and waits for it at most ``timeout`` seconds; later
        ones apply the edits the watcher (or :meth:`on_edit`) reported since,
        parsing those files alone, or, unwatched, check the files against
        the disk every :data:`~codelex.defaults.DOCS_TTL_S` seconds.

        Raises
        ------
        codelex.ConfigError
            When a configuration file is invalid.
        TimeoutError
            When the first reading did not finish within ``timeout``.
        OSError
            When reading failed (the next call tries again).
        """
        self.follow_config(start=True)
        if self.watch and not self.watching:
            self.start_watching()  # (a watched project's docs follow its edits, whether or not it was opened)
        return self._state.docs.current(watched=self.watching, timeout=timeout)

    @property
    def docs_status(self) -> dict:
        """The documentation stage's job state, generation (``version``) and, once read, files and sections."""
        return self._state.docs.status()

    # --- edits and the watcher -------------------------------------------------------

    def on_edit(self, path: str | os.PathLike[str], content: str | bytes | None = None) -> bool:
        """Bring one file up to date after an edit, then schedule a debounced save.

        Parameters
        ----------
        path : str or path-like
            Absolute, or relative to the root.
        content : str or bytes, optional
            The new content; read from disk when omitted (a file that no
            longer exists, or is no longer admissible, is removed).

        Returns
        -------
        bool
            True when the file is indexed after the call.

        Raises
        ------
        ValueError
            When ``path`` is outside the root or contains NUL.
        TypeError
            When ``content`` is neither str, bytes nor None.
        """
        if content is not None and not isinstance(content, (str, bytes)):
            raise TypeError(f"content must be str, bytes or None, not {type(content).__name__}")
        return edit(self._state, relative_path(self.root, path), content, self.debounce_ms)

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
            self.follow_config(start=True, wait=True)
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
        state = self._state
        with state.lock:
            if state.watcher is None and state.status not in ("refused", "closed"):
                watcher = self._watcher()
                failure = watcher.start()
                if failure is None:
                    state.watcher = watcher
                state.watch_failure = failure
        return self.watch_status

    def apply_changes(self, changes) -> None:
        """Apply a watcher's batch (:class:`codelex.project.watch.Changes`): the settings files first (the edits
        are then admitted by the settings in force), then every edit, creation, deletion and new directory."""
        if changes.settings:
            settings_changed(self._state, self.request, changes.settings, self.progress, self.build_structure)
        apply_changes(self._state, changes, self.debounce_ms)

    def _watcher(self) -> ProjectWatcher:
        """A watcher of the root whose batches reach per-edit upkeep and the configuration (not started)."""
        state = self._state
        progress, structure, request = self.progress, self.build_structure, self.request

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

        def admitted(rel: str, is_dir: bool) -> bool:  # by the word index's admission or the documentation's
            options = state.options
            return options.admission.admits(rel, is_dir) or options.documentation.admits(rel, is_dir)

        return ProjectWatcher(state.root, admitted,
                              self.apply_changes,
                              sentinel_dir=self._sentinel_dir(), on_overflow=recheck, settings=settings)

    def _sentinel_dir(self) -> Path | None:
        """The index directory when it lies under the root and exists (the watcher's sync sentinel goes there)."""
        from codelex.persist.layout import prepare_local_dir

        state = self._state
        for directory in state.candidate_dirs():
            try:
                directory.relative_to(state.root)
            except ValueError:
                continue
            if directory.is_dir() or (directory == state.preferred_dir() and prepare_local_dir(directory)):
                return directory
        return None
