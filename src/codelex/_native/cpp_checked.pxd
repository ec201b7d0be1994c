# Declarations of csrc/storage/checked.hpp.
from libc.stdint cimport uint8_t, uint64_t

cdef extern from "storage/checked.hpp" namespace "codelex" nogil:
    size_t kCheckChunk
    uint64_t chunk_digest(const uint8_t* p, size_t n)
    size_t chunk_count(size_t n)
    void chunk_digests(const uint8_t* p, size_t n, uint64_t* out)

    cdef cppclass CheckedRegion:
        void reset(const void* data, size_t bytes, const uint64_t* digests, const char* name) except +
        void ensure(size_t begin, size_t end) except +
        void ensure_all() except +
        size_t verified_chunks()
        size_t chunks()
