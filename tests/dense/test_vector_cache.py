"""The vector cache: bounded by the corpus in a long editing session (found by the concurrency soak)."""

from __future__ import annotations

import numpy as np

from codelex.dense import VectorCache


class _Embedder:
    name = "test:identity-8"
    dimensions = 8

    def embed(self, texts):
        return [[1.0 + len(t)] + [float(i) for i in range(7)] for t in texts]


def test_retain_forgets_texts_no_chunk_has_once_they_outnumber_the_corpus():
    cache = VectorCache(_Embedder())
    rng = np.random.default_rng(0)
    current = np.unique(rng.integers(0, 2**62, size=100, dtype=np.int64)).astype(np.uint64)
    cache.embed_missing(current, [f"text {i}" for i in range(current.size)])
    before, _ = cache.matrix(current)
    assert cache.retain(current, floor=50) == 0  # nothing to forget yet
    for round_ in range(30):  # edits: new versions of chunks, each embedded once
        old = np.unique(rng.integers(0, 2**62, size=100, dtype=np.int64)).astype(np.uint64)
        cache.embed_missing(old, [f"old {round_} {i}" for i in range(old.size)])
        cache.retain(current, floor=50)
        assert len(cache) <= 2 * current.size + 50 + old.size
    after, present = cache.matrix(current)
    assert present.all() and np.array_equal(before, after)  # the current corpus keeps its vectors
    extra = np.unique(rng.integers(0, 2**62, size=10, dtype=np.int64)).astype(np.uint64)
    cache.embed_missing(extra, [f"extra {i}" for i in range(extra.size)])
    held = len(cache)
    assert held > current.size
    assert cache.retain(current, slack=0.0, floor=0) == held - current.size
    assert len(cache) == current.size
