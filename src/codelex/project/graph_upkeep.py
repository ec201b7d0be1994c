"""A project's import graph kept fresh: built in the background after the word index, updated per edit.

The graph (:class:`codelex.graph.ImportGraph`) is derived from the files of
the word index: references a full build extracted from the contents it read
anyway (the seed) and those saved beside the index with the file's current
signature (``graph.clx``) are not read again.  It is built on first need (a
search, :meth:`codelex.Project.importers`), or by ``open(wait=True)``, which
waits for it so that the first query ranks with it; per edit, the edited
file's references are extracted again.  Until it is ready, search ranks with
the importer counts saved beside the index while they stand for its files (:meth:`GraphUpkeep.prior`).
"""

from __future__ import annotations

import logging
import threading
import time

from codelex.project.jobs import Cancelled, DebouncedSaver, Job

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
        self.graph_index = None  # the WordIndex it was built for (and has followed per edit since)
        self.info: dict = {}  # the last build's seconds and files reused
        self.backlog: list[tuple[str, object]] = []  # (file, content or None) edited while the graph was built
        # Set by a handle that ranks with the graph: a full build then extracts import references from the
        # contents it reads anyway, and the graph's build takes them as (index, {path: (mtime_ns, refs)}).
        self.wanted = False
        self.seed: tuple | None = None
        # file name -> (index directory, the file's signature, CentralityMap | None, covers): the saved counts
        self.saved: dict[str, tuple] = {}
        # The cache's debounced save after edits, and what it saves (made at the first edit: see schedule_save).
        self.saver: DebouncedSaver | None = None
        self.target: _GraphCache | None = None
        self.save_lock = threading.Lock()  # (one save of the cache at a time: see save_current)

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

    def prior(self, state, mode) -> tuple[object, bool]:
        """``(counts, exact)``: the importer counts a project of ``import_graph=mode`` ranks with now (None: no
        centrality prior), and whether they are those of the index's files as they are.

        They are exact from this process's graph (kept per edit), or from the counts saved beside the index
        while the index still has the files digest they were derived for.  Otherwise ``"saved"`` (a one-shot
        command, which builds no graph in the background) derives them now (the graph built and saved,
        within :data:`GRAPH_WAIT_S`), so that its answer is the one the server and every later command
        give; ``True`` answers with the saved counts, if any, and says that they are not exact (the
        search starts the graph's build after its answer).
        """
        if not mode:
            return None, True
        index = state.index
        graph = self.graph
        if graph is not None and index is not None and index is self.graph_index:
            # (a refresh under way changes the index outside per-edit upkeep: the graph follows after it publishes)
            return graph.centrality_map(), state.status != "building"
        digest = index.files_digest() if index is not None else None
        counts, covers = self.saved_counts(state, digest)
        if digest is not None and covers == digest:
            return counts, True
        # (without a saved index there is nowhere to keep derived counts: each command would derive them again)
        if mode == "saved" and index is not None and state.saved_dir is not None and self.job.state != "failed":
            graph = self.wait(state, GRAPH_WAIT_S)
            if graph is not None:
                return graph.centrality_map(), True
        return counts, False

    def saved_counts(self, state, want: str | None = None) -> tuple[object, str | None]:
        """``(CentralityMap or None, covers)`` saved beside the index: those whose ``covers`` is ``want`` (the
        counts alone a process saved after edits, or those of the graph cache a build saved), else the graph
        cache's.  Each file is read again only when it changed."""
        directory = state.saved_dir
        if directory is None:
            return None, None
        from codelex.persist.graph import COUNTS_FILE, GRAPH_FILE

        alone, cache = self._saved_file(directory, COUNTS_FILE), self._saved_file(directory, GRAPH_FILE)
        if want is not None and alone[1] == want:
            return alone
        return cache if cache[1] is not None or cache[0] is not None else alone

    def _saved_file(self, directory, name: str) -> tuple[object, str | None]:
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import load_graph_counts

        try:
            st = (directory / name).stat()
            signature = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            signature = None
        held = self.saved.get(name)
        if held is None or held[0] != directory or held[1] != signature:
            from codelex.query import CentralityMap

            found = load_graph_counts(directory, EXTRACTION_RULES, name) if signature is not None else None
            counts, covers = found if found is not None else (None, None)
            held = self.saved[name] = (directory, signature, CentralityMap(counts) if counts else None, covers)
        return held[2], held[3]

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
            self.graph, self.graph_index, self.info = None, None, {}
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
        """Stop a build under way at its next read and wait for it, within a bound; write a pending save."""
        self.job.close()
        with self.lock:
            saver = self.saver
        if saver is not None:
            saver.close()

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
        refs = graph.references()
        digest = index.files_digest()
        if from_cache < len(refs) or len(cached) != len(refs) \
                or self.saved_counts(state, digest)[1] != digest:  # (new extractions, files came or went)
            self.save_current(state, directory)

    @staticmethod
    def _covers(state, index, graph) -> str | None:
        """The files digest ``graph``'s counts stand for: ``index``'s, while it is the root's and every file of
        it has a known mtime (the cache keeps only those), else None."""
        if state.index is not index or any(mtime < 0 for _, mtime, _ in index.file_table()):
            return None
        return index.files_digest()

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
            self.graph, self.graph_index = graph, index
            self.info = {"seconds": time.perf_counter() - started, "reused": reused}
            self.job.finish(generation, "ready")
            return True

    def save_current(self, state, directory) -> None:
        """Save the cache as the graph and the index are now (after a build, or an edit's debounced save): one
        save at a time, each of the state when it writes, so the last one written is the newest.

        Nothing is saved while a build or refresh changes the index outside per-edit upkeep (the graph is
        then derived again after it publishes), nor for a graph of another index than the root's: the cache
        pairs each file's references with the signature the index holds for it, which is right only while
        the graph followed every change of that index.
        """
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import save_graph_refs

        if directory is None:
            return
        with self.save_lock:
            with state.edit_lock:  # the graph and the index as the last edit left them both, read whole here
                graph, index = self.graph, state.index
                if graph is None or index is None or index is not self.graph_index or state.status == "building":
                    return
                table = {path: (mtime, size) for path, mtime, size in index.file_table()}
                covers = self._covers(state, index, graph)
                entries = {p: (table[p][0], table[p][1], r) for p, r in graph.references().items()
                           if p in table and table[p][0] >= 0}
                counts = graph.prior_counts()
            try:
                save_graph_refs(entries, EXTRACTION_RULES, directory, counts, covers)
            except OSError as exc:  # a cache: the next process extracts again
                log.info("codelex: could not save the import graph cache in %s: %s", directory, exc)

    def save_counts(self, state, directory) -> None:
        """Save the counts alone with the index's files digest (an edit's debounced save: a small file, where the
        references' cache, which a build rewrites, is as large as the tree's imports)."""
        from codelex.graph.extract import EXTRACTION_RULES
        from codelex.persist.graph import save_graph_counts

        if directory is None:
            return
        with self.save_lock:
            with state.edit_lock:  # the graph and the index as the last edit left them both
                graph, index = self.graph, state.index
                if graph is None or index is None or index is not self.graph_index or state.status == "building":
                    return
                covers = self._covers(state, index, graph)
                counts = graph.prior_counts()
            if covers is None:
                return
            try:
                save_graph_counts(counts, EXTRACTION_RULES, directory, covers)
            except OSError as exc:  # the next process derives them again
                log.info("codelex: could not save the import graph's counts in %s: %s", directory, exc)

    def schedule_save(self, state, debounce_ms: float | None) -> None:
        """After an edit the graph followed: save its counts with the index's new files digest once the edits
        pause, as the index is saved, so a later process ranks as this one does."""
        with self.lock:
            if self.graph is None or self.job.closed:
                return
            if self.saver is None:
                self.saver, self.target = DebouncedSaver(state.writable_dir), _GraphCache(self, state)
            saver, target = self.saver, self.target
        saver.schedule(target, debounce_ms)


class _GraphCache:
    """What the debounced saver saves for a root's graph: its cache as the graph and the index are at the save."""

    def __init__(self, upkeep: GraphUpkeep, state) -> None:
        self.upkeep, self.state = upkeep, state

    def save(self, directory) -> None:
        self.upkeep.save_counts(self.state, directory)
