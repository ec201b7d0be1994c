"""A project's file search and import graph queries: the word index through the ranking pipeline, never waited for.

:class:`FileSearch` is the part of :class:`codelex.Project` that answers
:meth:`~codelex.Project.search`, :meth:`~codelex.Project.importers`,
:meth:`~codelex.Project.imports` and :attr:`~codelex.Project.graph_status`;
what it is ready to use (the index, the chunks, the structure's names, the
graph's prior) is asked of the root's jobs.
"""

from __future__ import annotations

import dataclasses
import logging
import os

from codelex.defaults import GENERATION_TRIES, REFERENCE_LINE_CHARS
from codelex.errors import IndexFormatError
from codelex.lexical import WordIndex
from codelex.project.edits import relative_path
from codelex.project.results import (HINTS, Coverage, ImportersResult, ImportSite, SearchResult, clipped,
                                     generation_id)
from codelex.project.service import IndexService
from codelex.query.options import SearchOptions
from codelex.query.request import Request, parse_request

__all__ = ["FileSearch"]

log = logging.getLogger("codelex")


class FileSearch:
    """File search and the import graph's queries of one root, through its :class:`IndexService`."""

    def __init__(self, service: IndexService) -> None:
        self.service = service
        #: ((index id, its file set version), the index, its Translations): see ranking_facts.
        self._translations: tuple | None = None
        #: Near-copy line signatures by (path, mtime_ns, size), kept across queries (see ranking_facts).
        self._copy_signatures: dict = {}

    def search(self, query: str | Request, options: SearchOptions | None = None, **kwargs) -> SearchResult:
        """Rank files for ``query`` without ever waiting for a build.

        Parameters are those of :meth:`codelex.WordIndex.search`.  When no
        index is available the result says why; a refused root answers
        ``refused`` from the first call and never starts a build; after a
        failed build the same call starts a retry in the background.

        With the ``code`` ranking, files rank through the ranking pipeline
        (:mod:`codelex.rank.pipeline`) with what the project knows of them:
        the names each defines (read for the content the index holds, a file
        analyzed on the spot when the structure store has not caught up with
        it), the import graph's counts and which documents are translations;
        the same files give the same answer whatever background work has
        finished.  An answer ranked before the import graph's counts for the
        index's files are known says so (``provisional``, ``pending``).

        Raises
        ------
        TypeError, codelex.QueryError
            As :meth:`codelex.WordIndex.search` does, also while unavailable.
        codelex.ConfigError
            When a configuration file changed and is now invalid (see
            :meth:`reload_config`; a valid change starts a re-listing in the
            background and this answer comes from the index held).
        """
        service = self.service
        request = parse_request(query, options, kwargs)  # a malformed request raises, available or not
        query, opts = request.text, request.options
        service.follow_config(start=True)
        index, number = service.published()
        if index is None:
            why, reason, start = service.availability()
            if start:
                service.open(wait=False)
            return SearchResult(False, query, [], Coverage(0, False), None, why, HINTS[why].format(reason=reason))
        pending: tuple[str, ...] = ()
        start_graph = False
        if opts.centrality is None and "centrality" not in kwargs:
            # The graph's counts for the index's files; until this process's graph or the saved counts stand
            # for them, the saved ones (if any), and the answer says it is provisional.
            prior, exact = service.graph_prior(service.import_graph)
            if prior is not None:
                request = request.derive(centrality=prior)
            if not exact:
                pending = ("import graph",)
            start_graph = service.import_graph is True
        try:
            return self._search_whole(index, number, request, pending)
        finally:
            if start_graph:  # after this answer: the graph's build would compete with it
                service.ensure_graph()

    def _search_whole(self, index: WordIndex, number: int, request: Request, pending: tuple[str, ...]) -> SearchResult:
        """The answer ranked against one generation of ``index``, whole, and that generation's id.

        The pipeline asks the index several times (candidates, definers, each file's symbols): an edit landing
        between them would mix two generations.  It ranks again when the index's edit count moved meanwhile,
        :data:`GENERATION_TRIES` times unhindered (edits never wait for a search), then once with edits held
        off for the length of the query."""
        for _ in range(GENERATION_TRIES):
            edits = index.edits
            result = self._search_index(index, request, pending)
            if index.edits == edits:
                break
        else:
            with self.service.edits_held():
                edits = index.edits
                result = self._search_index(index, request, pending)
        if not result.available:
            return result
        return dataclasses.replace(result, generation=generation_id(number, edits))

    def _search_index(self, index: WordIndex, request: Request, pending: tuple[str, ...]) -> SearchResult:
        query = request.text
        try:
            if request.options.ranking == "code":
                hits = self._pipeline_search(index, request)
            else:  # classic: the original's formula, exactly (its centrality prior the same counts)
                hits = index.search(request)
        except IndexFormatError as exc:
            # A chunk this query read failed its digest (the index is checked as it is read): drop the
            # index, rebuild it in the background, and answer as while building.
            self.service.drop_corrupt(index, exc)
            return SearchResult(False, query, [], Coverage(0, False), None, "building", HINTS["building"])
        results = self._with_symbols(index, hits)
        return SearchResult(True, query, results, Coverage(len(index), self.service.coverage.truncated),
                            self.service.generated_at, pending=pending)

    def _pipeline_search(self, index: WordIndex, request: Request) -> list:
        """Files for ``query`` through the ranking pipeline (:func:`codelex.rank.search_files`), with the names
        the files define (:meth:`~codelex.project.structure.StructureUpkeep.names_source`) when the project
        reads structure, and the facts it knows of its files (:meth:`ranking_facts`)."""
        from codelex.rank import search_files

        service = self.service
        names_of = service.structure.names_source(service.structure_dir(), index) if service.build_structure \
            else None
        return search_files(index, request, names_of=names_of,
                            facts=self.ranking_facts(index, request.options.centrality))

    def ranking_facts(self, index: WordIndex, importers=None):
        """What the ranking pipeline's stages read of the project's files beyond their words: the importer
        counts given, which documents are translations into another language than the main one (derived from
        the index's files once per set of files), and which files are near-copies of each other (their lines
        read once per content, through the root's admission)."""
        from codelex.ingest import Document
        from codelex.rank.copies import NearCopies
        from codelex.rank.pipeline import FileFacts

        key = (id(index), index.file_set_version)
        held = self._translations
        if held is None or held[0] != key or held[1] is not index:
            from codelex.locales import Translations

            held = self._translations = (key, index, Translations(lambda: index.files))
        admission = self.service.options.admission

        def info(path: str):
            try:
                found = index.file_info(path)
            except KeyError:
                return None
            return found.tokens, found.mtime_ns, found.size

        def read(path: str):
            doc = admission.read(path)
            return doc.content if isinstance(doc, Document) else None

        return FileFacts(importers=importers or None, translated=held[2],
                         copies=NearCopies(info, read, self._copy_signatures))

    def _with_symbols(self, index: WordIndex, hits: list) -> list:
        """Each hit named by the definition that encloses its best line (``end_line`` becomes its end), read for
        the content the index holds (:meth:`~codelex.project.structure.StructureUpkeep.enclosing`)."""
        upkeep = self.service.structure
        upkeep.load(self.service.structure_dir())
        out = []
        for hit in hits:
            try:
                info = index.file_info(hit.file)
            except KeyError:
                out.append(hit)
                continue
            found = upkeep.enclosing(hit.file, hit.start_line, info.mtime_ns, info.size)
            out.append(hit.with_symbol(*found) if found is not None and found[0] is not None else hit)
        return out

    def settle_ranking(self) -> tuple[str, ...]:
        """Derive now what the ranking reads beyond the words and is not yet known for the index's files (the
        import graph's counts, saved for the next process); what is still pending after it (empty: every
        answer over these files is final).  ``codelex index`` ends with this."""
        service = self.service
        if service.index is None or not service.import_graph:
            return ()
        _, exact = service.graph_prior("saved")  # (derived and saved within GRAPH_WAIT_S when stale)
        return () if exact else ("import graph",)

    # --- import graph ---------------------------------------------------------------

    def importers(self, path: str | os.PathLike[str], timeout: float | None = None) -> list[str]:
        """The indexed files that import ``path`` (absolute or root-relative), sorted.

        Waits (at most ``timeout`` seconds) for the import graph when it is
        still being built; raises ``TimeoutError`` past that.
        """
        return self._require_graph(timeout).importers(relative_path(self.service.root, path))

    def imports(self, path: str | os.PathLike[str], timeout: float | None = None) -> list[str]:
        """The indexed files ``path`` imports, sorted (see :meth:`importers`)."""
        return self._require_graph(timeout).imports(relative_path(self.service.root, path))

    def import_sites(self, path: str | os.PathLike[str], timeout: float = 0.0) -> ImportersResult:
        """The files that import ``path`` (a file, absolute or root-relative, or a dotted module such as
        ``pkg.core``), each with the line that imports it, from the import graph; never waits longer than
        ``timeout`` seconds for the graph (unavailable, saying so, while it is built).

        Raises
        ------
        FileNotFoundError
            When ``path`` names no indexed file or module.
        """
        from codelex.graph.extract import ref_line
        from codelex.ingest import Document

        service = self.service
        index, _, hint = service.available_index()
        if index is None:
            return ImportersResult(False, str(path), [], hint)
        rel = self._indexed_file(path, index)
        graph = service.wait_graph(timeout)
        if graph is None:
            return ImportersResult(False, rel, [], "The import graph is being built in the background; ask again "
                                                  "shortly.")
        sites = []
        for importer in graph.importers(rel):
            doc = service.options.admission.read(importer)
            text = doc.content.decode("utf-8", "replace") if isinstance(doc, Document) else ""
            found = next((hit for ref in graph.refs_to(importer, rel) if (hit := ref_line(text, ref))), None)
            line = (found[0], clipped(found[1].strip(), REFERENCE_LINE_CHARS)) if found else (None, None)
            sites.append(ImportSite(importer, *line))
        return ImportersResult(True, rel, sites)

    def _indexed_file(self, path: str | os.PathLike[str], index: WordIndex) -> str:
        """The indexed file ``path`` names: itself, or the file of a dotted module (``pkg.core`` ->
        ``pkg/core.py``, ``src/pkg/core/__init__.py``, ``com/x/Y.java``...), the shortest path of those."""
        text = os.fspath(path)
        if "." in text and "/" not in text and os.sep not in text and text not in index:
            stem = text.replace(".", "/")
            package = stem + "/__init__.py"
            found = [f for f in index.files
                     if (base := f.rpartition(".")[0]) == stem or base.endswith("/" + stem)
                     or f == package or f.endswith("/" + package)]
            if found:
                return min(found, key=lambda f: (len(f), f))
        rel = relative_path(self.service.root, path)
        if rel not in index:
            raise FileNotFoundError(f"no indexed file or module named {text}")
        return rel

    @property
    def graph_status(self) -> dict:
        """``state`` (``off``, ``building``, ``ready``, ``failed``) and, when ready, the graph's counts
        (files, references, resolved, unresolved, edges) and the seconds its build took."""
        return self.service.graph.status()

    def _require_graph(self, timeout: float | None):
        if self.service.index is None:
            raise RuntimeError("the project has no index yet: open() it first")
        graph = self.service.wait_graph(timeout)
        if graph is None:
            raise TimeoutError("the import graph is still being built")
        return graph
