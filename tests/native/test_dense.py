"""The native exact top-k by dot product equals the plain reference: same rows, same order, same scores."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from codelex._native.dense import VectorIndex
from codelex._reference.vectors import exact_scores, top_k

_values = st.sampled_from([0.0, 1.0, -1.0, 0.5, -0.25, 0.1, 1e-3, 3.0, -7.5, 0.3333])


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n=st.integers(0, 40), d=st.integers(1, 9), k=st.integers(0, 45),
       threads=st.integers(1, 3), masked=st.booleans())
def test_top_k_equals_the_reference(data, n, d, k, threads, masked):
    m = data.draw(hnp.arrays(np.float32, (n, d), elements=_values))
    if n and data.draw(st.booleans()):
        m[n // 2:] = m[: n - n // 2]  # duplicate rows: exact ties
    q = data.draw(hnp.arrays(np.float32, (d,), elements=_values))
    allowed = data.draw(hnp.arrays(np.bool_, (n,))) if masked else None
    index = VectorIndex(m)
    rows, scores = index.top_k(q, k, allowed, threads=threads)
    ref_rows, ref_scores = top_k(m, q, k, allowed)
    assert rows.tolist() == ref_rows.tolist()
    assert scores.tolist() == ref_scores.tolist()
    assert index.scores(q).tolist() == exact_scores(m, q).tolist()
    if n:
        pick = data.draw(st.lists(st.integers(0, n - 1), max_size=5))
        assert index.scores(q, pick).tolist() == exact_scores(m, q)[pick].tolist()


def test_large_random_matrix_uses_the_bound():
    rng = np.random.default_rng(1)
    m = rng.standard_normal((20000, 64)).astype(np.float32)
    m /= np.linalg.norm(m, axis=1, keepdims=True)
    index = VectorIndex(m)
    q = m[3] + 0.2 * m[9]
    rows, scores = index.top_k(q, 25, threads=2)
    ref_rows, ref_scores = top_k(m, q, 25)
    assert rows.tolist() == ref_rows.tolist() and scores.tolist() == ref_scores.tolist()
    assert 25 <= index.scored_exactly < 20000 // 4  # most rows never scored exactly


def test_bad_arguments():
    index = VectorIndex(np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="dimensions"):
        index.top_k(np.ones(4), 1)
    with pytest.raises(ValueError, match="NaN"):
        index.top_k(np.array([np.nan, 0, 0]), 1)
    with pytest.raises(ValueError, match="NaN"):
        VectorIndex(np.array([[np.inf, 0.0]]))
    with pytest.raises(ValueError, match="two-dimensional"):
        VectorIndex(np.ones(3))
    with pytest.raises(TypeError):
        index.top_k(np.ones(3), 1.5)
    with pytest.raises(ValueError):
        index.top_k(np.ones(3), -1)
    with pytest.raises(ValueError, match="shape"):
        index.top_k(np.ones(3), 1, np.ones(2, dtype=bool))
    with pytest.raises(IndexError):
        index.scores(np.ones(3), [5])
    assert index.top_k(np.ones(3), 10)[0].tolist() == [0, 1, 2]
