"""A project's import graph kept fresh: built in the background after the word index, updated per edit.

The graph (:class:`codelex.graph.ImportGraph`) is derived from the files of
the word index: references a full build extracted from the contents it read
anyway (the seed) and those saved beside the index with the file's current
signature (``graph.clx``) are not read again.  It is built on first need (a
search, :meth:`codelex.Project.importers`), or by ``open(wait=True)``, which
waits for it so that the first query ranks with it; per edit, the edited
file's references are extracted again.  Until it is ready, search ranks with
the importer counts the last process saved (:meth:`GraphUpkeep.centrality`).
"""

from __future__ import annotations

import logging
import time

from codelex.project.jobs import Cancelled, Job

__all__ = ["GRAPH_WAIT_S", "GraphUpkeep"]

log = logging.getLogger("codelex")

#: Longest a waited-for open, rebuild or refresh waits for the import graph that follows it.
GRAPH_WAIT_S = 120.0


class GraphUpkeep:
    """One root's import graph and the job that builds it; its fields are guarded by the root's lock."""

    def __init__(self, root, lock) -> None:
        self.root = root
        self.job = Job(f"building the import graph of {root}", lock=lock)
        self.lock = self.job.lock
        self.graph = None  # the ImportGraph, once built
        self.info: dict = {}  # the last build's seconds and files reused
        self.backlog: list[tuple[str, object]] = []  # (file, content or None) edited while the graph was built
        # Set by a handle that ranks with the graph: a full build then extracts import references from the
        # contents it reads anyway, and the graph's build takes them as (index, {path: (mtime_ns, refs)}).
        self.wanted = False
        self.seed: tuple | None = None
        # (index directory, CentralityMap | None, whether a cache was found) read from graph.clx
        self.saved: tuple | None = None

    # --- readiness ---------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.graph is not None

    def status(self) -> dict:
        """``state`` (``off``, ``building``, ``ready``, ``failed``) and, when ready, the graph's counts."""
        with self.lock:
            graph, info, running, error = self.graph, dict(self.info), self.job.running, self.job.error
        if graph is not None:
            return dict(info, state="ready", **graph.stats())
        if running:
            return {"state": "building"}
        return dict(info, state="failed", error=error) if error else dict(info, state="off")

    def centrality(self, state, saved_only: bool = False):
        """The importer counts search ranks with: the graph's, else the last saved ones (None without any)."""
        graph = None if saved_only else self.graph
        return graph.centrality_map() if graph is not None else self.saved_prior(state)

    def prior(self, state, mode):
        """The importer counts a project of ``import_graph=mode`` ranks with now (None: no centrality prior).

        ``"saved"`` ranks with the counts the last process saved; when none ever did, they are derived now
        (the graph built and saved, within :data:`GRAPH_WAIT_S`), so that a one-shot command's first answer
        is the one the server and every later command give (issue 30: one query, one answer).
        """
        if not mode:
            return None
        if mode is True:
            return self.centrality(state)
        saved = self.saved_prior(state)
        if saved is None and state.saved_dir is not None and not self.saved_any(state) and state.index is not None \
                and self.job.state != "failed":
            graph = self.graph if self.graph is not None else self.wait(state, GRAPH_WAIT_S)
            if graph is not None:
                return graph.centrality_map()
        return saved

    def saved_prior(self, state):
        """The centrality prior saved with the graph cache, as a ``CentralityMap`` (None without one); read once."""
        directory = state.saved_dir
        if directory is None:
            return None
        held = self.saved
        if held is None or held[0] != directory:
            from codelex.graph.extract import EXTRACTION_RULES
            from codelex.persist.graph import load_graph_prior
            from codelex.query import CentralityMap

            counts = load_graph_prior(directory, EXTRACTION_RULES)
            held = (directory, CentralityMap(counts) if counts else None, counts is not None)
            self.saved = held
        return held[1]

    def saved_any(self, state) -> bool:
        """Whether a process saved the counts (a graph cache of this user's, even one with no import edge)."""
        self.saved_prior(state)
        held = self.saved
        return held is not None and held[0] == state.saved_dir and held[2]

    # --- the job -----------------------------------------------------------------------

    def ensure(self, state) -> None:
        """Start building the graph in the background when it is needed and neither built, building nor failed."""
        with self.lock:
            if self.graph is not None or self.job.running or self.job.closed or state.index is None \
                    or self.job.state == "failed":
                return
            generation = self.job.begin()
        self.job.spawn(generation, self._build, state, name="codelex-graph")

    def wait(self, state, timeout: float | None):
        """The graph, its build started if need be and waited for at most ``timeout`` s (None while it builds)."""
        self.ensure(state)
        self.job.wait(timeout)
        return self.graph

    def drop(self) -> None:
        """The files changed outside per-edit upkeep (a build or refresh published): derive the graph again
        on next need (a build under way for the old index stops at its next read)."""
        with self.lock:
            self.graph, self.info = None, {}
            self.job.error = None
            self.job.cancel(state="idle")

    def on_edit(self, rel: str, content, indexed: bool) -> None:
        """Re-extract the edited file's import edges (or drop them), moving the counts of the files they touch.

        ``content`` is what the edit indexed (read once for every stage); None: the file is read.
        """
        text = content.decode("utf-8", "surrogateescape") if isinstance(content, bytes) else content
        with self.lock:
            graph = self.graph
            if graph is None:
                if self.job.running:
                    self.backlog.append((rel, text))
                return
        if indexed:
            graph.update(rel, text)
        else:
            graph.remove(rel)

    def close(self) -> None:
        """Stop a build under way at its next read and wait for it, within a bound."""
        self.job.close()

    def _build(self, generation: int, state) -> None:
        from codelex.runtime import collector_paused

        with collector_paused():  # hundreds of thousands of small reference tuples: no cycles among them
            self._build_now(generation, state)

    @staticmethod
    def _known_refs(directory, table: dict) -> tuple[dict, dict]:
        """``(known, cached)``: the references that need no read (the cache's with a file's current signature,
        the full build's own), and what the cache held."""
        from codelex.graph import ImportRef
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import load_graph_refs

        known: dict = {}
        cached: dict = {}
        if directory is not None:  # references saved with a file's current signature need no second read
            cached = load_graph_refs(directory, EXTRACTION_RULES) or {}
            for path, (mtime, size, refs) in cached.items():
                if mtime >= 0 and table.get(path) == (mtime, size):
                    try:  # the container's checksum vouches for the bytes; the shape is checked here
                        known[path] = [ImportRef(r[0], r[1], r[2], tuple(r[3])) for r in refs]
                    except (TypeError, ValueError, IndexError, KeyError):
                        continue
        return known, cached

    def _build_now(self, generation: int, state) -> None:
        from codelex.graph import ImportGraph, read_from

        index = state.index
        if index is None:
            return
        started = time.perf_counter()
        table = {path: (mtime, size) for path, mtime, size in index.file_table()}
        directory = state.saved_dir
        known, cached = self._known_refs(directory, table)
        from_cache = len(known)
        seed, self.seed = self.seed, None
        if seed is not None and seed[0] is index:  # extracted by the full build that made this index
            for path, (mtime, refs) in seed[1].items():
                if mtime >= 0 and table.get(path, (None,))[0] == mtime:
                    known.setdefault(path, refs)
        reused = len(known)  # files not read again (from the cache or the build's own reading)
        reading = read_from(str(state.root), state.options.max_bytes)
        building = [True]

        def read(path: str):  # a build superseded or closed stops at its next read
            if building[0]:
                self.job.check(generation)
            return reading(path)

        try:
            graph = ImportGraph.build(list(index.files), read, known)
        except Cancelled:
            raise
        except Exception as exc:  # a graph is a prior: search goes on without it
            log.exception("codelex: building the import graph failed")
            self.job.fail(generation, exc)
            return
        building[0] = False
        if not self._publish(generation, state, index, graph, started, reused):
            return
        self._save(directory, graph, table, cached, from_cache)

    def _publish(self, generation: int, state, index, graph, started: float, reused: int) -> bool:
        with self.lock:
            if state.status == "closed" or state.index is not index or not self.job.current(generation):
                return False  # closed, or rebuilt meanwhile (the next need starts over)
            # Edits that arrived meanwhile: bring their files up to date in the graph too.
            for rel, text in self.backlog:
                if state.index is not None and rel in state.index:
                    graph.update(rel, text)
                else:
                    graph.remove(rel)
            self.backlog.clear()
            self.graph = graph
            self.info = {"seconds": time.perf_counter() - started, "reused": reused}
            self.job.finish(generation, "ready")
            return True

    @staticmethod
    def _save(directory, graph, table: dict, cached: dict, from_cache: int) -> None:
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import save_graph_refs

        refs = graph.references()
        if directory is not None and (from_cache < len(refs) or len(cached) != len(refs)):  # new extractions, or
            # files came or went (the prior counts changed): keep them
            entries = {p: (table[p][0], table[p][1], r) for p, r in refs.items() if p in table and table[p][0] >= 0}
            try:
                save_graph_refs(entries, EXTRACTION_RULES, directory, graph.prior_counts())
            except OSError as exc:  # a cache: the next process extracts again
                log.info("codelex: could not save the import graph cache in %s: %s", directory, exc)
