"""Vectors keyed by the hash of the text embedded: a refresh or an edit embeds only new or changed chunks."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from codelex.dense.embedders import Embedder, embed_checked
from codelex.defaults import EMBED_BATCH
from codelex.errors import IndexFormatError

__all__ = ["VectorCache"]


class VectorCache:
    """One model's vectors by text key, in memory (float32) and, when given a directory, on disk (float16).

    Parameters
    ----------
    embedder : Embedder
        Its ``name`` keys the cache: vectors of another model are never used.
    directory : str or Path, optional
        The index directory holding ``embeddings/``; loaded lazily, saved by
        :meth:`save`.
    """

    def __init__(self, embedder: Embedder, directory: str | Path | None = None) -> None:
        self.embedder = embedder
        self.model = embedder.name
        self.dimensions = int(embedder.dimensions)
        self.directory = None if directory is None else Path(directory)
        self._lock = threading.Lock()
        self._keys = np.zeros(0, dtype=np.uint64)
        self._vectors = np.zeros((0, self.dimensions), dtype=np.float32)
        self._pending_keys: list[np.ndarray] = []
        self._pending_vectors: list[np.ndarray] = []
        self._dirty = False
        self.embedded_texts = 0  # texts sent to the embedder by this cache
        self.version = 0  # bumped by every add: what a matrix was assembled from
        if self.directory is not None:
            self._load()

    def _load(self) -> None:
        from codelex.persist.embeddings import load_embeddings

        try:
            loaded = load_embeddings(self.directory, self.model)
        except (IndexFormatError, OSError):
            return  # unusable: embedded again (and rewritten) as needed
        if loaded is None:
            return
        keys, vectors = loaded
        if vectors.shape[1] != self.dimensions:
            return
        self._keys = np.array(keys, dtype=np.uint64)
        self._vectors = np.asarray(vectors, dtype=np.float32)

    def _consolidate(self) -> None:
        if not self._pending_keys:
            return
        keys = np.concatenate([self._keys, *self._pending_keys])
        vectors = np.concatenate([self._vectors, *self._pending_vectors])
        keys, first = np.unique(keys, return_index=True)
        self._keys, self._vectors = keys, vectors[first]
        self._pending_keys.clear()
        self._pending_vectors.clear()

    def __len__(self) -> int:
        with self._lock:
            self._consolidate()
            return int(self._keys.size)

    def missing(self, keys: np.ndarray) -> np.ndarray:
        """The positions of ``keys`` that have no vector yet."""
        with self._lock:
            self._consolidate()
            have = self._keys
        keys = np.asarray(keys, dtype=np.uint64)
        if have.size == 0:
            return np.arange(keys.size)
        pos = np.searchsorted(have, keys).clip(0, have.size - 1)
        return np.flatnonzero(have[pos] != keys)

    def add(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Keep ``vectors`` (checked, normalised rows) under ``keys``."""
        with self._lock:
            self._pending_keys.append(np.asarray(keys, dtype=np.uint64))
            self._pending_vectors.append(np.asarray(vectors, dtype=np.float32))
            self._dirty = True
            self.version += 1

    def embed_missing(self, keys: np.ndarray, texts: Sequence[str] | Callable[[int], str], *,
                      batch: int = EMBED_BATCH, progress: Callable[[int, int], None] | None = None,
                      should_continue: Callable[[], bool] = lambda: True, priority: np.ndarray | None = None,
                      limit: int | None = None) -> int:
        """Embed the texts of the keys without a vector, in batches; the number embedded.

        ``texts`` is indexed like ``keys`` (a sequence, or a function of the
        position).  ``priority`` (one number a position, lower first; ties
        in position order) orders the work, and with ``limit`` only the
        first ``limit`` positions in that order are wanted at all: the same
        ones on every run, so a capped corpus is not embedded piecemeal
        differently each time.  Stops between batches when
        ``should_continue`` says so.
        """
        keys = np.asarray(keys, dtype=np.uint64)
        todo = self.wanted(keys, priority, limit)
        todo = todo[np.isin(todo, self.missing(keys), assume_unique=True)]
        # One text per distinct key: two chunks with the same text share a vector.
        _, first = np.unique(keys[todo], return_index=True)
        todo = todo[np.sort(first)]
        text_at = texts if callable(texts) else texts.__getitem__
        done = 0
        for start in range(0, todo.size, batch):
            if not should_continue():
                break
            part = todo[start:start + batch]
            vectors = embed_checked(self.embedder, [text_at(int(i)) for i in part])
            self.add(keys[part], vectors)
            self.embedded_texts += int(part.size)
            done += int(part.size)
            if progress is not None:
                progress(done, int(todo.size))
        return done

    @staticmethod
    def wanted(keys: np.ndarray, priority: np.ndarray | None = None, limit: int | None = None) -> np.ndarray:
        """The positions of ``keys`` to embed, in the order to embed them (see :meth:`embed_missing`)."""
        n = int(np.asarray(keys).size)
        if priority is None:
            order = np.arange(n)
        else:
            priority = np.asarray(priority)
            if priority.shape != (n,):
                raise ValueError(f"priority must have one entry a key ({n}), not shape {priority.shape}")
            order = np.argsort(priority, kind="stable")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 0:
                raise ValueError(f"limit must be a non-negative int, not {limit!r}")
            order = order[:limit]
        return order

    def retain(self, keys: np.ndarray, *, slack: float = 2.0, floor: int = 4096) -> int:
        """Forget the vectors of texts not in ``keys`` once they outnumber them (``slack`` times, plus ``floor``).

        A long editing session embeds every version of every chunk it sees; without this the cache (in
        memory; a save already keeps only the current keys) grows with the edits, not with the project.
        The slack keeps recent versions, so that an undo is not embedded again.  Returns the number dropped.
        """
        keys = np.asarray(keys, dtype=np.uint64)
        with self._lock:
            self._consolidate()
            if self._keys.size <= slack * keys.size + floor:
                return 0
            mask = np.isin(self._keys, keys)
            dropped = int(self._keys.size - mask.sum())
            self._keys, self._vectors = self._keys[mask], self._vectors[mask]
            return dropped

    def matrix(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(vectors, present)``: a row per key (zeros where none yet) and which rows are real."""
        with self._lock:
            self._consolidate()
            have, vectors = self._keys, self._vectors
        keys = np.asarray(keys, dtype=np.uint64)
        out = np.zeros((keys.size, self.dimensions), dtype=np.float32)
        if have.size == 0 or keys.size == 0:
            return out, np.zeros(keys.size, dtype=bool)
        pos = np.searchsorted(have, keys).clip(0, have.size - 1)
        present = have[pos] == keys
        out[present] = vectors[pos[present]]
        return out, present

    def save(self, keep: np.ndarray | None = None) -> Path | None:
        """Write the cache (only the ``keep`` keys, when given) as float16; None without a directory."""
        if self.directory is None:
            return None
        from codelex.persist.embeddings import save_embeddings

        with self._lock:
            self._consolidate()
            keys, vectors = self._keys, self._vectors
            if keep is not None:
                mask = np.isin(keys, np.asarray(keep, dtype=np.uint64))
                keys, vectors = keys[mask], vectors[mask]
            self._dirty = False
        return save_embeddings(self.directory, self.model, keys, vectors.astype(np.float16))

    @property
    def dirty(self) -> bool:
        return self._dirty
