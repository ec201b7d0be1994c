"""The project facade: a repository whose index is kept on disk and fresh, and its queries.

Opening a :class:`Project` loads the index saved under the index directory,
stats the current files and refreshes only what changed (or rebuilds when
too much did, or when the saved index is unreadable), then saves
(:mod:`codelex.project.lifecycle`, :mod:`codelex.project.refresh`).  Opening
in the background returns at once; until an index is available,
:meth:`Project.search` answers ``available=False`` with the reason instead
of waiting.  Edits arrive through :meth:`Project.on_edit`
(:mod:`codelex.project.edits`).

``Project`` composes the root's shared state and its background jobs
(:mod:`codelex.project.state`, :mod:`codelex.project.jobs`) with the parts
that answer queries: :class:`~codelex.project.search.FileSearch` (files, the
import graph), :class:`~codelex.project.symbols.SymbolQueries` (outlines,
definitions), :class:`~codelex.project.code_search.CodeSearch` (chunks) and
:class:`~codelex.project.live.LiveFreshness` (the watcher, sync).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from codelex.lexical import WordIndex
from codelex.project import lifecycle
from codelex.project.code_search import CodeSearch
from codelex.project.edits import edit, relative_path
from codelex.project.graph_upkeep import GRAPH_WAIT_S
from codelex.project.live import LiveFreshness
from codelex.project.results import Coverage, RefreshReport
from codelex.project.roots import discover_root
from codelex.project.search import FileSearch
from codelex.project.settings import CONFIGURED, checked_root, derive, follow_config, request_of
from codelex.project.settings import Configured as _Configured
from codelex.project.state import state_for
from codelex.project.symbols import SymbolQueries

__all__ = ["Project"]

ProgressCallback = Callable[[int, int, int], object]


class Project(FileSearch, SymbolQueries, CodeSearch, LiveFreshness):
    """A repository whose index is kept on disk and fresh.

    Parameters
    ----------
    root : str or path-like
        The directory to index.
    index_dir : str or path-like, optional
        Where the index lives.  Default: ``$CODELEX_INDEX_DIR/<slug>`` when
        that variable is set, else ``<root>/.codelex`` (created with a
        ``.gitignore`` of ``*``), else a per-user cache directory when the
        root is not writable.
    max_files : int, optional
        Cap on indexed files (code files are kept first).  Default: the
        project configuration's ``max_files`` (see
        :mod:`codelex.project.config`), else no cap.
    max_bytes : int or None
        Larger files are skipped, never read.  Default: the configuration's
        ``max_bytes``, else 512 KiB; ``None``: no cap.
    progress : callable, optional
        ``progress(files_done, files_total, bytes_read)`` during builds.
    debounce_ms : float, optional
        Quiet window of the saves after :meth:`on_edit` (see
        :class:`codelex.PersistScheduler`).
    use_git : bool or None
        See :func:`codelex.ingest.list_files`.
    ignore : sequence of str
        Extra gitignore-style patterns (relative to the root), on top of the
        repository's own ignore files and the configuration's ``ignore`` and
        ``.codelexignore``.
    include : sequence of str, optional
        Gitignore-style patterns: only matching files are indexed.  Default:
        the configuration's ``include``, else every file.
    languages : sequence of str, optional
        Kinds (or short names such as ``py``, ``ts``) to index.  Default:
        the configuration's ``languages``, else every kind.
    import_graph : bool or "saved", default True
        Extract and resolve the project's import edges (:mod:`codelex.graph`)
        in the background after the index is ready, and rank a file that many
        others import a little higher (the centrality prior, ``1 + ln(1 +
        importers) / 4``, counted as :meth:`codelex.graph.ImportGraph.prior_counts`
        does) once they are known; until then, with the counts the last
        process saved beside the index, if any.  :meth:`importers` and
        :meth:`imports` answer from the graph.  ``"saved"``: rank with the
        saved counts and build no graph in the background (for one-shot
        commands, which exit before a graph would be ready); when no
        process ever saved any, the graph is built and saved at the first
        search, so its answer is the one every later one gets.  False: no
        centrality prior.
        A search given its own ``centrality`` uses that instead.
    watch : bool, default False
        Follow file changes with a file watcher (the ``watch`` extra:
        ``watchdog``) from :meth:`open` on: edits, creations, deletions and
        renames reach the index within about 20 ms (:meth:`sync` forces them).
        When the watcher cannot start, :attr:`watch_status` says why and
        freshness comes from stat checks as without it.
    build_structure : bool, default True
        After each build or refresh, analyze the changed files' structure
        (definitions and chunks) in the background, on worker processes.
        Either way, an outline, a symbol or a search hit's enclosing
        definition is read on demand when not known yet.
    Attributes
    ----------
    config : dict
        The effective settings (configuration files overridden by the
        arguments), with ``sources``: the files read.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "auth.py").write_text("def authenticate_user(name): ...")
    >>> with Project(root) as project:
    ...     project.open().status
    ...     [hit.file for hit in project.search("authenticate").results]
    'ready'
    ['auth.py']
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        index_dir: str | os.PathLike[str] | None = None,
        max_files: int | None | _Configured = CONFIGURED,
        max_bytes: int | None | _Configured = CONFIGURED,
        progress: ProgressCallback | None = None,
        debounce_ms: float | None = None,
        use_git: bool | None = None,
        ignore: Sequence[str] = (),
        include: Sequence[str] | None = None,
        languages: Sequence[str] | None = None,
        build_structure: bool = True,
        watch: bool = False,
        import_graph: bool | str = True,
    ) -> None:
        from codelex.project.config import config_signature, load_config

        resolved = checked_root(root)
        # What was asked for; the configuration fills in the rest, now and whenever it changes (reload_config).
        request = request_of(resolved, index_dir, use_git, max_files, max_bytes, ignore, include, languages)
        self.root = resolved
        self._request = request
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

    @classmethod
    def discover(cls, path: str | os.PathLike[str] = ".", **kwargs) -> Project:
        """The project that ``path`` (a directory, default the current one) belongs to.

        Its root is the nearest ancestor holding a codelex index, else the
        git work tree's root, else ``path`` (see
        :func:`codelex.project.discover_root`); keyword arguments are
        :class:`Project`'s.
        """
        return cls(discover_root(path), **kwargs)

    # --- status -------------------------------------------------------------------

    @property
    def status(self) -> str:
        """``idle``, ``building``, ``ready``, ``refused``, ``failed`` or ``closed``.

        ``building`` with an index available means a refresh is running while
        the previous index answers queries.
        """
        return self._state.status

    @property
    def config(self) -> dict:
        """The effective settings: the configuration files as last read, overridden by the arguments.

        With ``sources``, the files read.  Followed as the files change (see
        :meth:`reload_config`).
        """
        return self._state.config[1]

    @property
    def status_reason(self) -> str | None:
        """Why the project is ``refused`` or ``failed`` (None otherwise)."""
        return self._state.reason

    @property
    def index(self) -> WordIndex | None:
        """The current index (None until one is available)."""
        return self._state.index

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
        state = self._state
        return Coverage(len(state.index) if state.index is not None else 0, state.truncated)

    @property
    def index_dir(self) -> Path:
        """Where the index is (or will be) saved; with no usable location, the per-user one that was refused
        (``check()["unreadable_dirs"]`` says why)."""
        state = self._state
        preferred = state.preferred_dir()
        if preferred is not None:
            return preferred
        from codelex.persist.layout import root_slug, user_cache_dir

        return user_cache_dir() / root_slug(state.root)

    # --- opening ------------------------------------------------------------------

    def open(self, wait: bool = True) -> Project:
        """Load, refresh and save the index; in the background when ``wait`` is False.

        With ``wait=True`` this returns once the index is ready (or the build
        was refused or failed: see :attr:`status`).  With ``wait=False`` a
        saved index is loaded at once (memory-mapped) and answers queries
        while it is refreshed in the background; without one, the build runs
        in the background.  A build already running for this root is joined,
        not repeated.
        """
        self._follow_config(start=False)  # the build below lists with the settings as they are now
        if self.watch:  # before the build lists the tree: no edit falls between the listing and the watch
            self.start_watching()
        if not wait:
            lifecycle.adopt_saved(self._state)
        lifecycle.start(self._state, full=False, wait_for_it=wait, reason=None, progress=self.progress,
                        structure=self.build_structure)
        if wait:
            self._await_graph()
        return self

    def rebuild(self, wait: bool = True) -> Project:
        """Build from scratch, superseding any running build."""
        self._follow_config(start=False)
        lifecycle.start(self._state, full=True, wait_for_it=wait, reason="requested", supersede=True,
                        progress=self.progress, structure=self.build_structure)
        if wait:
            self._await_graph()
        return self

    def refresh(self) -> RefreshReport | None:
        """Bring the index in line with the files on disk, and with the configuration files, now (synchronously)."""
        self._follow_config(start=False)
        lifecycle.start(self._state, full=False, wait_for_it=True, reason=None, supersede=True,
                        progress=self.progress, structure=self.build_structure)
        self._await_graph()
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
        self._follow_config(start=False)  # the build lists with the settings as they are now
        if self.watch:
            self.start_watching()
        if not full:
            lifecycle.adopt_saved(self._state)  # (a saved index answers while it is refreshed)
        state = self._state
        with state.lock:  # (re-entrant: start() takes it too) no other build can begin between the check and it
            if state.status == "building":
                return False
            lifecycle.start(state, full=full, wait_for_it=False, reason="requested" if full else None,
                            supersede=full, progress=progress or self.progress, structure=self.build_structure)
            return state.status == "building"

    def _await_graph(self, timeout: float = GRAPH_WAIT_S) -> None:
        """The import graph's prior changes rankings: after a waited-for build, wait for it too (within
        :data:`GRAPH_WAIT_S`), so the next query ranks as every later one does."""
        state = self._state
        if self.import_graph is True and state.index is not None:
            state.imports.wait(state, max(0.0, min(timeout, GRAPH_WAIT_S)))

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build, then for the import graph its ranking uses (so the next query ranks as
        every later one does: the server's first answer is a one-shot's); True when no build is running."""
        start = time.monotonic()
        done = lifecycle.wait(self._state, timeout)
        if done:
            self._await_graph(GRAPH_WAIT_S if timeout is None else timeout - (time.monotonic() - start))
        return done

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
        changed = self._follow_config(start=True, wait=wait)
        if wait:
            lifecycle.wait(self._state)  # (also a re-listing a watcher started for the same change)
        return changed

    def _follow_config(self, *, start: bool, wait: bool = False) -> bool:
        return follow_config(self._state, self._request, start=start, wait=wait, progress=self.progress,
                             structure=self.build_structure)

    # --- freshness -----------------------------------------------------------------

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
        self._follow_config(start=False)
        return lifecycle.check(self._state, self.index_dir, self.config)

    def reload_if_changed(self) -> bool:
        """Adopt an index that another process saved since this one last read or wrote it.

        Cheap when nothing changed (one ``stat``).  Returns True when a newer
        index was loaded and published.
        """
        return lifecycle.reload_if_changed(self._state)


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

    # --- shutdown -------------------------------------------------------------------

    def close(self) -> None:
        """Cancel a running build (it never publishes), flush a pending save, release the root."""
        lifecycle.close(self._state)

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Project {self.root} status={self.status} files={self.coverage.files}>"
