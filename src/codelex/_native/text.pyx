# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the text stage (csrc/text/): tokenizer and vocabulary.

Public API: :mod:`codelex.text`.  Every entry point validates its Python
arguments before native memory is touched, and releases the GIL around loops
whose cost grows with the input.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from codelex._native.buffers cimport copy_array, utf8_of
from codelex._native.cpp_tokenizer cimport (
    DocumentTokenizer, IdentifierSplitter, Occurrences, TokenList,
    split_identifier as c_split_identifier,
    tokenize_line as c_tokenize_line,
)
from codelex._native.cpp_definitions cimport DefinitionName, scan_definitions as c_scan_definitions
from codelex._native.cpp_unicode cimport unicode_version as c_unicode_version
from libcpp.vector cimport vector

import numpy as np

# Inputs at least this long are tokenized with the GIL released (and private
# scratch buffers); shorter ones reuse the module's scratch under the GIL.
DEF _NOGIL_BYTES = 65536

cdef IdentifierSplitter _shared_splitter
cdef TokenList _shared_tokens

IS_NATIVE = True
UNICODE_VERSION = c_unicode_version().decode("ascii")


cdef list _to_list(TokenList& tokens):
    cdef list out = []
    cdef size_t i
    cdef const char* base = tokens.buf.data()
    for i in range(tokens.offsets.size() - 1):
        out.append(PyUnicode_DecodeUTF8(base + tokens.offsets[i],
                                        tokens.offsets[i + 1] - tokens.offsets[i], "surrogatepass"))
    return out


def split_identifier(identifier):
    """Native twin of :func:`codelex.split_identifier`."""
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data
    if isinstance(identifier, bytes):
        identifier = (<bytes>identifier).decode("utf-8", "replace")
    data = utf8_of(identifier, &n, keep, "identifier")
    cdef IdentifierSplitter splitter
    cdef TokenList tokens
    if n < _NOGIL_BYTES:
        c_split_identifier(data, n, _shared_splitter, _shared_tokens)
        return _to_list(_shared_tokens)
    with nogil:
        c_split_identifier(data, n, splitter, tokens)
    return _to_list(tokens)


def tokenize_line(line):
    """Native twin of :func:`codelex.tokenize_line`."""
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data = utf8_of(line, &n, keep, "line")
    cdef IdentifierSplitter splitter
    cdef TokenList tokens
    if n < _NOGIL_BYTES:
        c_tokenize_line(data, n, _shared_splitter, _shared_tokens)
        return _to_list(_shared_tokens)
    with nogil:
        c_tokenize_line(data, n, splitter, tokens)
    return _to_list(tokens)


def utf8_length(content):
    """Bytes of ``content`` (str or bytes) in UTF-8, as the tokenizer reads it."""
    cdef list keep = []
    cdef Py_ssize_t n
    utf8_of(content, &n, keep, "content")
    return n


cdef class Vocabulary:
    """Interned token strings with dense ids (the index's term dictionary)."""

    def __cinit__(self):
        self.tokenizer = new DocumentTokenizer(self.c)

    def __dealloc__(self):
        del self.tokenizer

    def __len__(self):
        return self.c.size()

    def intern(self, token):
        """Return the id of ``token`` (str or bytes), adding it when new."""
        cdef list keep = []
        cdef Py_ssize_t n
        cdef const char* data = utf8_of(token, &n, keep, "token")
        cdef uint32_t tid
        with nogil:
            self.lock.lock()
            tid = self.c.intern(data, n)
            self.lock.unlock()
        return tid

    def find(self, token):
        """Return the id of ``token``, or -1 when it is not in the vocabulary."""
        cdef list keep = []
        cdef Py_ssize_t n
        cdef const char* data = utf8_of(token, &n, keep, "token")
        cdef int64_t tid
        with nogil:
            self.lock.lock()
            tid = self.c.find(data, n)
            self.lock.unlock()
        return tid

    def term(self, Py_ssize_t tid):
        """Return the token string of id ``tid``."""
        if tid < 0 or <size_t>tid >= self.c.size():
            raise IndexError(f"term id {tid} out of range")
        cdef uint64_t start = self.c.offsets()[tid]
        cdef uint64_t stop = self.c.offsets()[tid + 1]
        return PyUnicode_DecodeUTF8(self.c.arena().data() + start, stop - start, "surrogatepass")

    def terms(self):
        """Return every token string, in id order."""
        return [self.term(i) for i in range(self.c.size())]

    def words(self, Py_ssize_t start=0, Py_ssize_t min_len=3, Py_ssize_t max_len=24):
        """The terms from id ``start`` on that are words: ASCII lower-case letters only, ``min_len`` to ``max_len`` long."""
        if start < 0 or min_len < 1 or max_len < min_len:
            raise ValueError("start must be >= 0 and 1 <= min_len <= max_len")
        cdef vector[uint32_t] found
        cdef size_t i, j, n, a, b
        cdef const char* arena
        cdef bint ok
        cdef char c
        self.lock.lock()
        try:
            n = self.c.size()
            arena = self.c.arena().data()
            with nogil:
                for i in range(<size_t>start, n):
                    a = self.c.offsets()[i]
                    b = self.c.offsets()[i + 1]
                    if b - a < <size_t>min_len or b - a > <size_t>max_len:
                        continue
                    ok = True
                    for j in range(a, b):
                        c = arena[j]
                        if c < 97 or c > 122:
                            ok = False
                            break
                    if ok:
                        found.push_back(<uint32_t>i)
            out = [PyUnicode_DecodeUTF8(arena + self.c.offsets()[k], self.c.offsets()[k + 1] - self.c.offsets()[k],
                                        "strict") for k in found]
        finally:
            self.lock.unlock()
        return out

    def memory_bytes(self):
        """Bytes held by the dictionary (arena, offsets and hash table)."""
        return self.c.memory_bytes()

    def to_arrays(self):
        """Return ``(blob, offsets)``: uint8 term bytes and uint64 offsets (n + 1)."""
        cdef size_t nbytes = self.c.arena().size()
        cdef size_t nterms = self.c.size()
        blob = np.empty(nbytes, dtype=np.uint8)
        offsets = np.empty(nterms + 1, dtype=np.uint64)
        cdef uint8_t[::1] bview = blob
        cdef uint64_t[::1] oview = offsets
        if nbytes:
            memcpy(&bview[0], self.c.arena().data(), nbytes)
        memcpy(&oview[0], self.c.offsets().data(), (nterms + 1) * sizeof(uint64_t))
        return blob, offsets

    @staticmethod
    def from_arrays(blob, offsets):
        """Rebuild a vocabulary from :meth:`to_arrays` output.

        Raises ``ValueError`` when the arrays are inconsistent.
        """
        cdef const uint8_t[::1] bview = np.ascontiguousarray(blob, dtype=np.uint8)
        cdef const uint64_t[::1] oview = np.ascontiguousarray(offsets, dtype=np.uint64)
        if oview.shape[0] < 1:
            raise ValueError("vocabulary offsets must hold at least one entry")
        cdef Vocabulary vocab = Vocabulary()
        cdef bint ok
        cdef const char* bptr = NULL
        if bview.shape[0]:
            bptr = <const char*>&bview[0]
        with nogil:
            ok = vocab.c.assign(bptr, bview.shape[0], &oview[0], oview.shape[0] - 1)
            vocab.tokenizer.reset_cache()
        if not ok:
            raise ValueError("vocabulary arrays are inconsistent (offsets or duplicate terms)")
        return vocab


def tokenize_document(content, Vocabulary vocab not None):
    """Tokenize a whole document into interned token occurrences.

    Returns ``(terms, lines)``, two uint32 arrays of equal length: token
    occurrence ``i`` has id ``terms[i]`` in ``vocab`` and occurs on line
    ``lines[i]`` (1-based).  Runs with the GIL released.
    """
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data = utf8_of(content, &n, keep, "content")
    cdef Occurrences occ
    with nogil:
        vocab.lock.lock()
        try:
            vocab.tokenizer.tokenize(data, n, occ)
        finally:
            vocab.lock.unlock()
    return (copy_array(occ.terms.data(), occ.terms.size(), np.uint32),
            copy_array(occ.lines.data(), occ.lines.size(), np.uint32))


def scan_definitions(path, content):
    """Native twin of the definition scanner: ``[(name, line)]`` of ``content`` (str or bytes).

    ``path`` selects the language rules (a ``.go`` path the Go ones).
    """
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data = utf8_of(content, &n, keep, "content")
    cdef vector[DefinitionName] out
    cdef bint go = path.endswith(".go")
    with nogil:
        c_scan_definitions(data, n, go, out)
    return [(PyUnicode_DecodeUTF8(data + d.begin, d.end - d.begin, "surrogatepass"), d.line) for d in out]
