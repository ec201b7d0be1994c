# Declarations of csrc/text/definitions.hpp.
from libc.stdint cimport uint8_t, uint32_t
from libcpp.vector cimport vector

cdef extern from "text/definitions.hpp" namespace "codelex" nogil:
    cdef struct DefinitionName:
        uint32_t line
        uint32_t begin
        uint32_t end

    const uint8_t kDefinitionRuleCount

    uint8_t definition_rules_of(const char* path, size_t n)
    void scan_definitions(const char* data, size_t n, uint8_t rules, vector[DefinitionName]& out) except +
