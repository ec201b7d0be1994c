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


def test_priority_orders_the_work_and_a_limit_wants_the_same_rows_every_time():
    keys = np.arange(1, 11, dtype=np.uint64)
    texts = [f"t{i}" for i in range(10)]
    priority = np.array([2, 0, 1, 0, 2, 1, 0, 2, 1, 0])
    assert VectorCache.wanted(keys, priority).tolist() == [1, 3, 6, 9, 2, 5, 8, 0, 4, 7]
    assert VectorCache.wanted(keys, priority, 5).tolist() == [1, 3, 6, 9, 2]
    seen = []

    class Recording(_Embedder):
        def embed(self, texts_):
            seen.extend(texts_)
            return super().embed(texts_)

    cache = VectorCache(Recording())
    assert cache.embed_missing(keys, texts, priority=priority, limit=5, batch=2) == 5
    assert seen == ["t1", "t3", "t6", "t9", "t2"]
    assert cache.embed_missing(keys, texts, priority=priority, limit=5) == 0  # nothing more wanted
    assert cache.embed_missing(keys, texts, priority=priority, limit=7) == 2 and seen[-2:] == ["t5", "t8"]
    _, present = cache.matrix(keys)
    assert np.flatnonzero(present).tolist() == [1, 2, 3, 5, 6, 8, 9]
    import pytest

    with pytest.raises(ValueError):
        VectorCache.wanted(keys, priority[:3])
    with pytest.raises(ValueError):
        VectorCache.wanted(keys, None, -1)
