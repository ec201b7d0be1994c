# Helpers shared by the binding modules (inline: each module gets its own copy).
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

cdef extern from *:
    """
    /* Valid addresses for empty arrays (never read: every native loop is bounded by a length). */
    static uint32_t codelex_dummy32 = 0;
    static uint64_t codelex_dummy64 = 0;
    static int64_t codelex_dummyi64 = 0;
    """
    uint32_t codelex_dummy32
    uint64_t codelex_dummy64
    int64_t codelex_dummyi64


cdef inline const char* utf8_of(object text, Py_ssize_t* size, list keep, str what) except NULL:
    """Point at the UTF-8 form of text (str or bytes), keeping owners alive in keep."""
    cdef bytes encoded
    if isinstance(text, str):
        try:
            return PyUnicode_AsUTF8AndSize(text, size)
        except UnicodeEncodeError:
            # Lone surrogates: pass them through as (ill-formed) bytes, which
            # the tokenizer treats as separators.
            encoded = (<str>text).encode("utf-8", "surrogatepass")
            keep.append(encoded)
            size[0] = PyBytes_GET_SIZE(encoded)
            return PyBytes_AS_STRING(encoded)
    if isinstance(text, bytes):
        size[0] = PyBytes_GET_SIZE(text)
        return PyBytes_AS_STRING(text)
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


cdef inline object copy_array(const void* data, size_t n, object dtype):
    """A new numpy array of n items of dtype, copied from data."""
    import numpy as np

    arr = np.empty(n, dtype=dtype)
    cdef uint8_t[::1] view
    if n:
        view = arr.view(np.uint8)
        memcpy(&view[0], data, n * arr.itemsize)
    return arr


cdef inline const uint32_t* u32_ptr(const uint32_t[::1] v):
    return &v[0] if v.shape[0] else &codelex_dummy32


cdef inline const int64_t* i64_ptr(const int64_t[::1] v):
    return &v[0] if v.shape[0] else &codelex_dummyi64


cdef inline const uint64_t* u64_ptr(const uint64_t[::1] v):
    return &v[0] if v.shape[0] else &codelex_dummy64
