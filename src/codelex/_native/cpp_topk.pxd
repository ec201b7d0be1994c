# Declarations of csrc/score/topk.hpp.
from libc.stdint cimport uint32_t

cdef extern from "score/topk.hpp" namespace "codelex" nogil:
    cdef struct SearchHit:
        uint32_t doc
        uint32_t hits
        uint32_t line
        double score
        uint32_t fields
