# The text module's shared declarations (lexical.pyx cimports the vocabulary).
from libcpp.mutex cimport mutex

from codelex._native.cpp_tokenizer cimport DocumentTokenizer
from codelex._native.cpp_vocabulary cimport Vocabulary as CVocabulary


cdef class Vocabulary:
    cdef CVocabulary c
    cdef DocumentTokenizer* tokenizer  # identifier cache bound to this vocabulary
    cdef mutex lock
    cdef object base_refs  # the arrays behind a borrowed sorted base, else None
