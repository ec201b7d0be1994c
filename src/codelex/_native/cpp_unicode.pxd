# Declarations of csrc/text/unicode.hpp.
cdef extern from "text/unicode.hpp" namespace "codelex" nogil:
    const char* unicode_version()
