"""The project facade: a repository whose index is kept on disk and fresh, and its queries.

Opening a :class:`Project` loads the index saved under the index directory,
stats the current files and refreshes only what changed (or rebuilds when
too much did, or when the saved index is unreadable), then saves
(:mod:`codelex.project.lifecycle`, :mod:`codelex.project.refresh`).  Opening
in the background returns at once; until an index is available,
:meth:`Project.search` answers ``available=False`` with the reason instead
of waiting.  Edits arrive through :meth:`Project.on_edit`
(:mod:`codelex.project.edits`).
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from codelex.defaults import (
    CHUNK_SEARCH_BUILD_FILES,
    DEFAULT_EMBED_LIMIT,
    DEFAULT_FUSION,
    DEFAULT_MAX_BYTES,
    EMBEDDER_ENV,
    STRUCTURE_FILE,
)
from codelex.errors import ConfigError, IndexFormatError
from codelex.ingest import list_files
from codelex.lexical import WordIndex
from codelex.persist.layout import probe_index
from codelex.project import lifecycle
from codelex.ingest.ignore import GitignoreOracle
from codelex.project.edits import apply_changes, edit, relative_path, watch_admits
from codelex.project.watch import DEBOUNCE_S, ProjectWatcher
from codelex.project.refresh import diff
from codelex.project.results import HINTS, CodeResult, Coverage, RefreshReport, SearchResult
from codelex.project.roots import discover_root, refusal_reason
from codelex.project.state import RootOptions, state_for
from codelex.project.symbols import Outline, SymbolSource, find_definition, outline_of
from codelex.query.options import SearchOptions, parse_request

log = logging.getLogger("codelex")

__all__ = ["Project"]

#: Longest a waited-for open, rebuild or refresh waits for the import graph that follows it.
GRAPH_WAIT_S = 120.0

#: While a project's chunks are prepared, code_search ranks the chunks of this many of the word index's
#: best files for the query (twice its limit when that is more): a few files' analyses, not the tree's.
EARLY_FILES = 16


def _within_budget(result, total_lines: int | None, limit: int = 0, excerpt_lines: int = 0) -> CodeResult:
    """``result``, whose hits were picked with no shared line budget, cut to ``total_lines`` as the original's
    selection cuts them (:func:`codelex.rank.original.fit_budget`), saying how many results the budget left out.

    Picking first and cutting after is what lets the answer count what the budget left out: the seed's
    ``select_from`` stops at the budget and cannot tell.  The hits are the seed's either way.
    """
    from codelex.rank.original import fit_budget

    fields = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    if total_lines is None:
        return CodeResult(**fields)
    fields["hits"], fields["omitted"] = fit_budget(result.hits, total_lines)
    fields["line_budget"] = total_lines
    return CodeResult(**fields)


def _unbounded(limit: int, excerpt_lines: int) -> int:
    """A shared budget that never binds: ``limit`` excerpts of at most ``excerpt_lines`` lines each fit in it."""
    return limit * excerpt_lines


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

ProgressCallback = Callable[[int, int, int], object]


class _Request(NamedTuple):
    """What a :class:`Project` was asked for; :data:`CONFIGURED` (or None) where the configuration decides.

    Handles of one request share a root's state, whose options follow the
    configuration files (:func:`_settings`).
    """

    root: Path
    index_dir: Path | None
    use_git: bool | None
    max_files: object  # int, None or CONFIGURED
    max_bytes: object
    ignore: tuple[str, ...]  # added to the configuration's
    include: tuple[str, ...] | None  # None: the configuration's
    kinds: tuple[str, ...] | None  # None: the configuration's languages


def _settings(request: _Request, config: dict) -> tuple[RootOptions, dict]:
    """The options a root is indexed with, and the effective settings, from the request and the configuration."""
    max_files = config.get("max_files") if request.max_files is CONFIGURED else request.max_files
    max_bytes = config.get("max_bytes", DEFAULT_MAX_BYTES) if request.max_bytes is CONFIGURED else request.max_bytes
    patterns = tuple(config.get("ignore", ())) + request.ignore
    included = request.include if request.include is not None else tuple(config.get("include", ()))
    kinds = request.kinds
    if kinds is None and "languages" in config:
        kinds = tuple(config["languages"])
    effective = dict(config, ignore=list(patterns), include=list(included), max_bytes=max_bytes,
                     max_files=max_files, languages=list(kinds) if kinds is not None else None)
    options = RootOptions(request.root, request.index_dir, max_files, max_bytes, request.use_git, patterns, included,
                          kinds)
    return options, effective


def _follow_config(state, request: _Request, *, start: bool, wait: bool = False,
                   progress: ProgressCallback | None = None, structure: bool = True) -> bool:
    """Adopt the configuration files when they changed since ``state``'s options were derived from them.

    Cheap when they did not (an ``lstat`` per file).  When the options
    changed (which files are indexed) and ``start``, the tree is listed
    again: a refresh, waited for when ``wait``.  Returns whether the options
    changed; raises ConfigError for a broken file (the options held stay).
    """
    from codelex.project.config import config_signature, load_config

    signature = config_signature(state.root)
    held = state.config
    if held is not None and held[0] == signature:
        return False
    options, effective = _settings(request, load_config(state.root))
    with state.lock:
        state.config = (signature, effective)
        changed = options != state.options
        if changed:
            state.options = options
            state.structure.max_bytes = state.code.max_bytes = options.max_bytes
        status = state.status
    if changed and start and status not in ("idle", "refused", "closed"):
        # A refresh of the index held: files now left out are removed, files now admitted are read.
        lifecycle.start(state, full=False, wait_for_it=wait, reason=None, supersede=True, progress=progress,
                        structure=structure)
    return changed


def _settings_changed(state, request: _Request, paths: set[str], progress: ProgressCallback | None,
                      structure: bool) -> None:
    """A watcher saw configuration or ignore files change (on its thread): follow them, list the tree again."""
    try:
        changed = _follow_config(state, request, start=True, wait=True, progress=progress, structure=structure)
    except ConfigError as exc:  # the next request through the project reports it
        log.warning("codelex: %s (the previous settings stay until it is fixed)", exc)
        return
    if not changed and any(p.rsplit("/", 1)[-1] == ".gitignore" for p in paths):
        # The walk's (or git's) own rules changed: the listing may differ.
        lifecycle.start(state, full=False, wait_for_it=True, reason=None, supersede=True, progress=progress,
                        structure=structure)


class _Configured:
    """The default of the settings a project's configuration files may give (:mod:`codelex.project.config`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<from the project's configuration>"


#: Stands for "as the project's configuration says, else the built-in default".
CONFIGURED = _Configured()


def _strings(values, what: str) -> tuple[str, ...]:
    out = (values,) if isinstance(values, str) else tuple(values)
    if any(not isinstance(v, str) for v in out):
        raise TypeError(f"{what} must be str")
    return out


class Project:
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
        saved counts only and build no graph (for one-shot commands, which
        exit before a graph would be ready).  False: no centrality prior.
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
    chunk_ranking : {"auto", "small", "build", "background", "off"}, default "auto"
        :meth:`search` ranks files by their best chunk (the ranking
        pipeline, :mod:`codelex.rank.pipeline`) once the structure is
        complete and the chunks are indexed; until then, through the same
        stages at file granularity.  ``"build"`` indexes the chunks on the
        first search that needs them; ``"background"`` indexes them in the
        background; ``"auto"``: ``build`` for a project of at most
        :data:`~codelex.defaults.CHUNK_SEARCH_BUILD_FILES` files, else
        ``background``; ``"small"`` (one-shot commands, which exit before a
        background build would finish): ``build`` for a small project,
        else file granularity; ``"off"``: always file granularity.

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
        chunk_ranking: str = "auto",
    ) -> None:
        resolved = Path(root).expanduser().resolve()
        if not resolved.is_dir():
            raise NotADirectoryError(f"not a directory: {root}")
        try:  # before its configuration: an unreadable root is the problem, not its pyproject.toml
            os.scandir(resolved).close()
        except OSError as exc:
            raise PermissionError(f"cannot read the project directory {resolved}: {exc.strerror or exc}") from None
        from codelex.project.config import check_patterns, config_signature, load_config

        for name, value in (("max_files", max_files), ("max_bytes", max_bytes)):
            if value is not CONFIGURED and value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                                                  or value < 0):
                raise ValueError(f"{name} must be a non-negative int or None, not {value!r}")
        ignored = _strings(ignore, "ignore patterns")
        check_patterns(ignored, "ignore")
        included = _strings(include, "include patterns") if include is not None else None
        check_patterns(included or (), "include")
        kinds: tuple[str, ...] | None = None
        if languages is not None:
            from codelex.query.parse import resolve_kind

            kinds = tuple(sorted({resolve_kind(k, inline=False) for k in _strings(languages, "languages")}))
        self.root = resolved
        explicit = Path(index_dir).expanduser().resolve() if index_dir is not None else None
        # What was asked for; the configuration fills in the rest, now and whenever it changes (reload_config).
        self._request = _Request(resolved, explicit, use_git, max_files, max_bytes, ignored, included, kinds)
        signature = config_signature(resolved)
        config = load_config(resolved)  # ConfigError for a bad file
        options, effective = _settings(self._request, config)
        self._state = state_for(options, key=self._request)
        with self._state.lock:
            if self._state.config is None:
                self._state.config = (signature, effective)
        self.progress = progress
        self.debounce_ms = debounce_ms
        self.build_structure = bool(build_structure)
        if chunk_ranking not in ("auto", "small", "build", "background", "off"):
            raise ValueError(f"chunk_ranking must be auto, small, build, background or off, not {chunk_ranking!r}")
        self.chunk_ranking = chunk_ranking
        self._names_cache = None  # (structure store, its version, path -> defined names)
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
            self._start_watching()
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

    def _await_graph(self) -> None:
        """The import graph's prior changes rankings: after a waited-for build, wait for it too (within
        :data:`GRAPH_WAIT_S`), so the next query ranks as every later one does."""
        state = self._state
        if self.import_graph is True and state.index is not None:
            state.imports.wait(state, GRAPH_WAIT_S)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a background build; True when none is running (any more)."""
        return lifecycle.wait(self._state, timeout)

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
        return _follow_config(self._state, self._request, start=start, wait=wait, progress=self.progress,
                              structure=self.build_structure)

    # --- freshness -----------------------------------------------------------------

    def check(self) -> dict:
        """Compare the index with the files on disk, changing nothing.

        Returns
        -------
        dict
            ``indexed`` (files in the index; None without one), ``stale``,
            ``added`` and ``removed`` (file counts an open would refresh),
            ``index_dir``, ``generated_at``, ``index_bytes`` (on disk), and
            ``unreadable_dirs`` (candidate index locations that could not be
            examined, with the reason) and ``config`` (:attr:`config`).
        """
        self._follow_config(start=False)
        state = self._state
        index = state.index
        directory = state.saved_dir
        if index is None:
            index, _ = lifecycle.load_saved(state)
            directory = state.saved_dir
        out: dict = {"index_dir": str(directory or self.index_dir), "indexed": None, "stale": None, "added": None,
                     "removed": None, "generated_at": None, "index_bytes": None,
                     "unreadable_dirs": dict(state.unreadable_dirs), "config": dict(self.config)}
        if directory is not None:
            found, _ = probe_index(directory)
            if found is not None:
                out["index_bytes"] = found.st_size
        if index is None:
            return out
        opts = state.options
        walk = list_files(state.root, max_bytes=opts.max_bytes, max_files=opts.max_files, use_git=opts.use_git,
                          ignore=opts.ignore, include=opts.include, kinds=opts.kinds)
        added, removed, stale = diff(index, {f.path: f for f in walk.files})
        out.update(indexed=len(index), stale=len(stale), added=len(added), removed=len(removed),
                   generated_at=index.metadata.get("generated_at"))
        return out

    def reload_if_changed(self) -> bool:
        """Adopt an index that another process saved since this one last read or wrote it.

        Cheap when nothing changed (one ``stat``).  Returns True when a newer
        index was loaded and published.
        """
        return lifecycle.reload_if_changed(self._state)

    # --- queries --------------------------------------------------------------------

    def search(self, query: str, options: SearchOptions | None = None, **kwargs) -> SearchResult:
        """Rank files for ``query`` without ever waiting for a build.

        Parameters are those of :meth:`codelex.WordIndex.search`.  When no
        index is available the result says why; a refused root answers
        ``refused`` from the first call and never starts a build; after a
        failed build the same call starts a retry in the background.

        Raises
        ------
        TypeError, codelex.QueryError
            As :meth:`codelex.WordIndex.search` does, also while unavailable.
        codelex.ConfigError
            When a configuration file changed and is now invalid (see
            :meth:`reload_config`; a valid change starts a re-listing in the
            background and this answer comes from the index held).
        """
        state = self._state
        _, opts = parse_request(query, options, kwargs)  # a malformed request raises, available or not
        self._follow_config(start=True)
        index = state.index
        start_graph = False
        if index is not None and self.import_graph and opts.centrality is None and "centrality" not in kwargs:
            # The graph's counts, else (until this process's graph is ready) the ones the last one saved, if any.
            prior = state.imports.centrality(state, saved_only=self.import_graph is not True)
            if prior is not None:
                opts = dataclasses.replace(opts, centrality=prior)
            start_graph = self.import_graph is True and not state.imports.ready  # after this answer: it would
            # compete with it
        if start_graph:
            try:
                return self._search_index(state, index, query, opts)
            finally:
                state.imports.ensure(state)
        if index is not None:
            return self._search_index(state, index, query, opts)
        with state.lock:
            status, reason = state.status, state.reason
            if status == "idle":
                refused = refusal_reason(state.root)
                if refused is not None:
                    state.status, state.reason = status, reason = "refused", refused
        if status == "refused":
            why = "refused"
        elif status == "failed":
            why = "last-build-failed"
            self.open(wait=False)
        else:
            why = "building"
            if status == "idle":
                self.open(wait=False)
        return SearchResult(False, query, [], Coverage(0, False), None, why, HINTS[why].format(reason=reason))

    def _drop_corrupt(self, index: WordIndex, exc: Exception) -> None:
        state = self._state
        log.warning("codelex: the index of %s is corrupt (%s); rebuilding it", state.root, exc)
        with state.lock:
            if state.index is not index:
                return  # already replaced
            state.index = None
        lifecycle.start(state, full=True, wait_for_it=False, reason="corrupt-index", supersede=True,
                        progress=self.progress, structure=self.build_structure)

    def _with_symbols(self, hits: list) -> list:
        """Each hit named by the definition that encloses its best line (``end_line`` becomes its end)."""
        upkeep = self._state.structure
        upkeep.load(self._structure_dir())
        out = []
        for hit in hits:
            structure = upkeep.structure(hit.file)
            found = structure.enclosing(hit.start_line) if structure is not None else None
            out.append(hit.with_symbol(found.qualified_name, found.end_line) if found is not None else hit)
        return out

    # --- structure --------------------------------------------------------------------

    def _structure_dir(self) -> Path | None:
        state = self._state
        if state.saved_dir is not None:
            return state.saved_dir
        for directory in state.candidate_dirs():
            if probe_index(directory)[0] is not None or probe_index(directory, STRUCTURE_FILE)[0] is not None:
                return directory
        return None

    def _structure(self, path: str | os.PathLike[str]):
        """``(rel, structure, content)`` of a file named from outside: contained, and read once, safely.

        The file is read through :mod:`codelex.safefs` before any structure
        (perhaps cached for that path) is consulted, so a path through a
        symbolic link or naming a FIFO is refused whatever the store holds.
        """
        from codelex.safefs import NotRegularFileError, read_bytes

        rel = relative_path(self.root, path)
        max_bytes = self._state.options.max_bytes
        try:
            content, _ = read_bytes(self.root, rel, max_bytes)
        except FileNotFoundError:
            raise FileNotFoundError(f"no such file in {self.root}: {rel}") from None
        except (NotRegularFileError, IsADirectoryError):
            raise ValueError(f"cannot read {rel}: not a regular file") from None
        except OSError as exc:
            raise ValueError(f"cannot read {rel}: {exc.strerror or exc}") from None
        if max_bytes is not None and len(content) > max_bytes:
            raise ValueError(f"cannot read the structure of {rel}: too-large")
        upkeep = self._state.structure
        upkeep.load(self._structure_dir())
        structure = upkeep.structure(rel)
        if structure is None:
            from codelex.ingest import read_file

            why = read_file(str(self.root), rel, max_bytes)
            raise ValueError(f"cannot read the structure of {rel}: {why if isinstance(why, str) else 'unreadable'}")
        return rel, structure, content

    def outline(self, path: str | os.PathLike[str]) -> Outline:
        """The definitions of a file, in order, nested, with kinds and spans.

        Parameters
        ----------
        path : str or path-like
            Absolute, or relative to the root.

        Returns
        -------
        Outline
            ``available`` False (with a reason) when the file has no grammar
            or the structure extra is not installed.

        Raises
        ------
        codelex.UnsafePathError
            (a ``ValueError``) When ``path`` is outside the root or reaches
            the file through a symbolic link.
        ValueError
            When the file cannot be read (binary, too large, not a regular
            file).
        FileNotFoundError
            When there is no such file.
        """
        _, structure, content = self._structure(path)
        return outline_of(structure, content)

    def read_symbol(self, path: str | os.PathLike[str], name: str, *, line: int | None = None) -> SymbolSource:
        """The exact source of one definition of a file (decorators and doc comment included).

        Parameters
        ----------
        name : str
            A qualified name (``Outer.method``, ``Type::fn``), a qualified
            suffix (``Inner.method``) or a bare name.
        line : int, optional
            Picks one of several definitions of the same name.

        Raises
        ------
        codelex.SymbolNotFoundError
            No such definition (the message names the nearest ones).
        codelex.AmbiguousSymbolError
            Several match (the message lists them with their lines).
        codelex.UnsafePathError, ValueError, FileNotFoundError
            As :meth:`outline`.
        """
        if line is not None and (isinstance(line, bool) or not isinstance(line, int)):
            raise TypeError(f"line must be int or None, not {type(line).__name__}")
        rel, structure, content = self._structure(path)
        definition = find_definition(structure, name, line)
        lines = content.decode("utf-8", "replace").split("\n")
        lo, hi = definition.outer_start_line, min(definition.end_line, len(lines))
        text = "\n".join(line.rstrip("\r") for line in lines[lo - 1:hi])
        return SymbolSource(rel, definition, lo, hi, text)

    def wait_structure(self, timeout: float | None = None) -> bool:
        """Wait for the background structure build; True when none is running (any more)."""
        return self._state.structure.wait(timeout)

    @property
    def structure_status(self) -> dict:
        """``{status, reason, stats, save_error}`` of the structure store (``idle``, ``building``, ``ready``,
        ``failed``); ``save_error`` says why its last save failed (None when it did not)."""
        upkeep = self._state.structure
        with upkeep.lock:
            return {"status": upkeep.status, "reason": upkeep.reason, "stats": dict(upkeep.stats),
                    "save_error": upkeep.save_error}

    # --- per-edit upkeep ----------------------------------------------------------

    # --- hybrid chunk search -----------------------------------------------------------

    def _embedder(self, embedder, config: dict, *, wait: bool = True, then=None):
        """``(embedder or None, hint)``: the one asked for, else the user's (``$CODELEX_EMBEDDER``), else the
        project's configured one (a named model only), else the default.

        Without ``wait`` a model not loaded yet loads in the background (then ``then(embedder)``): None
        and a hint until it has.
        """
        from codelex.errors import EmbedderError

        if embedder is False:
            return None, None
        spec = self._spec(embedder, config)
        try:
            found = self._state.code.embedder(spec, wait=wait, then=then)
        except EmbedderError as exc:
            if spec is not None:
                raise  # asked for by name: a clear error
            return None, f"lexical ranking only: {exc}"
        if found is None:
            return None, "loading the embedding model in the background; lexical ranking until it has embedded " \
                         "every chunk"
        return found, None

    def _spec(self, embedder, config: dict):
        """The embedder asked for, else the user's (``$CODELEX_EMBEDDER``), else the project's, else None
        (the default)."""
        return embedder if embedder is not None else os.environ.get(EMBEDDER_ENV) or config.get("embedder")

    def _embedder_loaded(self, embedder, config: dict) -> bool:
        """Whether the embedder :meth:`_embedder` would give is at hand without loading anything."""
        code = self._state.code
        spec = self._spec(embedder, config)
        if not (spec is None or isinstance(spec, str)):
            return True  # an embedder object
        with code.lock:
            return spec in code.embedders

    def _saved_vectors(self, embedder, config: dict, corpus) -> tuple[int | None, str | None]:
        """``(chunks of corpus with a saved vector, None)`` for the embedder :meth:`_embedder` would give,
        without loading its model; ``(None, hint)`` when the default one cannot be used (the hint says why).

        Raises
        ------
        codelex.EmbedderError
            When an embedder asked for by name cannot be used.
        """
        from codelex.errors import EmbedderError

        spec = self._spec(embedder, config)
        try:
            return self._state.code.saved_vectors(spec, corpus), None
        except EmbedderError as exc:
            if spec is not None:
                raise  # asked for by name: a clear error
            return None, f"lexical ranking only: {exc}"

    def code_search(self, query: str, *, alternatives: Sequence[str] = (), limit: int = 8, per_file: int = 2,
                    excerpt_lines: int = 80, total_lines: int = 400, fusion: str | None = None,
                    embedder=None, paths=None, lang: str | None = None, wait: bool = False,
                    progress: Callable[[int, int], object] | None = None, background: bool = True):
        """Function-sized chunks for ``query``: a vector and a lexical ranking fused by rank.

        Parameters
        ----------
        query : str
        alternatives : sequence of str
            Other phrasings of the query (from the caller; codelex calls no
            language model): each is ranked, and the orders fused by
            :func:`codelex.hybrid.fuse_rankings`.
        limit, per_file, excerpt_lines, total_lines : int
            The original's selection: results, chunks per file, lines per
            excerpt, lines in all (allocated by rank).
        fusion : {"adaptive", "shape", "original"}, optional
            ``shape`` (default): weights by query shape over each ranking's
            top 100; ``original``: the seed's 0.7 / 0.3 over every chunk.
        embedder : str, Embedder or False, optional
            Default: the project configuration's, else all-MiniLM-L6-v2;
            False: the lexical ranking only.
        paths, lang
            As :meth:`search`.
        wait : bool, default False
            Wait for the structure and embed every chunk first (a first call
            on a large tree takes minutes); otherwise the answer is
            immediate, lexical until the vectors are complete
            (``mode``, ``embedded`` and ``chunks`` say how far they are).
            While the chunks of every file are being prepared (after an
            open, the structure is analyzed in the background), it ranks the
            chunks of the files the word index ranks best, and says so.
        progress : callable, optional
            ``progress(embedded, to_embed)`` while embedding with ``wait``.
        background : bool, default True
            Without ``wait``: load the model and embed the missing chunks
            on background threads (for a long-running caller); until the
            model has loaded, the answer is lexical and says how many chunks
            have a saved vector.  False starts no work that the call does
            not finish, for a caller about to exit (a thread inside a model
            when the interpreter finalizes aborts the process): the model
            loads (in the call) only when every chunk has a vector, to embed
            the query; otherwise the answer is lexical, says how many chunks
            have one, and no model is loaded.

        Returns
        -------
        codelex.project.CodeResult
            A :class:`codelex.hybrid.HybridResult` that also says how many
            results the ``total_lines`` budget left out (``omitted``; 0 when
            it cut nothing).

        Raises
        ------
        TypeError
            For arguments of the wrong type.
        codelex.QueryError
            For an unknown ``lang``.
        codelex.EmbedderError
            When the embedder asked for is missing or returns bad vectors.
        """
        import numpy as np

        from codelex.kinds import kind_of
        from codelex.project.config import load_config
        from codelex.rank import FUSIONS

        if not isinstance(query, str):
            raise TypeError(f"query must be str, not {type(query).__name__}")
        if isinstance(alternatives, str) or not all(isinstance(a, str) for a in alternatives):
            raise TypeError("alternatives must be a sequence of str")
        for name, value in (("limit", limit), ("per_file", per_file), ("excerpt_lines", excerpt_lines),
                            ("total_lines", total_lines)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, not {type(value).__name__}")
            if value < 1:
                raise ValueError(f"{name} must be at least 1, not {value}")
        opts = SearchOptions(paths=paths, lang=lang)
        self._follow_config(start=True)
        config = load_config(self.root)
        fusion = fusion or config.get("fusion", DEFAULT_FUSION)
        if fusion not in FUSIONS:
            raise ValueError(f"fusion must be one of {sorted(FUSIONS)}, not {fusion!r}")

        def unavailable(why: str) -> CodeResult:
            return CodeResult(query, [], 0.0, 0.0, "unavailable", 0, 0, False, why)

        if wait and self.status in ("idle", "building"):
            self.open(wait=True)
        state = self._state
        index = state.index
        if index is None:
            result = self.search(query)  # starts a build, or adopts a saved index at once (then answers from it)
            index = state.index
            if index is None:
                return unavailable(result.hint or "the index is not available")
        upkeep = state.structure
        upkeep.load(self._structure_dir())
        if wait:
            upkeep.wait()
        analyzing = not wait and upkeep.status == "building"
        structure_of, key = self._chunk_sources(index)
        code = state.code
        code.embed_limit = config.get("embed_limit", DEFAULT_EMBED_LIMIT)
        preparing = None
        if code.corpus is None and not wait:
            # The first corpus reads every file and indexes every chunk (seconds on a large tree): in the
            # background, as the other builds; later syncs touch only what changed.
            if analyzing:
                preparing = "its structure is being analyzed"
            elif code.start_first_sync(lambda: index.files, structure_of, key):
                preparing = "its chunks are being indexed"

        def start(chosen) -> None:  # once a model loaded in the background: embed what it has not
            code.start_embedding(chosen, state.writable_dir())

        if preparing is not None:
            if background:
                _, loading = self._embedder(embedder, config, wait=False, then=start)  # loads meanwhile
            else:
                loading = None
            early = self._early_code_search(index, upkeep, query, alternatives, opts, preparing, loading,
                                            fusion=fusion, limit=limit, per_file=per_file, excerpt_lines=excerpt_lines,
                                            total_lines=_unbounded(limit, excerpt_lines))
            return _within_budget(early, total_lines)
        # While the structure is refreshed, the corpus it had answers (a sync now would read it half-done).
        corpus = code.corpus if analyzing else code.sync(lambda: index.files, structure_of, key)
        saved, hint = None, None  # (chunks with a saved vector, counted without loading the model)
        if embedder is not False and not wait and (not background or not self._embedder_loaded(embedder, config)):
            # A caller that will not wait needs the model only to embed the query, and only once every chunk has
            # a vector: until then a one-shot caller never loads it (seconds, and native threads that must not
            # outlive the process), and a long-running one loads it in the background; both say how far it is.
            saved, hint = self._saved_vectors(embedder, config, corpus)
        if saved is not None and not background and (saved < min(len(corpus), code.embed_limit) or not len(corpus)):
            chosen = None
            hint = f"vectors: {saved:,} of {len(corpus):,} chunks embedded; lexical answer"
        elif saved is None and hint is not None:
            chosen = None  # the default embedder is not usable: the hint says why
        else:
            chosen, hint = self._embedder(embedder, config, wait=wait or not background, then=start)
            if chosen is None and saved is not None and hint is not None:
                hint = (f"loading the embedding model in the background; vectors: {saved:,} of {len(corpus):,} "
                        "chunks embedded; lexical answer until every one is")
        directory = state.writable_dir() if chosen is not None else None
        if chosen is not None:
            cache = code.cache(chosen, directory)
            if code.unembedded(cache, corpus) and (wait or background):
                code.start_embedding(chosen, directory, wait=wait, progress=progress if wait else None)
        searcher = code.searcher(chosen, directory)
        allowed = None
        if opts.filters_paths:
            pred = opts.paths_predicate
            allowed = np.array([(pred is None or pred(r.path)) and (opts.lang is None or kind_of(r.path) == opts.lang)
                                for r in corpus.rows], dtype=bool)
        # Picked with no shared budget, then cut to it (_within_budget): the same hits, and the count of those
        # the budget left out.
        result = searcher.search(query, alternatives=alternatives, fusion=fusion, limit=limit, per_file=per_file,
                                 excerpt_lines=excerpt_lines, total_lines=_unbounded(limit, excerpt_lines),
                                 allowed=allowed, importers=self._importers())
        if chosen is None and saved is not None:
            result = dataclasses.replace(result, embedded=saved)
        if chosen is not None and result.mode == "lexical":
            if not background and not wait:  # (a model given as an object: nothing was loaded for it)
                hint = code.embed_error or (f"vectors: {result.embedded:,} of {result.chunks:,} chunks embedded; "
                                            "lexical answer")
            else:
                hint = code.embed_error or (f"embedding in the background: {result.embedded:,} of "
                                            f"{result.chunks:,} chunks; lexical ranking until complete")
        if hint is None and result.mode == "hybrid" and result.embedded < result.chunks:
            hint = (f"vectors cover {result.embedded:,} of {result.chunks:,} chunks (embed_limit {code.embed_limit:,}, "
                    "source files first); set embed_limit in .codelex.toml to embed more")
        if hint is not None:
            result = dataclasses.replace(result, hint=hint)
        return _within_budget(result, total_lines)

    def _chunk_sources(self, index):
        """``(structure_of, key)`` for :meth:`CodeUpkeep.sync`: each file's (content hash, structure loader),
        and what the word index and structure store are at (None while the store is stale)."""
        upkeep = self._state.structure
        store = upkeep.index

        def structure_of(path: str):
            # (content hash, structure loader): unchanged files are never decoded.
            info = store.file_info(path) if store is not None else None
            if info is None or path in upkeep.stale:
                structure = upkeep.structure(path)
                info = store.file_info(path) if store is not None else None
                if structure is None or info is None:
                    return None
                return info[0], lambda: structure
            return info[0], lambda: store.get(path)

        # Nothing to look at while neither the word index nor the structure store changed.
        key = None if upkeep.stale or store is None else (id(index), len(index), index.edits, id(store),
                                                          store.version)
        return structure_of, key

    def _ready_chunks(self, index, build: bool):
        """The chunk corpus and index when they stand for ``index`` and a complete structure, else None.

        ``build``: bring them up to date now (in this thread) when they are not.  Otherwise, once the
        structure is complete, their first build starts in the background and file granularity answers
        until then.
        """
        state = self._state
        upkeep = state.structure
        if not self.build_structure:
            return None
        upkeep.load(self._structure_dir())
        if upkeep.status == "building" or upkeep.index is None:
            return None
        code = state.code
        structure_of, key = self._chunk_sources(index)
        if key is None or state.status != "ready":
            return None  # edits the structure has not followed yet, or a refresh under way: files rank alone
        if code.corpus is not None and code.synced_key == key and code.lexical is not None:
            return code.corpus, code.lexical
        if build:
            corpus = code.sync(lambda: index.files, structure_of, key)
            return corpus, code.lexical
        if code.corpus is None:
            code.start_first_sync(lambda: index.files, structure_of, key)
        elif code.lexical is not None:
            return code.sync(lambda: index.files, structure_of, key), code.lexical  # a few edited files: cheap
        return None

    def _early_code_search(self, index, upkeep, query: str, alternatives, opts: SearchOptions, preparing: str,
                           loading: str | None, **how):
        """A lexical answer while the corpus is prepared: the chunks of the files the word index ranks best."""
        from codelex.structure import analyze
        from codelex.structure.pool import content_hash

        store = upkeep.index

        def structure_for(path: str, content: bytes):
            # The stored structure when it is of this content; else the file is analyzed now (the
            # background analysis may not have reached it).
            info = store.file_info(path) if store is not None else None
            if info is not None and path not in upkeep.stale and info[0] == content_hash(content):
                return store.get(path)
            return analyze(path, content)

        wanted = dataclasses.replace(opts, limit=min(max(EARLY_FILES, 2 * how["limit"]), 100))
        paths = [h.file for q in (query, *alternatives) for h in index.search(q, wanted)]
        searcher = self._state.code.provisional(paths, structure_for)
        result = searcher.search(query, alternatives=alternatives, importers=self._importers(), **how)
        hint = (f"the chunks of this project are being prepared in the background ({preparing}): a lexical "
                f"ranking of the chunks of the {len(searcher.corpus.file_rows)} best-matching files until then")
        if loading:
            hint += f"; {loading}"
        return dataclasses.replace(result, embedded=0, hint=hint)

    def prepare_code_search(self) -> None:
        """Wait for the word index and the structure, and build the chunk corpus now (not the vectors).

        A one-shot caller (the CLI) uses it; a long-running one lets
        :meth:`code_search` prepare everything in the background.
        """
        if self.status in ("idle", "building"):
            self.open(wait=True)
        self.wait_structure()
        self._state.code.wait_first_sync()
        self.code_search("prepare", embedder=False, limit=1, wait=True)  # builds the corpus here

    def embedding_status(self) -> dict:
        """``{embedded, chunks, running, error}`` of the background embedding of this project's chunks."""
        return self._state.code.embedding_status()

    def wait_embeddings(self, timeout: float | None = None) -> bool:
        """Wait for the background embedding; True when none is running (any more)."""
        return self._state.code.wait_embedding(timeout)

    def find_related(self, path: str | os.PathLike[str], line: int, *, limit: int = 8, same_language: bool = True,
                     embedder=None, wait: bool = False, background: bool = True,
                     progress: Callable[[int, int], object] | None = None):
        """The chunks nearest in vector space to the chunk at ``path``:``line`` (that chunk left out).

        ``embedder``, ``wait``, ``background`` and ``progress`` are :meth:`code_search`'s.

        Returns
        -------
        codelex.project.CodeResult
            ``mode`` is ``lexical`` until every chunk is embedded: the
            chunks sharing the most telling identifiers with it
            (:func:`codelex.rank.hybrid.related_query`), with a hint saying
            how much is embedded; ``unavailable`` while the chunks are being
            prepared.  There is no shared line budget (``line_budget`` is
            None): each excerpt is cut to 80 lines.

        Raises
        ------
        FileNotFoundError, ValueError
            For a file outside the root or not indexed, or a line it does not have.
        """
        from codelex.kinds import kind_of
        from codelex.rank import HybridHit
        from codelex.rank.original import excerpt_of

        if isinstance(line, bool) or not isinstance(line, int):
            raise TypeError(f"line must be an int, not {type(line).__name__}")
        rel = relative_path(self.root, path)
        probe = self.code_search(rel, limit=1, embedder=embedder, wait=wait, background=background, progress=progress)
        if not probe.available:
            return probe
        corpus = self._state.code.corpus
        if corpus is None:  # an early answer: the chunks are being prepared
            return CodeResult(f"{rel}:{line}", [], 0.0, 0.0, "unavailable", 0, 0, False, probe.hint)
        if rel not in corpus.file_rows:
            raise FileNotFoundError(f"not an indexed file of {self.root}: {rel}")
        row = corpus.row_at(rel, line)
        if row is None:
            raise ValueError(f"{rel} has no chunk at line {line}")
        def answer(found, vector: bool, hint=None) -> CodeResult:
            hits = []
            for r, score in found:
                c = corpus.rows[r]
                excerpt, truncated = excerpt_of(c.text, 80)
                hits.append(HybridHit(c.path, c.symbol, c.start_line, c.end_line, excerpt, truncated,
                                      score if vector else 0.0, None, None))
            best = found[0][1] if found else 0.0
            return CodeResult(f"{rel}:{line}", hits, best if vector else 0.0, 0.0 if vector else best,
                              "hybrid" if vector else "lexical", probe.embedded, probe.chunks, hint=hint)

        if probe.mode != "hybrid":
            # Until the vectors are there: the chunks sharing its most telling identifiers, said so.
            searcher = self._state.code.searcher(None, None)
            found = searcher.related_lexical(row, limit=limit, same_language=same_language, language_of=kind_of)
            why = probe.hint or "the chunks are not embedded yet"
            return answer(found, False, f"related by shared identifiers until the vectors are there ({why})")
        from codelex.project.config import load_config

        chosen, _ = self._embedder(embedder, load_config(self.root))
        searcher = self._state.code.searcher(chosen, self._state.writable_dir())
        return answer(searcher.related(row, limit=limit, same_language=same_language, language_of=kind_of), True,
                      probe.hint)

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

    # --- import graph ---------------------------------------------------------------

    def importers(self, path: str | os.PathLike[str], timeout: float | None = None) -> list[str]:
        """The indexed files that import ``path`` (absolute or root-relative), sorted.

        Waits (at most ``timeout`` seconds) for the import graph when it is
        still being built; raises ``TimeoutError`` past that.
        """
        return self._require_graph(timeout).importers(relative_path(self.root, path))

    def imports(self, path: str | os.PathLike[str], timeout: float | None = None) -> list[str]:
        """The indexed files ``path`` imports, sorted (see :meth:`importers`)."""
        return self._require_graph(timeout).imports(relative_path(self.root, path))

    @property
    def graph_status(self) -> dict:
        """``state`` (``off``, ``building``, ``ready``, ``failed``) and, when ready, the graph's counts
        (files, references, resolved, unresolved, edges) and the seconds its build took."""
        return self._state.imports.status()

    def _search_index(self, state, index, query: str, opts: SearchOptions) -> SearchResult:
        try:
            if opts.ranking == "code":
                hits = self._pipeline_search(index, query, opts)
            else:  # classic: the original's formula, exactly
                hits = index.search(query, opts)
        except IndexFormatError as exc:
            # A chunk this query read failed its digest (the index is checked as it is read): drop the
            # index, rebuild it in the background, and answer as while building.
            self._drop_corrupt(index, exc)
            return SearchResult(False, query, [], Coverage(0, False), None, "building", HINTS["building"])
        results = self._with_symbols(hits)
        return SearchResult(True, query, results, Coverage(len(index), state.truncated), state.generated_at)

    def _pipeline_search(self, index, query: str, opts: SearchOptions) -> list:
        """Files for ``query`` through the ranking pipeline: by their best chunk when the project's chunks are
        at hand (:attr:`chunk_ranking`), else at file granularity (:func:`codelex.rank.search_files`)."""
        from codelex.rank import search_files

        mode = self.chunk_ranking
        if mode in ("auto", "small"):
            small = len(index) <= CHUNK_SEARCH_BUILD_FILES
            mode = "build" if small else ("background" if mode == "auto" else "off")
        chunks = None if mode == "off" else self._ready_chunks(index, build=mode == "build")
        return search_files(index, query, opts, chunks=chunks, names_of=self._names_source(),
                            importers=opts.centrality or None)

    def _names_source(self):
        """What each file defines, from the structure store once it is complete (None before: the stages
        then leave the word index's ranking as it is)."""
        upkeep = self._state.structure
        if not self.build_structure:
            return None
        upkeep.load(self._structure_dir())
        store = upkeep.index
        if store is None or upkeep.status == "building" or upkeep.stale:
            return None

        held = self._names_cache
        if held is None or held[0] is not store or held[1] != store.version:
            held = self._names_cache = (store, store.version, {})
        cache = held[2]

        def names_of(path: str):
            found = cache.get(path, cache)
            if found is not cache:
                return found
            try:
                structure = store.get(path)
            except (KeyError, ValueError, IndexFormatError):
                structure = None
            found = cache[path] = None if structure is None else frozenset(d.name for d in structure.definitions)
            return found

        return names_of

    def _importers(self):
        """Importer counts for the pipeline's centrality stage: the graph's, else the last saved ones (None)."""
        if not self.import_graph:
            return None
        return self._state.imports.centrality(self._state, saved_only=self.import_graph is not True)

    def _require_graph(self, timeout: float | None):
        state = self._state
        if state.index is None:
            raise RuntimeError("the project has no index yet: open() it first")
        graph = state.imports.wait(state, timeout)
        if graph is None:
            raise TimeoutError("the import graph is still being built")
        return graph

    # --- live freshness ------------------------------------------------------------

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
            self._follow_config(start=True, wait=True)
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
            oracle = GitignoreOracle(state.root)
            sentinel = _sentinel_dir(state)
            debounce_ms = self.debounce_ms
            progress, structure, request = self.progress, self.build_structure, self._request

            def recheck() -> None:  # events were lost: a stat check, as refresh() does
                try:
                    _follow_config(state, request, start=False)
                except ConfigError as exc:
                    log.warning("codelex: %s (the previous settings stay until it is fixed)", exc)
                lifecycle.start(state, full=False, wait_for_it=True, reason=None, supersede=True,
                                progress=progress, structure=structure)

            from codelex.project.config import CONFIG_FILES, is_settings_file

            def settings(rel: str) -> bool:  # a file whose change may change what is indexed
                if not is_settings_file(rel):
                    return False
                parent = rel.rpartition("/")[0]  # a nested .gitignore counts where its directory is walked
                return rel in CONFIG_FILES or not parent or watch_admits(state, oracle, parent, True)

            def apply(changes) -> None:
                if changes.settings:  # first: the edits below are then admitted by the settings now in force
                    _settings_changed(state, request, changes.settings, progress, structure)
                apply_changes(state, changes, oracle, debounce_ms)

            watcher = ProjectWatcher(
                state.root, lambda rel, is_dir: watch_admits(state, oracle, rel, is_dir), apply,
                sentinel_dir=sentinel, on_overflow=recheck, settings=settings)
            failure = watcher.start()
            if failure is None:
                state.watcher = watcher
            state.watch_failure = failure

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
