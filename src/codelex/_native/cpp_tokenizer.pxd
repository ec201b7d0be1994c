# Declarations of csrc/text/tokenizer.hpp.
from libc.stdint cimport uint32_t
from libcpp cimport bool
from libcpp.string cimport string
from libcpp.vector cimport vector

from codelex._native.cpp_vocabulary cimport Vocabulary

cdef extern from "text/tokenizer.hpp" namespace "codelex" nogil:
    cdef cppclass IdentifierSplitter:
        IdentifierSplitter() except +

    cdef cppclass TokenList:
        string buf
        vector[uint32_t] offsets

    cdef cppclass Occurrences:
        vector[uint32_t] terms
        vector[uint32_t] lines

    bool is_stopword(const char* s, size_t n)
    void split_identifier(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out) except +
    void tokenize_line(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out) except +

    cdef cppclass DefinitionList:
        vector[string] names
        vector[uint32_t] lines

    cdef cppclass DocumentTokenizer:
        DocumentTokenizer(Vocabulary& vocab) except +
        void tokenize(const char* data, size_t n, Occurrences& out) except +
        void reset_cache()
