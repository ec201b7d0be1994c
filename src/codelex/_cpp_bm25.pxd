# Declarations of csrc/bm25.hpp.
from libc.stdint cimport int64_t, uint8_t, uint32_t
from libcpp.vector cimport vector

cdef extern from "bm25.hpp" namespace "codelex" nogil:
    cdef struct SegmentView:
        const int64_t* term_ptr
        size_t n_terms
        const uint32_t* post_doc
        const uint32_t* post_tf
        const int64_t* term_line_ptr
        const uint32_t* post_line_off
        const uint8_t* line_data
        size_t line_bytes

    cdef struct QueryTerm:
        uint32_t term
        double idf

    cdef struct SearchRequest:
        const QueryTerm* terms
        size_t n_terms
        double k1
        double b
        double avgdl
        const uint32_t* doc_len
        size_t n_docs
        const uint8_t* allowed
        const double* multiplier
        const uint32_t* path_rank
        size_t limit

    cdef struct SearchHit:
        uint32_t doc
        uint32_t hits
        uint32_t line
        double score

    cdef cppclass Scorer:
        Scorer() except +
        void search(const SegmentView& seg, const SearchRequest& req, vector[SearchHit]& out) except +

    double bm25_idf(double n_docs, double df)
    const char* validate_segment(const SegmentView& seg, size_t n_docs)
