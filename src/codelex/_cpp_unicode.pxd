# Declarations of csrc/unicode.hpp.
cdef extern from "unicode.hpp" namespace "codelex" nogil:
    const char* unicode_version()
