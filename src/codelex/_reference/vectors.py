"""The exact scores and top-k of :class:`codelex._native.dense.VectorIndex`, plainly (tests only)."""

from __future__ import annotations

import numpy as np


def exact_scores(matrix: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each row's dot product with ``q``: float32 products (exact in double) summed in dimension order."""
    m = np.asarray(matrix, dtype=np.float32)
    q = np.asarray(q, dtype=np.float32).reshape(-1)
    acc = np.zeros(m.shape[0], dtype=np.float64)
    for i in range(m.shape[1]):
        acc += m[:, i].astype(np.float64) * np.float64(q[i])
    return acc


def top_k(matrix: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray | None = None):
    """``(rows, scores)`` of the k best rows, ties by the smaller row."""
    scores = exact_scores(matrix, q)
    order = np.lexsort((np.arange(scores.size), -scores))
    if allowed is not None:
        order = order[np.asarray(allowed, dtype=bool)[order]]
    order = order[:k]
    return order, scores[order]
