# Declarations of csrc/text/vocabulary.hpp.
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.vector cimport vector

cdef extern from "text/vocabulary.hpp" namespace "codelex" nogil:
    cdef cppclass Vocabulary:
        Vocabulary() except +
        uint32_t intern(const char* s, size_t n) except +
        int64_t find(const char* s, size_t n)
        size_t size()
        const vector[char]& arena()
        const vector[uint64_t]& offsets()
        size_t memory_bytes()
        bool assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n) except +
        void clear()
        void shrink_to_fit()
        void intern_all(const Vocabulary& other, vector[uint32_t]& remap) except +
