# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the ingest stage's native part (csrc/ingest/): batch lstat.

Public API: :func:`codelex.ingest.list_files`.  Arguments are validated
before native memory is touched; the stat loop runs without the GIL.
"""

from libc.stdint cimport int64_t, uint8_t
from libcpp.string cimport string

from codelex._native.cpp_stat cimport batch_stat_supported, stat_paths as c_stat_paths

import os

import numpy as np

#: lstat kinds, as :func:`stat_paths` reports them.
MISSING, FILE, DIRECTORY, SYMLINK, OTHER, ERROR = range(6)
SUPPORTED = batch_stat_supported()


def stat_paths(root, list paths not None, int threads=2):
    """``(mtime_ns, size, kind)`` arrays (int64, int64, uint8) for root-relative ``/`` paths, by lstat.

    Kinds: :data:`MISSING`, :data:`FILE`, :data:`DIRECTORY`, :data:`SYMLINK`,
    :data:`OTHER`, :data:`ERROR` (mtime and size -1 for the first and last).
    Raises ``RuntimeError`` where batch lstat is not supported
    (:data:`SUPPORTED` is False: Windows).
    """
    if not SUPPORTED:
        raise RuntimeError("batch lstat is not supported on this platform")
    cdef bytes root_py = os.fsencode(os.fspath(root))
    if b"\0" in root_py:
        raise ValueError("root contains a NUL character")
    cdef string root_b = root_py
    for p in paths:
        if not isinstance(p, str):
            raise TypeError(f"paths must be str, not {type(p).__name__}")
    # One encode for all: NUL-terminated paths (no path may hold a NUL).
    cdef size_t n = len(paths)
    cdef bytes blob = os.fsencode("\0".join(paths) + "\0") if n else b""
    if blob.count(b"\0") != n:
        raise ValueError("a path contains a NUL character")
    mtime = np.empty(n, dtype=np.int64)
    size = np.empty(n, dtype=np.int64)
    kind = np.empty(n, dtype=np.uint8)
    cdef int64_t[::1] mv = mtime
    cdef int64_t[::1] sv = size
    cdef uint8_t[::1] kv = kind
    cdef const char* bp = blob
    cdef size_t blen = len(blob)
    cdef int t = max(1, threads)
    cdef bint ok = True
    if n:
        with nogil:
            ok = c_stat_paths(root_b, bp, blen, n, &mv[0], &sv[0], &kv[0], t)
    if not ok:
        raise ValueError("a path contains a NUL character")
    return mtime, size, kind
