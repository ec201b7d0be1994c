# Declarations of csrc/score/bm25.hpp.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from codelex._native.cpp_live_index cimport LiveIndex
from codelex._native.cpp_topk cimport SearchHit

cdef extern from "score/bm25.hpp" namespace "codelex" nogil:
    cdef uint32_t kNoTerm

    cdef struct FieldTerm:
        uint32_t ids[4]
        double weight
        bint query_token

    cdef struct FieldParams:
        double w[4]
        double b[4]
        double def_boost
        double name_boost

    cdef struct GlobalStats:
        uint64_t n_docs
        uint64_t total_tokens
        uint64_t field_totals[3]
        const uint64_t* df
        size_t n_df

    cdef struct SearchRequest:
        const uint32_t* term_ids
        size_t n_term_ids
        uint64_t generation
        const uint8_t* allowed
        size_t allowed_len
        const double* multiplier
        size_t multiplier_len
        double multiplier_max
        size_t limit
        double k1
        double b
        bint exhaustive
        int64_t prune_min_postings
        bint fields
        const FieldTerm* field_terms
        size_t n_field_terms
        size_t n_query_tokens
        FieldParams field_params
        const GlobalStats* glob "global"

    cdef enum class SearchStatus(int):
        kOk
        kStale
        kBadLength

    cdef cppclass Scorer:
        Scorer() except +
        SearchStatus search(const LiveIndex& index, const SearchRequest& req, vector[SearchHit]& out) except +

    double bm25_idf(double n_docs, double df)
    void local_stats(const LiveIndex& index, const uint32_t* terms, size_t n, GlobalStats& out,
                     uint64_t* dfs) except +
