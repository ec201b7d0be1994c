# Declarations of csrc/dense/vectors.hpp.
from libc.stdint cimport int8_t, int32_t, uint8_t, uint32_t

cdef extern from "dense/vectors.hpp" namespace "codelex" nogil:
    cdef cppclass TopKStats:
        size_t scored_exactly
    void quantize_rows(const float* m, size_t n, size_t d, int8_t* codes, float* scales, int32_t* l1, float* resid)
    double exact_dot(const float* row, const float* q, size_t d)
    void exact_dots(const float* m, size_t n, size_t d, const float* q, double* out)
    size_t exact_top_k(const float* m, const int8_t* codes, const float* scales, const int32_t* l1, const float* resid, size_t n,
                       size_t d, const float* q, const uint8_t* allowed, size_t k, uint32_t* out_rows,
                       double* out_scores, TopKStats* stats, int threads)
