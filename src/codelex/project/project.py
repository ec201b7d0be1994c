"""The project facade: a repository whose index is kept on disk and fresh, and its queries.

``Project`` only composes: the root's word index service (:class:`~codelex.project.service.IndexService`:
builds, refreshes, edits, the watcher, and the structure, import graph, chunk and docs services) and the
query classes given it: :class:`~codelex.project.search.FileSearch` (files, the import graph),
:class:`~codelex.project.symbols.SymbolQueries` (outlines, definitions, references) and
:class:`~codelex.project.code_search.CodeSearch` (chunks).  Each public method is its part's.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from codelex.project.code_search import CodeSearch
from codelex.project.readiness import Readiness, wait_until
from codelex.project.roots import discover_root
from codelex.project.search import FileSearch
from codelex.project.service import IndexService, ProgressCallback
from codelex.project.settings import CONFIGURED
from codelex.project.settings import Configured as _Configured
from codelex.project.symbols import SymbolQueries

__all__ = ["Project"]


def _forward(part: str, method):
    """The project's ``method``: the same call on its ``part``, with the method's signature and documentation."""
    name = method.__name__

    @functools.wraps(method)
    def forwarded(self, *args, **kwargs):
        return getattr(getattr(self, part), name)(*args, **kwargs)
    return forwarded


def _forward_setting(name: str) -> property:
    """What the project was asked for (``progress``, ``watch``...), read and set on its service."""
    return property(lambda self: getattr(self.service, name), lambda self, value: setattr(self.service, name, value),
                    doc=f"The ``{name}`` the project was made with (see :class:`Project`); settable.")


def _forward_property(part: str, prop: property) -> property:
    """The project's read-only attribute: its ``part``'s property of the same name, documented as it is."""
    name = prop.fget.__name__
    return property(lambda self: getattr(getattr(self, part), name), doc=prop.__doc__)


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
        #: The root's word index service: builds, edits, the watcher, and the stage services beside the index
        #: (``service.structure``, ``service.graph``, ``service.chunks``).
        self.service = IndexService(root, index_dir=index_dir, max_files=max_files, max_bytes=max_bytes,
                                    progress=progress, debounce_ms=debounce_ms, use_git=use_git, ignore=ignore,
                                    include=include, languages=languages, build_structure=build_structure,
                                    watch=watch, import_graph=import_graph)
        self.root = self.service.root
        self.files = FileSearch(self.service)
        self.symbols = SymbolQueries(self.service)
        self.code = CodeSearch(self.service, self.files)

    @classmethod
    def discover(cls, path: str | os.PathLike[str] = ".", **kwargs) -> Project:
        """The project that ``path`` (a directory, default the current one) belongs to.

        Its root is the nearest ancestor holding a codelex index, else the
        git work tree's root, else ``path`` (see
        :func:`codelex.project.discover_root`); keyword arguments are
        :class:`Project`'s.
        """
        return cls(discover_root(path), **kwargs)

    # --- the index: status, builds, edits, the watcher (IndexService) ------------------

    progress, debounce_ms = _forward_setting("progress"), _forward_setting("debounce_ms")
    build_structure, watch = _forward_setting("build_structure"), _forward_setting("watch")
    import_graph = _forward_setting("import_graph")

    status = _forward_property("service", IndexService.status)
    status_reason = _forward_property("service", IndexService.status_reason)
    config = _forward_property("service", IndexService.config)
    index = _forward_property("service", IndexService.index)
    last_report = _forward_property("service", IndexService.last_report)
    generated_at = _forward_property("service", IndexService.generated_at)
    coverage = _forward_property("service", IndexService.coverage)
    index_dir = _forward_property("service", IndexService.index_dir)
    watch_status = _forward_property("service", IndexService.watch_status)
    watching = _forward_property("service", IndexService.watching)

    @functools.wraps(IndexService.open, assigned=("__doc__",))
    def open(self, wait: bool = True) -> Project:
        self.service.open(wait)
        return self

    @functools.wraps(IndexService.rebuild, assigned=("__doc__",))
    def rebuild(self, wait: bool = True) -> Project:
        self.service.rebuild(wait)
        return self

    refresh = _forward("service", IndexService.refresh)
    refresh_in_background = _forward("service", IndexService.refresh_in_background)
    wait = _forward("service", IndexService.wait)
    reload_config = _forward("service", IndexService.reload_config)
    check = _forward("service", IndexService.check)
    reload_if_changed = _forward("service", IndexService.reload_if_changed)
    on_edit = _forward("service", IndexService.on_edit)
    sync = _forward("service", IndexService.sync)
    start_watching = _forward("service", IndexService.start_watching)

    def wait_until(self, what: str = "index", timeout: float | None = None) -> Readiness:
        """Wait, at most ``timeout`` seconds, until ``what`` is ready (see :func:`codelex.project.readiness.wait_until`:
        ``index``, ``structure`` or ``embeddings``, each including the ones before it)."""
        return wait_until(self, what, timeout)

    docs = _forward("service", IndexService.docs)
    docs_status = _forward_property("service", IndexService.docs_status)

    # --- files and the import graph (FileSearch) ---------------------------------------

    search = _forward("files", FileSearch.search)
    ranking_facts = _forward("files", FileSearch.ranking_facts)
    settle_ranking = _forward("files", FileSearch.settle_ranking)
    importers = _forward("files", FileSearch.importers)
    import_sites = _forward("files", FileSearch.import_sites)
    imports = _forward("files", FileSearch.imports)
    graph_status = _forward_property("files", FileSearch.graph_status)

    # --- outlines and definitions (SymbolQueries) --------------------------------------

    outline = _forward("symbols", SymbolQueries.outline)
    read_symbol = _forward("symbols", SymbolQueries.read_symbol)
    references = _forward("symbols", SymbolQueries.references)
    wait_structure = _forward("symbols", SymbolQueries.wait_structure)
    structure_status = _forward_property("symbols", SymbolQueries.structure_status)

    # --- chunks (CodeSearch) ----------------------------------------------------------

    code_search = _forward("code", CodeSearch.code_search)
    prepare_code_search = _forward("code", CodeSearch.prepare_code_search)
    find_related = _forward("code", CodeSearch.find_related)
    embedding_status = _forward("code", CodeSearch.embedding_status)
    wait_embeddings = _forward("code", CodeSearch.wait_embeddings)

    # --- shutdown -------------------------------------------------------------------

    close = _forward("service", IndexService.close)

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Project {self.root} status={self.status} files={self.coverage.files}>"
