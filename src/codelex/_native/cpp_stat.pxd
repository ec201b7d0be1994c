# Declarations of csrc/ingest/stat.hpp.
from libc.stdint cimport int64_t, uint8_t, uint64_t
from libcpp cimport bool
from libcpp.string cimport string

cdef extern from "ingest/stat.hpp" namespace "codelex" nogil:
    bool batch_stat_supported()
    bool stat_paths(const string& root, const char* blob, size_t blob_len, size_t n, int64_t* mtime, int64_t* size,
                    uint8_t* kind, int threads) except +
