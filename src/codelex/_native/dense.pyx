# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the dense stage (csrc/dense/): exact top-k by dot product.

Public API: :class:`codelex.rank.HybridSearcher`.  Arguments are validated
before native memory is touched; the loops run without the GIL.
"""

from libc.stdint cimport int8_t, int32_t, uint8_t, uint32_t

from codelex._native.cpp_vectors cimport TopKStats, exact_dot, exact_dots, exact_top_k, quantize_rows

import numpy as np


cdef class VectorIndex:
    """Unit rows (float32, n x d) with their int8 copy, for exact top-k queries.

    Parameters
    ----------
    matrix : numpy.ndarray
        Two-dimensional, finite; copied to C-contiguous float32 if needed.
    """

    cdef object _m, _codes, _scales, _l1, _resid
    cdef readonly size_t n, d
    cdef readonly size_t scored_exactly

    def __init__(self, matrix):
        m = np.ascontiguousarray(matrix, dtype=np.float32)
        if m.ndim != 2:
            raise ValueError(f"matrix must be two-dimensional, not {m.ndim}-dimensional")
        if m.shape[1] == 0:
            raise ValueError("matrix must have at least one column")
        if not np.isfinite(m).all():
            raise ValueError("matrix holds NaN or infinite values")
        self._m = m
        self.n, self.d = m.shape[0], m.shape[1]
        self._codes = np.empty((self.n, self.d), dtype=np.int8)
        self._scales = np.empty(self.n, dtype=np.float32)
        self._l1 = np.empty(self.n, dtype=np.int32)
        self._resid = np.empty(self.n, dtype=np.float32)
        cdef const float[:, ::1] mv = m
        cdef int8_t[:, ::1] cv = self._codes
        cdef float[::1] sv = self._scales
        cdef int32_t[::1] lv = self._l1
        cdef float[::1] rv = self._resid
        if self.n:
            with nogil:
                quantize_rows(&mv[0, 0], self.n, self.d, &cv[0, 0], &sv[0], &lv[0], &rv[0])

    cdef object _query(self, q):
        qa = np.ascontiguousarray(q, dtype=np.float32).reshape(-1)
        if qa.shape[0] != self.d:
            raise ValueError(f"the query vector has {qa.shape[0]} dimensions, the rows {self.d}")
        if not np.isfinite(qa).all():
            raise ValueError("the query vector holds NaN or infinite values")
        return qa

    def scores(self, q, rows=None):
        """The exact scores (float64) of every row, or of ``rows``: each dot product summed in dimension
        order in double."""
        qa = self._query(q)
        cdef const float[::1] qv = qa
        cdef const float[:, ::1] mv = self._m
        cdef double[::1] ov
        cdef const long long[::1] iv
        cdef size_t i, m
        if rows is None:
            out = np.empty(self.n, dtype=np.float64)
            ov = out
            if self.n:
                with nogil:
                    exact_dots(&mv[0, 0], self.n, self.d, &qv[0], &ov[0])
            return out
        idx = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= <long long>self.n):
            raise IndexError(f"rows must lie in [0, {self.n})")
        out = np.empty(idx.size, dtype=np.float64)
        m = idx.size
        if m:
            iv = idx
            ov = out
            with nogil:
                for i in range(m):
                    ov[i] = exact_dot(&mv[iv[i], 0], &qv[0], self.d)
        return out

    def top_k(self, q, k, allowed=None, int threads=2):
        """``(rows, scores)``: the ``k`` best rows (of ``allowed``, a bool array, when given), best first,
        ties by row; exactly the top of :meth:`scores`."""
        qa = self._query(q)
        if isinstance(k, bool) or not isinstance(k, int):
            raise TypeError(f"k must be an int, not {type(k).__name__}")
        if k < 0:
            raise ValueError(f"k must be >= 0, not {k}")
        k = min(k, self.n)
        cdef const uint8_t* ap = NULL
        cdef const uint8_t[::1] av
        if allowed is not None:
            aa = np.ascontiguousarray(allowed, dtype=np.bool_).view(np.uint8)
            if aa.shape != (self.n,):
                raise ValueError(f"allowed must have shape ({self.n},), not {aa.shape}")
            av = aa
            if self.n:
                ap = &av[0]
        rows = np.empty(max(k, 1), dtype=np.uint32)
        out = np.empty(max(k, 1), dtype=np.float64)
        cdef uint32_t[::1] rv = rows
        cdef double[::1] ov = out
        cdef const float[::1] qv = qa
        cdef const float[:, ::1] mv = self._m
        cdef const int8_t[:, ::1] cv = self._codes
        cdef const float[::1] sv = self._scales
        cdef const int32_t[::1] lv = self._l1
        cdef const float[::1] resv = self._resid
        cdef size_t got = 0, kk = k
        cdef TopKStats stats
        if self.n and kk:
            with nogil:
                got = exact_top_k(&mv[0, 0], &cv[0, 0], &sv[0], &lv[0], &resv[0], self.n, self.d, &qv[0], ap, kk,
                                  &rv[0], &ov[0], &stats, threads)
            self.scored_exactly = stats.scored_exactly
        return rows[:got].astype(np.int64), out[:got]

    @property
    def matrix(self):
        """The rows (float32, read-only view)."""
        v = self._m.view()
        v.flags.writeable = False
        return v
