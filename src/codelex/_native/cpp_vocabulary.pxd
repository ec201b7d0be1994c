# Declarations of csrc/text/vocabulary.hpp.
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.string_view cimport string_view
from libcpp.vector cimport vector

cdef extern from "text/term_blocks.hpp" namespace "codelex" nogil:
    size_t kTermBlock
    size_t term_blocks(size_t n_terms)
    bool front_code(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n, vector[char]& out,
                    vector[uint64_t]& block_offsets) except +

cdef extern from "text/vocabulary.hpp" namespace "codelex" nogil:
    size_t kFilterBlockWords
    size_t filter_blocks(size_t n_terms)
    void filter_add(uint64_t* words, size_t n_blocks, uint64_t h)
    uint64_t hash_bytes(const char* s, size_t n)
    size_t kHeadEvery
    uint64_t term_head(const char* s, size_t n)
    cdef cppclass Vocabulary:
        Vocabulary() except +
        uint32_t intern(const char* s, size_t n) except +
        int64_t find(const char* s, size_t n) except +
        int64_t lookup(const char* s, size_t n) except +
        size_t size()
        size_t base_size()
        string_view term(uint32_t id, string& scratch) except +
        size_t memory_bytes()
        size_t term_bytes() except +
        bool assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n) except +
        const char* assign_sorted(const char* blocks, size_t blocks_len, const uint64_t* offset_base,
                                  const uint32_t* offset_rel, size_t n,
                                  const uint64_t* blocks_digests, const uint64_t* offset_digests,
                                  const uint64_t* heads, const uint64_t* filter,
                                  const uint64_t* filter_digests) except +
        void sorted_order(vector[uint32_t]& order) except +
        void verify_base() except +
        void base_prefix_range(const char* s, size_t n, size_t& first, size_t& last) except +
        void base_words(const char* prefix, size_t n, size_t min_len, size_t max_len, vector[uint32_t]& ids) except +
        void clear()
        void shrink_to_fit()
        void intern_all(const Vocabulary& other, vector[uint32_t]& remap) except +
        void absorb(Vocabulary& other, vector[uint32_t]& remap) except +
        void absorb_sorted(const vector[Vocabulary*]& others, vector[vector[uint32_t]]& remaps) except +
    cdef cppclass TermReader:
        TermReader()
        TermReader(const Vocabulary* v)
        string_view get(uint32_t id) except +
