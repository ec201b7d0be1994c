# Declarations of csrc/text/definitions.hpp.
from libc.stdint cimport uint32_t
from libcpp cimport bool
from libcpp.vector cimport vector

cdef extern from "text/definitions.hpp" namespace "codelex" nogil:
    cdef struct DefinitionName:
        uint32_t line
        uint32_t begin
        uint32_t end

    void scan_definitions(const char* data, size_t n, bool go, vector[DefinitionName]& out) except +
