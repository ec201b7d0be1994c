"""A project's hybrid chunk search kept fresh: chunks from the structure store, vectors embedded in the background.

The chunk corpus follows the structure store file by file (a file's chunks
are rebuilt when its content hash changes), the chunk index follows the
corpus per file, and the vectors live in a :class:`~codelex.dense.VectorCache`
keyed by the hash of each embedded text, saved beside the word index
(``embeddings/``), so a refresh or an edit embeds only new or changed
chunks.  Embedding runs on a background thread; until it is complete,
queries answer from the lexical ranking and say how much is embedded.

Which model each embedder spec loaded as is recorded beside the vectors
(:func:`codelex.persist.embeddings.save_spec_models`), so a caller that must
not load a model (a one-shot command about to answer lexically) can still
count the chunks that have a vector (:meth:`CodeUpkeep.saved_vectors`).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from codelex.dense import Embedder, VectorCache, embed_checked, embedder_loader, live_embedder
from codelex.defaults import BACKGROUND_NICENESS, DEFAULT_EMBED_LIMIT, DEFAULT_EMBEDDER, EMBED_BATCH
from codelex.errors import EmbedderError
from codelex.ingest import Document
from codelex.project.jobs import Job, join_all
from codelex.runtime import yield_this_thread
from codelex.rank import ChunkCorpus, ChunkLexicalIndex, HybridSearcher, chunk_rows, embedding_text

__all__ = ["CodeUpkeep"]

log = logging.getLogger("codelex")

#: The background embedder saves what it has at least this often.
SAVE_EVERY_S = 30.0

def embedding_priority(path: str) -> int:
    """When a file's chunks are embedded, lower first.

    By class: source code, then tests, examples and re-exports, then
    documentation, configuration and data (their words serve the lexical
    half well); within a class, shallower files first, so that a capped
    huge tree has vectors for its core (``kernel/``, ``mm/``, ``fs/``) rather
    than for whichever directory sorts first (``arch/alpha``...).
    """
    from codelex.kinds import kind_of
    from codelex.lexical.priors import path_kind_factor

    if kind_of(path) in PROSE_AND_DATA_KINDS:
        group = 2
    else:
        group = 0 if path_kind_factor(path) >= 1.0 else 1
    return group * PRIORITY_DEPTHS + min(path.count("/"), PRIORITY_DEPTHS - 1)


#: Directory depths told apart within a priority class (deeper ones share the last).
PRIORITY_DEPTHS = 32
#: Kinds whose chunks are embedded last.
PROSE_AND_DATA_KINDS = frozenset({"markdown", "json", "yaml", "toml", "html", "css", "sql"})


def _saved_count(directory: Path, model: str, keys: np.ndarray) -> int:
    """How many of ``keys`` the vectors saved for ``model`` hold (0 when none are, or they do not read back)."""
    from codelex.errors import IndexFormatError
    from codelex.persist.embeddings import load_embeddings

    try:
        saved = load_embeddings(directory, model)
    except (IndexFormatError, OSError):
        return 0
    if saved is None:
        return 0
    return int(np.isin(keys, saved[0], assume_unique=False).sum())


def _loaded(load, spec) -> Embedder:
    """``load()``, any failure of a model library an :class:`~codelex.errors.EmbedderError` naming the spec (in a
    waited load as in a background one: a broken model folder is a named error, never a traceback)."""
    try:
        return load()
    except EmbedderError:
        raise
    except Exception as exc:
        raise EmbedderError(f"cannot load the embedder {spec or DEFAULT_EMBEDDER}: {type(exc).__name__}: {exc}") \
            from None


class CodeUpkeep:
    """One root's chunk corpus, chunk index and vector caches (thread-safe)."""

    def __init__(self, root: Path, source, save_dir_fn: Callable[[], Path]) -> None:
        self.root = root
        #: The root's admission now (``source()``): every file this stage reads, it reads through it.
        self.source = source
        self.save_dir_fn = save_dir_fn
        self.lock = threading.RLock()
        # Serializes syncs, which take seconds on a large tree: never held by anything a query waits for.
        self.sync_lock = threading.RLock()
        self.file_rows: dict[str, tuple[int, list]] = {}  # path -> (content hash, rows)
        self.corpus: ChunkCorpus | None = None
        self.synced_key: tuple | None = None
        # The first corpus, prepared in the background (later syncs touch only what changed).
        self.first_sync = Job(f"preparing the chunks of {root}", lock=self.lock, busy="running")
        self.lexical: ChunkLexicalIndex | None = None
        self.caches: dict[str, VectorCache] = {}
        self.embedders: dict[str, Embedder] = {}
        self.searchers: dict[str, tuple[tuple, HybridSearcher]] = {}  # model -> (what it was built from, it)
        # The background embedding: its progress is (chunks with a vector, chunks), its error the last failure.
        self.embedding = Job(f"embedding the chunks of {root}", lock=self.lock, busy="running")
        self.loaders: dict[str, Job] = {}  # spec key -> the job loading its model
        self.load_errors: dict[str, Exception] = {}  # spec key -> why its background load failed
        self.spec_models: dict[str, tuple[str, int]] | None = None  # spec -> (model name, dimensions), read lazily
        self.embed_limit: int = DEFAULT_EMBED_LIMIT  # (the project sets it from its configuration)
        self._priorities: tuple[int, np.ndarray] | None = None  # (id of the corpus, its rows' priorities)

    @property
    def closed(self) -> bool:
        return self.embedding.closed

    def wait_progress(self, timeout: float) -> bool:
        """Wait, at most ``timeout`` s, for the first of the runs under way (the chunks' preparation, the
        embedding, a model's load) to end; False at once when none runs."""
        with self.lock:
            running = [job for job in (self.first_sync, self.embedding, *self.loaders.values()) if job.running]
        if not running:
            return False
        running[0].wait(timeout)
        return True

    @property
    def progress(self) -> tuple[int, int]:
        return self.embedding.progress

    @property
    def embed_error(self) -> str | None:
        return self.embedding.error

    def embedding_status(self) -> dict:
        """``{embedded, chunks, running, error}`` of the background embedding."""
        with self.lock:
            done, total = self.embedding.progress
            return {"embedded": done, "chunks": total, "running": self.embedding.running,
                    "error": self.embedding.error}

    # --- what is embedded -------------------------------------------------------------

    def priorities(self, corpus: ChunkCorpus) -> np.ndarray:
        """Each chunk's embedding priority (lower first): see :func:`embedding_priority`."""
        with self.lock:
            cached = self._priorities
            if cached is not None and cached[0] == id(corpus):
                return cached[1]
        by_path: dict[str, int] = {}
        out = np.fromiter((by_path[r.path] if r.path in by_path else by_path.setdefault(r.path, embedding_priority(
            r.path)) for r in corpus.rows), dtype=np.int16, count=len(corpus))
        with self.lock:
            self._priorities = (id(corpus), out)
        return out

    def wanted(self, corpus: ChunkCorpus) -> np.ndarray:
        """The positions of the chunks to embed, in order: every one, or the first ``embed_limit`` by priority."""
        return VectorCache.wanted(corpus.keys, self.priorities(corpus), self.embed_limit)

    def capped(self, corpus: ChunkCorpus) -> bool:
        """Whether ``embed_limit`` leaves some of ``corpus``'s chunks without a vector by choice."""
        return len(corpus) > self.embed_limit

    def unembedded(self, cache: VectorCache, corpus: ChunkCorpus) -> int:
        """How many of the chunks to embed have no vector in ``cache`` yet."""
        if not self.capped(corpus):
            return int(cache.missing(corpus.keys).size)
        missing = cache.missing(corpus.keys)
        return int(np.isin(self.wanted(corpus), missing, assume_unique=True).sum())

    # --- the corpus ------------------------------------------------------------------

    def sync(self, paths: list[str] | Callable[[], list[str]], structure_of, key: tuple | None = None) -> ChunkCorpus:
        """Bring the corpus in line with ``paths`` (the word index's files); returns it.

        ``structure_of(path)`` gives ``(content hash, () -> FileStructure)`` or None.  With ``key``
        (what the word index and structure store are at), an unchanged key returns the corpus at once.
        """
        with self.sync_lock:
            if key is not None and key == self.synced_key and self.corpus is not None:
                return self.corpus
            if callable(paths):
                paths = paths()
            changed: dict[str, list] = {}
            wanted = set(paths)
            for path in list(self.file_rows):
                if path not in wanted:
                    del self.file_rows[path]
                    changed[path] = []
            for path in paths:
                found = structure_of(path)
                if found is None:
                    if path in self.file_rows:
                        del self.file_rows[path]
                        changed[path] = []
                    continue
                digest, load = found
                cached = self.file_rows.get(path)
                if cached is not None and cached[0] == digest:
                    continue
                doc = self.source().read(path)
                rows = chunk_rows(path, doc.content, load()) if isinstance(doc, Document) else []
                self.file_rows[path] = (digest, rows)
                changed[path] = rows
            self.synced_key = key
            if self.corpus is not None and not changed:
                return self.corpus
            corpus = ChunkCorpus.from_rows(r for p in sorted(self.file_rows) for r in self.file_rows[p][1])
            if self.lexical is None:
                self.lexical = ChunkLexicalIndex(corpus)
            else:
                for path, rows in changed.items():
                    self.lexical.replace_file(path, rows)
                self.lexical.corpus = corpus
            self.corpus = corpus
            for cache in self.caches.values():  # vectors of texts no chunk has any more: bounded by the corpus
                cache.retain(corpus.keys)
            return corpus

    @staticmethod
    def sources(upkeep, index):
        """``(structure_of, key)`` for :meth:`sync` from the structure upkeep: each file's (content hash,
        structure loader), and what the word index and structure store are at (None while the store is stale)."""
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

    def sync_with(self, upkeep, index) -> ChunkCorpus:
        """:meth:`sync` with the word index's files and the structure upkeep's structures, in this thread."""
        structure_of, key = self.sources(upkeep, index)
        return self.sync(lambda: index.files, structure_of, key)

    def start_first_sync(self, paths, structure_of, key) -> bool:
        """Build the first corpus on a background thread; False when it is already there."""
        with self.lock:
            if self.corpus is not None:
                return False
            if not self.first_sync.running and not self.closed:
                generation = self.first_sync.begin()
                self.first_sync.spawn(generation, lambda _: self.sync(paths, structure_of, key), name="codelex-chunks")
            return True

    def wait_first_sync(self, timeout: float | None = None) -> bool:
        """Wait for the first corpus's background preparation, at most ``timeout`` s; True when it is not running."""
        return self.first_sync.join(timeout)

    def provisional(self, paths: list[str], structure_for) -> HybridSearcher:
        """A lexical searcher over the chunks of ``paths`` only, built now and kept nowhere.

        It answers while the corpus of every file is being prepared: the
        caller picks the files (the word index's best for the query), so the
        answer costs a few files' reads and analyses, not the tree's.
        ``structure_for(path, content)`` gives the file's structure (None:
        line windows).
        """
        rows = []
        for path in dict.fromkeys(paths):
            doc = self.source().read(path)
            if isinstance(doc, Document):
                rows.extend(chunk_rows(path, doc.content, structure_for(path, doc.content)))
        corpus = ChunkCorpus.from_rows(rows)
        return HybridSearcher(corpus, ChunkLexicalIndex(corpus))

    # --- vectors ---------------------------------------------------------------------

    def embedder(self, spec, *, wait: bool = True,
                 then: Callable[[Embedder], None] | None = None) -> Embedder | None:
        """The embedder of ``spec``, loaded once per upkeep.

        What can be checked without loading is checked at once (an
        :class:`~codelex.errors.EmbedderError`).  Without ``wait`` a model not
        loaded yet loads on a background thread, which then calls ``then``
        with it, and this returns None; a background load that failed raises
        its error on the next call (which retries).
        """
        key = spec if isinstance(spec, str) or spec is None else f"object:{id(spec)}"
        with self.lock:
            found = self.embedders.get(key)
            if found is not None:
                return found
            failed = self.load_errors.pop(key, None)
            loader = self.loaders.get(key)
        if failed is not None:
            raise failed
        load = embedder_loader(spec)
        live = live_embedder(spec) if loader is None and isinstance(spec, (str, type(None))) else None
        if live is not None:  # a named model another root of this process holds: taken, nothing loaded
            with self.lock:
                found = self.embedders.setdefault(key, live)
            self._remember(spec, found)
            return found
        if not isinstance(spec, (str, type(None))):
            wait = True  # an embedder object: nothing to load
        if wait:
            if loader is not None:
                loader.join()  # (the load under way: as long as a load takes)
            with self.lock:
                found = self.embedders.get(key)
            if found is None:
                found = _loaded(load, spec)
                with self.lock:
                    found = self.embedders.setdefault(key, found)
                self._remember(spec, found)
            return found
        with self.lock:
            if self.closed or (key in self.loaders and self.loaders[key].running):
                return None
            job = self.loaders[key] = Job(f"loading the embedder {spec or DEFAULT_EMBEDDER}", busy="running")
            generation = job.begin()
        job.spawn(generation, self._load, key, spec, load, then, name="codelex-model")
        return None

    def _load(self, generation: int, key: str, spec, load, then) -> None:
        """A model loader's run: the embedder kept under ``key``, then ``then(embedder)``; an error is kept for
        the next call for this spec (which retries)."""
        try:
            loaded = _loaded(load, spec)
        except EmbedderError as exc:  # raised by the next call for this spec
            log.warning("codelex: loading the embedder %s failed: %s", spec, exc)
            with self.lock:
                self.load_errors[key] = exc
            return
        with self.lock:
            loaded = self.embedders.setdefault(key, loaded)
            closed = self.closed
        self._remember(spec, loaded)
        if then is not None and not closed:
            try:
                then(loaded)
            except Exception as exc:  # the next query starts it again
                log.warning("codelex: starting to embed the chunks of %s failed: %s", self.root, exc)

    def _remember(self, spec, embedder: Embedder) -> None:
        """Record which model ``spec`` (a spec string, or None for the default) loaded as, for
        :meth:`saved_vectors` in later processes; saved only when it changed."""
        if not (spec is None or isinstance(spec, str)):
            return  # an embedder object: its name is at hand whenever it is
        from codelex.persist.embeddings import save_spec_models

        key = spec or DEFAULT_EMBEDDER
        entry = (embedder.name, int(embedder.dimensions))
        directory = self.save_dir_fn()
        with self.lock:
            known = self._spec_models(directory)
            if known.get(key) == entry:
                return
            known.pop(key, None)
            known[key] = entry
            snapshot = dict(known)
        try:
            save_spec_models(directory, snapshot)
        except OSError as exc:  # a cache: the next load records it again
            log.info("codelex: cannot record the embedding model of %s: %s", self.root, exc)

    def _spec_models(self, directory: Path) -> dict[str, tuple[str, int]]:
        from codelex.persist.embeddings import load_spec_models

        with self.lock:
            if self.spec_models is None:
                self.spec_models = load_spec_models(directory)
            return self.spec_models

    def saved_vectors(self, spec, corpus: ChunkCorpus) -> int:
        """How many of ``corpus``'s chunks have a vector of ``spec``'s model, without loading the model.

        ``spec`` is checked as cheaply as :func:`~codelex.dense.embedder_loader` checks it (an
        :class:`~codelex.errors.EmbedderError` for an unknown spec, a missing folder or package).
        The model a spec string names is the one it last loaded as, in any process: never loaded,
        nothing is embedded.

        Raises
        ------
        codelex.EmbedderError
            When ``spec`` cannot be used.
        """
        embedder_loader(spec)  # (checks only: the model is not loaded)
        keys = corpus.keys
        if not len(keys):
            return 0
        directory = self.save_dir_fn()
        if isinstance(spec, str) or spec is None:
            key = spec or DEFAULT_EMBEDDER
            with self.lock:
                loaded = self.embedders.get(spec)
            if loaded is None:
                entry = self._spec_models(directory).get(key)
                if entry is None:
                    return 0
                with self.lock:
                    cache = self.caches.get(entry[0])
                if cache is None:  # the saved file's keys only: no vector is read
                    return _saved_count(directory, entry[0], keys)
                return len(keys) - int(cache.missing(keys).size)
            spec = loaded
        return len(keys) - int(self.cache(spec, directory).missing(keys).size)

    def cache(self, embedder: Embedder, directory: Path | None) -> VectorCache:
        with self.lock:
            cache = self.caches.get(embedder.name)
            if cache is None:
                cache = self.caches[embedder.name] = VectorCache(embedder, directory)
            return cache

    def start_embedding(self, embedder: Embedder, directory: Path | None, *, wait: bool = False,
                        progress: Callable[[int, int], None] | None = None) -> None:
        """Embed the corpus's chunks that have no vector yet (on a background thread unless ``wait``)."""
        with self.lock:
            if self.closed or self.corpus is None:
                return
            if not wait and self.embedding.running:
                return
            job = self.embedding.begin()  # (a waited-for run supersedes a background one)
            corpus = self.corpus
        cache = self.cache(embedder, directory)
        if not wait:
            self.embedding.spawn(job, self._embed, corpus, cache, progress, True, name="codelex-embed")
        else:
            self.embedding.run(job, self._embed, corpus, cache, progress, raise_errors=True)

    def wait_embedding(self, timeout: float | None = None) -> bool:
        """Wait for the background embedding, at most ``timeout`` s; True when none is running (any more)."""
        return self.embedding.join(timeout)

    def _embed(self, job: int, corpus: ChunkCorpus, cache: VectorCache, progress, background: bool = False) -> None:
        """The embedding job's run: the chunks without a vector embedded, by priority, up to ``embed_limit``
        (a failure is reported with the next answer, through the job's error)."""
        last_save = time.monotonic()
        keys = corpus.keys

        def report(done: int, total: int) -> None:
            nonlocal last_save
            self.embedding.report(len(corpus) - int(cache.missing(keys).size), len(corpus))
            if progress is not None:
                progress(done, total)
            if time.monotonic() - last_save > SAVE_EVERY_S:
                self._save(cache, keys)
                last_save = time.monotonic()

        with self.lock:
            self.embedding.error = None
        if background:  # (its own thread, which ends with the pass: a query embedding on demand goes first)
            yield_this_thread(BACKGROUND_NICENESS)
        cache.embed_missing(keys, lambda i: embedding_text(corpus.rows[i]), batch=EMBED_BATCH, progress=report,
                            should_continue=lambda: self.embedding.current(job),
                            priority=self.priorities(corpus), limit=self.embed_limit)
        self.embedding.report(len(corpus) - int(cache.missing(keys).size), len(corpus))
        if cache.dirty:
            self._save(cache, keys)

    def _save(self, cache: VectorCache, keys: np.ndarray) -> None:
        try:
            cache.save(keep=keys)
        except OSError as exc:
            log.warning("codelex: cannot save the embeddings of %s: %s", self.root, exc)

    def searcher(self, embedder: Embedder | None, directory: Path | None) -> HybridSearcher:
        """A searcher over the current corpus (vectors when every chunk has one); reused while nothing changed."""
        corpus, lexical = self.corpus, self.lexical
        if embedder is None:
            return HybridSearcher(corpus, lexical)
        cache = self.cache(embedder, directory)
        key = (id(corpus), embedder.name, cache.version)
        with self.lock:
            cached = self.searchers.get(embedder.name)
            if cached is not None and cached[0] == key:
                return cached[1]
        vectors, present = cache.matrix(corpus.keys)

        def embed_query(text: str) -> np.ndarray:
            return embed_checked(embedder, [text])[0]

        # Past the cap the rest stays without vectors: rank by vector among the embedded once they are all there.
        partial = self.capped(corpus) and bool(present[self.wanted(corpus)].all())
        searcher = HybridSearcher(corpus, lexical, vectors, present, embed_query, partial=partial)
        with self.lock:
            self.embedding.progress = (int(present.sum()), len(corpus))
            self.searchers[embedder.name] = (key, searcher)
        return searcher

    def embed_rows(self, embedder: Embedder, directory: Path | None, corpus: ChunkCorpus, rows: list[int]) -> int:
        """Embed now the chunks of ``rows`` that have no vector (kept in the cache, so that the background pass
        skips them); the number embedded."""
        cache = self.cache(embedder, directory)
        rows_a = np.asarray(rows, dtype=np.int64)
        keys = corpus.keys[rows_a]
        missing = cache.missing(keys)
        if missing.size:
            todo = rows_a[missing]
            cache.add(keys[missing], embed_checked(embedder, [embedding_text(corpus.rows[int(r)]) for r in todo]))
        return int(missing.size)

    def partial_searcher(self, embedder: Embedder, directory: Path | None) -> HybridSearcher:
        """A searcher over the current corpus that ranks by vector among the chunks that have one (whatever the
        background pass has reached): a provisional hybrid answer's, built now and kept nowhere."""
        corpus, lexical = self.corpus, self.lexical
        vectors, present = self.cache(embedder, directory).matrix(corpus.keys)

        def embed_query(text: str) -> np.ndarray:
            return embed_checked(embedder, [text])[0]

        return HybridSearcher(corpus, lexical, vectors, present, embed_query, partial=True)

    def jobs(self) -> list[Job]:
        with self.lock:
            return [self.embedding, self.first_sync, *self.loaders.values()]

    def stop(self) -> None:
        """Stop the background work: embedding ends after the batch in progress; nothing new starts."""
        for job in self.jobs():
            job.stop()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for this upkeep's jobs (all of them within ``timeout``); True when none runs any more."""
        return join_all(self.jobs(), timeout)

    def close(self) -> None:
        self.stop()
        self.join(timeout=5)
        for cache in list(self.caches.values()):
            if cache.dirty and self.corpus is not None:
                self._save(cache, self.corpus.keys)
