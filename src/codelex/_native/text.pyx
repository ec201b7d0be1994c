# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the text stage (csrc/text/): tokenizer and vocabulary.

Public API: :mod:`codelex.text`.  Every entry point validates its Python
arguments before native memory is touched, and releases the GIL around loops
whose cost grows with the input.
"""

from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy

from codelex._native.buffers cimport copy_array, utf8_of
from codelex._native.cpp_tokenizer cimport (
    DocumentTokenizer, IdentifierSplitter, Occurrences, TokenList,
    split_identifier as c_split_identifier,
    tokenize_line as c_tokenize_line,
)
from codelex._native.cpp_definitions cimport (
    DefinitionName,
    definition_rules_of as c_definition_rules_of,
    kDefinitionRuleCount,
    scan_definitions as c_scan_definitions,
)
from codelex._native.cpp_unicode cimport unicode_version as c_unicode_version
from codelex._native.cpp_checked cimport chunk_count, chunk_digests as c_chunk_digests, kCheckChunk
from codelex._native.cpp_vocabulary cimport (
    TermReader, Vocabulary as CVocabulary, filter_add, filter_blocks, front_code as c_front_code, hash_bytes,
    kFilterBlockWords, kHeadEvery, kTermBlock, term_blocks, term_head,
)
from codelex._native.cpp_docs cimport (
    DocsScoringRules, count_occurrences as c_count_occurrences, docs_section_scores as c_docs_section_scores,
)
from codelex._native.cpp_offsets cimport PackedOffsets, kOffsetBlock, offset_bases, pack_offsets as c_pack_offsets
from libcpp.string cimport string
from libcpp.string_view cimport string_view
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


def _dictionary_arrays(blocks, block_base, block_rel, Py_ssize_t n_terms, blocks_digests, offset_digests, heads,
                       filter, filter_digests):
    """:meth:`Vocabulary.from_front_coded`'s arrays, each checked for its type and its length against the others
    (``ValueError``); the digests converted when both are given (the dictionary is then checked lazily)."""
    blocks = _contiguous(blocks, np.uint8, "blocks")
    block_base = _contiguous(block_base, np.uint64, "block_base")
    block_rel = _contiguous(block_rel, np.uint32, "block_rel")
    if n_terms < 0:
        raise ValueError("n_terms must be >= 0")
    cdef size_t n = <size_t>n_terms
    if <size_t>block_rel.shape[0] != term_blocks(n) + 1:
        raise ValueError("term block offsets do not match the number of terms")
    if <size_t>block_base.shape[0] != offset_bases(block_rel.shape[0]):
        raise ValueError("term block offset bases do not cover the offsets")
    checked = blocks_digests is not None and offset_digests is not None
    if checked:
        blocks_digests = _contiguous(blocks_digests, np.uint64, "blocks_digests")
        offset_digests = _contiguous(offset_digests, np.uint64, "offset_digests")
        if <size_t>blocks_digests.shape[0] != chunk_count(blocks.nbytes) \
                or <size_t>offset_digests.shape[0] != chunk_count(block_rel.nbytes):
            raise ValueError("digest arrays do not cover the dictionary")
    if heads is not None:
        heads = _contiguous(heads, np.uint64, "heads")
        if <size_t>heads.shape[0] != (n + kHeadEvery - 1) // kHeadEvery:
            raise ValueError("heads do not cover the dictionary")
    if filter is not None:
        filter = _contiguous(filter, np.uint64, "filter")
        if <size_t>filter.shape[0] != filter_blocks(n) * kFilterBlockWords:
            raise ValueError("the term filter does not fit the dictionary")
        if checked:
            if filter_digests is None:
                raise ValueError("a checked dictionary needs the filter's digests")
            filter_digests = _contiguous(filter_digests, np.uint64, "filter_digests")
            if <size_t>filter_digests.shape[0] != chunk_count(filter.nbytes):
                raise ValueError("digest arrays do not cover the term filter")
    return blocks, block_base, block_rel, blocks_digests, offset_digests, heads, filter, filter_digests


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

    # The lock is only ever taken without the GIL (a thread waiting for it
    # must not hold the GIL that its holder may need to raise an error).

    def term(self, Py_ssize_t tid):
        """Return the token string of id ``tid``."""
        if tid < 0 or <size_t>tid >= self.c.size():
            raise IndexError(f"term id {tid} out of range")
        cdef string out, scratch
        cdef uint32_t i = <uint32_t>tid
        with nogil:
            self.lock.lock()
            try:
                out = string(self.c.term(i, scratch))  # (a view of the arena: copied under the lock)
            finally:
                self.lock.unlock()
        return PyUnicode_DecodeUTF8(out.data(), out.size(), "surrogatepass")

    def terms(self):
        """Return every token string, in id order."""
        cdef string buf
        cdef vector[size_t] ends
        cdef TermReader reader = TermReader(&self.c)
        cdef string_view t
        cdef size_t i, a = 0
        with nogil:
            self.lock.lock()
            try:
                for i in range(self.c.size()):
                    t = reader.get(<uint32_t>i)
                    buf.append(t.data(), t.size())
                    ends.push_back(buf.size())
            finally:
                self.lock.unlock()
        cdef list out = []
        for i in range(ends.size()):
            out.append(PyUnicode_DecodeUTF8(buf.data() + a, ends[i] - a, "surrogatepass"))
            a = ends[i]
        return out

    @property
    def base_size(self):
        """Terms in the sorted base (ids below this are in byte order); 0 for a vocabulary built here."""
        return self.c.base_size()

    def words(self, Py_ssize_t start=0, Py_ssize_t min_len=3, Py_ssize_t max_len=24):
        """The terms from id ``start`` on that are words: ASCII lower-case letters only, ``min_len`` to ``max_len`` long."""
        if start < 0 or min_len < 1 or max_len < min_len:
            raise ValueError("start must be >= 0 and 1 <= min_len <= max_len")
        cdef string buf
        cdef vector[size_t] ends
        with nogil:
            self.lock.lock()
            try:
                _append_words(self.c, <size_t>start, self.c.size(), min_len, max_len, buf, ends)
            finally:
                self.lock.unlock()
        return _split_ascii(buf, ends)

    def base_words(self, str prefix not None, Py_ssize_t min_len=3, Py_ssize_t max_len=24):
        """The sorted base's words (as :meth:`words` defines them) that start with ``prefix``, in byte order."""
        if min_len < 1 or max_len < min_len:
            raise ValueError("1 <= min_len <= max_len")
        cdef bytes raw = prefix.encode("utf-8", "surrogatepass")
        cdef const char* rp = raw
        cdef size_t rn = len(raw)
        cdef string buf
        cdef vector[size_t] ends
        cdef vector[uint32_t] ids
        cdef TermReader reader = TermReader(&self.c)
        cdef string_view t
        cdef size_t i
        with nogil:
            self.lock.lock()
            try:
                self.c.base_words(rp, rn, <size_t>min_len, <size_t>max_len, ids)
                for i in range(ids.size()):
                    t = reader.get(ids[i])
                    buf.append(t.data(), t.size())
                    ends.push_back(buf.size())
            finally:
                self.lock.unlock()
        return _split_ascii(buf, ends)

    def base_prefix_range(self, prefix):
        """The base ids ``(first, last)`` (half-open) of the sorted base's terms that start with ``prefix``."""
        cdef list keep = []
        cdef Py_ssize_t n
        cdef const char* data = utf8_of(prefix, &n, keep, "prefix")
        cdef size_t first = 0, last = 0
        with nogil:
            self.lock.lock()
            try:
                self.c.base_prefix_range(data, n, first, last)
            finally:
                self.lock.unlock()
        return first, last

    def verify(self):
        """Verify every chunk of a sorted base now (a mismatch raises ``RuntimeError('corrupt index: ...')``)."""
        with nogil:
            self.c.verify_base()

    def memory_bytes(self):
        """Bytes held by the overlay (arena, offsets and hash table; a borrowed base is not counted)."""
        return self.c.memory_bytes()

    def sorted_order(self):
        """The term ids in byte order of their terms (uint32); the identity when nothing was added to a sorted base."""
        cdef vector[uint32_t] order
        with nogil:
            self.lock.lock()
            try:
                self.c.sorted_order(order)
            finally:
                self.lock.unlock()
        return copy_array(order.data(), order.size(), np.uint32)

    def to_arrays(self, order=None):
        """Return ``(blob, offsets)``: uint8 term bytes and uint64 offsets (n + 1), in id order or in ``order``."""
        cdef size_t nterms, nbytes
        # The caller keeps writers away (the index's write lock): size and bytes stay put.
        nterms = self.c.size()
        if order is not None:
            order = np.ascontiguousarray(order, dtype=np.uint32)
            if <size_t>order.shape[0] != nterms or (nterms and int(order.max()) >= nterms):
                raise ValueError("order must name every term once")
            seen = np.zeros(nterms, dtype=bool)
            seen[order] = True
            if not seen.all():
                raise ValueError("order must name every term once")
        with nogil:
            self.lock.lock()
            try:
                nbytes = self.c.term_bytes()
            finally:
                self.lock.unlock()
        blob = np.empty(nbytes, dtype=np.uint8)
        offsets = np.empty(nterms + 1, dtype=np.uint64)
        _fill_arrays(self, blob, offsets, order)
        return blob, offsets

    @staticmethod
    def from_arrays(blob, offsets):
        """Rebuild a vocabulary from :meth:`to_arrays` output (copied).

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

    @staticmethod
    def from_sorted(blob, offset_base, offset_rel, heads=None, filter=None):
        """A vocabulary over sorted terms given whole: front-coded here (:func:`front_code`), then installed
        as :meth:`from_front_coded` installs a saved dictionary, validated in full.

        Parameters
        ----------
        blob : numpy.ndarray
            The terms' bytes (uint8), in strictly ascending byte order.
        offset_base, offset_rel : numpy.ndarray
            The terms' offsets into ``blob``, packed (:func:`pack_offsets`).
        heads, filter : numpy.ndarray, optional
            :func:`term_heads` and :func:`term_filter` of the terms.

        Raises
        ------
        ValueError
            When the arrays are inconsistent or the terms not strictly ascending.
        """
        blob = _contiguous(blob, np.uint8, "blob")
        offset_base = _contiguous(offset_base, np.uint64, "offset_base")
        offset_rel = _contiguous(offset_rel, np.uint32, "offset_rel")
        if offset_rel.shape[0] < 1:
            raise ValueError("vocabulary offsets must hold at least one entry")
        if <size_t>offset_base.shape[0] != offset_bases(offset_rel.shape[0]):
            raise ValueError("vocabulary offset bases do not cover the offsets")
        offsets = unpack_offsets(offset_base, offset_rel)
        if offsets[0] != 0 or (offsets.shape[0] > 1 and np.any(offsets[1:] < offsets[:-1])):
            raise ValueError("term offsets are not monotonic")
        blocks, block_offsets = front_code(blob, offsets)
        block_base, block_rel = pack_offsets(block_offsets)
        return Vocabulary.from_front_coded(blocks, block_base, block_rel, offsets.shape[0] - 1, heads=heads,
                                           filter=filter)

    @staticmethod
    def from_front_coded(blocks, block_base, block_rel, Py_ssize_t n_terms, blocks_digests=None,
                         offset_digests=None, heads=None, filter=None, filter_digests=None):
        """A vocabulary over a saved sorted dictionary, borrowed in place (nothing is copied, decoded or hashed).

        Parameters
        ----------
        blocks : numpy.ndarray
            The front-coded blocks of the terms (uint8; :func:`front_code`).
        block_base, block_rel : numpy.ndarray
            The blocks' offsets (one per block, plus the end), packed (:func:`pack_offsets`).
        n_terms : int
            How many terms the blocks hold (:data:`TERM_BLOCK` a block, the last one fewer).
        blocks_digests, offset_digests : numpy.ndarray, optional
            :func:`chunk_digests` of ``blocks`` and ``block_rel``: with both, every 64 KiB chunk is verified when
            first read (a mismatch, or a malformed block, raises ``RuntimeError('corrupt index: ...')`` then);
            without, the whole structure is validated here (every block decodes within its bounds to its
            terms, strictly ascending; heads and filter agree with them).
        heads, filter, filter_digests : numpy.ndarray, optional
            :func:`term_heads` and :func:`term_filter` of the terms (with digests, the filter's too), which
            speed lookups up.

        Raises
        ------
        ValueError
            When the arrays are inconsistent.
        """
        (blocks, block_base, block_rel, blocks_digests, offset_digests, heads, filter, filter_digests) = \
            _dictionary_arrays(blocks, block_base, block_rel, n_terms, blocks_digests, offset_digests, heads,
                               filter, filter_digests)
        checked = blocks_digests is not None and offset_digests is not None
        cdef size_t n = <size_t>n_terms
        cdef const uint8_t[::1] bview = blocks
        cdef const uint64_t[::1] obase = block_base
        cdef const uint32_t[::1] orel = block_rel
        cdef const uint64_t[::1] bd
        cdef const uint64_t[::1] od
        cdef const uint64_t* bdp = NULL
        cdef const uint64_t* odp = NULL
        if checked:
            bd = blocks_digests
            od = offset_digests
            bdp = &bd[0] if bd.shape[0] else NULL
            odp = &od[0] if od.shape[0] else NULL
        cdef const uint64_t[::1] hv
        cdef const uint64_t* hp = NULL
        if heads is not None:
            hv = heads
            hp = &hv[0] if hv.shape[0] else NULL
        cdef const uint64_t[::1] fv
        cdef const uint64_t[::1] fdv
        cdef const uint64_t* fp = NULL
        cdef const uint64_t* fdp = NULL
        if filter is not None:
            fv = filter
            fp = &fv[0]
            if checked:
                fdv = filter_digests
                fdp = &fdv[0]
        cdef Vocabulary vocab = Vocabulary()
        cdef const char* err
        cdef const char* bptr = <const char*>&bview[0] if bview.shape[0] else NULL
        cdef const uint64_t* bp = &obase[0] if obase.shape[0] else NULL
        with nogil:
            err = vocab.c.assign_sorted(bptr, bview.shape[0], bp, &orel[0], n, bdp, odp, hp, fp, fdp)
            vocab.tokenizer.reset_cache()
        if err != NULL:
            raise ValueError(err.decode("ascii"))
        vocab.base_refs = (blocks, block_base, block_rel, blocks_digests, offset_digests, heads, filter,
                           filter_digests)
        return vocab


cdef inline bint _is_word(string_view t, Py_ssize_t min_len, Py_ssize_t max_len) noexcept nogil:
    cdef size_t j
    cdef char c
    if t.size() < <size_t>min_len or t.size() > <size_t>max_len:
        return False
    for j in range(t.size()):
        c = t.data()[j]
        if c < 97 or c > 122:
            return False
    return True


cdef int _append_words(CVocabulary& c, size_t first, size_t last, Py_ssize_t min_len, Py_ssize_t max_len,
                       string& buf, vector[size_t]& ends) except -1 nogil:
    """Appends the words among terms [first, last) to buf, each ending at the next entry of ends (lock held)."""
    cdef size_t i
    cdef string_view t
    cdef TermReader reader = TermReader(&c)
    for i in range(first, last):
        t = reader.get(<uint32_t>i)
        if _is_word(t, min_len, max_len):
            buf.append(t.data(), t.size())
            ends.push_back(buf.size())
    return 0


cdef list _split_ascii(string& buf, vector[size_t]& ends):
    cdef list out = []
    cdef size_t i, a = 0
    for i in range(ends.size()):
        out.append(PyUnicode_DecodeUTF8(buf.data() + a, ends[i] - a, "strict"))
        a = ends[i]
    return out


cdef _fill_arrays(Vocabulary vocab, blob, offsets, order):
    """Copies the terms (in id order, or in ``order``) into ``blob`` and ``offsets``; the caller holds the lock."""
    cdef uint8_t[::1] bview = blob
    cdef uint64_t[::1] oview = offsets
    cdef const uint32_t[::1] ov
    cdef size_t i, n = oview.shape[0] - 1, pos = 0
    cdef uint32_t tid
    cdef string_view t
    cdef TermReader reader = TermReader(&vocab.c)  # (base ids in increasing order decode incrementally)
    cdef bint ordered = order is not None
    if ordered:
        ov = order
    with nogil:
        vocab.lock.lock()
        try:
            oview[0] = 0
            for i in range(n):
                tid = ov[i] if ordered else <uint32_t>i
                t = reader.get(tid)
                if t.size() > <size_t>bview.shape[0] - pos:  # (term_bytes() read the same blocks: never, but bounded)
                    raise RuntimeError("corrupt index: the terms changed while they were copied")
                if t.size():
                    memcpy(&bview[pos], t.data(), t.size())
                pos += t.size()
                oview[i + 1] = pos
        finally:
            vocab.lock.unlock()


cdef object _contiguous(arr, dtype, str name):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, not {type(arr).__name__}")
    if arr.dtype != dtype or arr.ndim != 1 or not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be a contiguous 1-d {np.dtype(dtype).name} array")
    return arr


def chunk_digests(arr):
    """The native digests of every 64 KiB chunk of a contiguous array's bytes (uint64; what lazy checks compare)."""
    cdef const uint8_t[::1] view = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
    cdef size_t n = view.shape[0]
    out = np.empty(chunk_count(n), dtype=np.uint64)
    cdef uint64_t[::1] ov = out
    if n:
        with nogil:
            c_chunk_digests(&view[0], n, &ov[0])
    return out


CHECK_CHUNK = kCheckChunk
#: Terms per head (see :func:`term_heads`).
HEAD_EVERY = kHeadEvery
#: Terms per front-coded block (see :func:`front_code`).
TERM_BLOCK = kTermBlock
#: Entries per 64-bit base of packed offsets (see :func:`pack_offsets`).
OFFSET_BLOCK = kOffsetBlock


def pack_offsets(offsets):
    """Pack monotonic uint64 offsets as saved: ``(base, rel)``.

    ``base`` (uint64) holds every :data:`OFFSET_BLOCK`-th value and ``rel``
    (uint32) each value minus its block's base.  Raises ``ValueError`` when
    the values decrease or a block spans 2**32 or more.
    """
    cdef const uint64_t[::1] v = np.ascontiguousarray(offsets, dtype=np.uint64)
    cdef size_t n = v.shape[0]
    base = np.zeros(offset_bases(n), dtype=np.uint64)
    rel = np.zeros(n, dtype=np.uint32)
    cdef uint64_t[::1] bv = base
    cdef uint32_t[::1] rv = rel
    cdef PackedOffsets src
    cdef bint ok = True
    if n:
        src.plain = &v[0]
        with nogil:
            ok = c_pack_offsets(src, n, &bv[0], &rv[0])
    if not ok:
        raise ValueError("offsets decrease or span too much to pack")
    return base, rel


def unpack_offsets(base, rel):
    """The plain uint64 offsets of a packed pair (the inverse of :func:`pack_offsets`)."""
    base = np.asarray(base, dtype=np.uint64)
    rel = np.asarray(rel, dtype=np.uint32)
    if base.shape[0] != (rel.shape[0] + kOffsetBlock - 1) // kOffsetBlock:
        raise ValueError("offset bases do not cover the offsets")
    return np.repeat(base, kOffsetBlock)[: rel.shape[0]] + rel.astype(np.uint64)


def front_code(blob, offsets):
    """Front-code sorted terms (``blob``, plain uint64 ``offsets``) as a dictionary is saved.

    Returns ``(blocks, block_offsets)``: :data:`TERM_BLOCK` terms a block, the first whole, each next one as the
    bytes it drops from and adds to the one before (csrc/text/term_blocks.hpp);
    ``block_offsets`` (uint64) holds where each block starts, plus the end.
    Raises ``ValueError`` when the offsets do not describe ``blob`` or the
    terms are not strictly ascending in byte order.
    """
    cdef const uint8_t[::1] bview = np.ascontiguousarray(blob, dtype=np.uint8)
    cdef const uint64_t[::1] oview = np.ascontiguousarray(offsets, dtype=np.uint64)
    if oview.shape[0] < 1:
        raise ValueError("offsets must hold at least one entry")
    cdef vector[char] out
    cdef vector[uint64_t] block_offsets
    cdef bint ok
    cdef const char* base = <const char*>&bview[0] if bview.shape[0] else <const char*>""
    with nogil:
        ok = c_front_code(base, bview.shape[0], &oview[0], oview.shape[0] - 1, out, block_offsets)
    if not ok:
        raise ValueError("terms are not strictly ascending, or the offsets do not describe the data")
    return (copy_array(<uint8_t*>out.data(), out.size(), np.uint8),
            copy_array(block_offsets.data(), block_offsets.size(), np.uint64))


def term_heads(blob, offsets):
    """The lookup heads of a sorted dictionary: the first 8 bytes (big-endian, zero-padded) of every
    :data:`HEAD_EVERY`-th term, as uint64."""
    cdef const uint8_t[::1] bview = np.ascontiguousarray(blob, dtype=np.uint8)
    cdef const uint64_t[::1] oview = np.ascontiguousarray(offsets, dtype=np.uint64)
    if oview.shape[0] < 1:
        raise ValueError("offsets must hold at least one entry")
    cdef size_t n = oview.shape[0] - 1, b, i
    out = np.empty((n + kHeadEvery - 1) // kHeadEvery, dtype=np.uint64)
    cdef uint64_t[::1] ov = out
    for b in range(<size_t>out.shape[0]):
        i = b * kHeadEvery
        if oview[i + 1] < oview[i] or oview[i + 1] > <uint64_t>bview.shape[0]:
            raise ValueError("offsets do not describe the data")
        ov[b] = term_head(<const char*>&bview[0] + oview[i] if bview.shape[0] else <const char*>"", oview[i + 1] - oview[i])
    return out


def term_filter(blob, offsets):
    """The term filter of a dictionary (``blob`` and plain uint64 ``offsets``): a blocked Bloom
    filter as uint64 words, which :meth:`Vocabulary.from_sorted` uses to refuse absent terms cheaply."""
    cdef const uint8_t[::1] bview = np.ascontiguousarray(blob, dtype=np.uint8)
    cdef const uint64_t[::1] oview = np.ascontiguousarray(offsets, dtype=np.uint64)
    if oview.shape[0] < 1:
        raise ValueError("offsets must hold at least one entry")
    cdef size_t n = oview.shape[0] - 1, i
    for i in range(n):
        if oview[i + 1] < oview[i] or oview[i + 1] > <uint64_t>bview.shape[0]:
            raise ValueError("offsets do not describe the data")
    cdef size_t blocks = filter_blocks(n)
    out = np.zeros(blocks * kFilterBlockWords, dtype=np.uint64)
    cdef uint64_t[::1] ov = out
    cdef const char* base = <const char*>&bview[0] if bview.shape[0] else <const char*>""
    with nogil:
        for i in range(n):
            filter_add(&ov[0], blocks, hash_bytes(base + oview[i], oview[i + 1] - oview[i]))
    return out


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


#: How many rule sets the definition scanner has (ids ``0 .. DEFINITION_RULE_SETS - 1``, the indexes of
#: ``codelex.languages.DEFINITION_RULES``).
DEFINITION_RULE_SETS = kDefinitionRuleCount


def scan_definitions(rules, content):
    """Native twin of the definition scanner: ``[(name, line)]`` of ``content`` (str or bytes).

    ``rules`` is the id of the rule set to read with (an index of
    ``codelex.languages.DEFINITION_RULES``: 0 generic, 1 Go).
    """
    if not isinstance(rules, int) or isinstance(rules, bool):
        raise TypeError(f"rules must be int, not {type(rules).__name__}")
    if not 0 <= rules < kDefinitionRuleCount:
        raise ValueError(f"rules must be a rule set id below {kDefinitionRuleCount}, not {rules}")
    cdef uint8_t rule_set = rules
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data = utf8_of(content, &n, keep, "content")
    cdef vector[DefinitionName] out
    with nogil:
        c_scan_definitions(data, n, rule_set, out)
    return [(PyUnicode_DecodeUTF8(data + d.begin, d.end - d.begin, "surrogatepass"), d.line) for d in out]


def definition_rules_of(path):
    """The rule set id the native index build reads a document of ``path`` with (its generated path table)."""
    if not isinstance(path, str):
        raise TypeError(f"path must be str, not {type(path).__name__}")
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data = utf8_of(path, &n, keep, "path")
    return c_definition_rules_of(data, n)


def count_occurrences(text, word, size_t cap):
    """Non-overlapping occurrences of ``word`` (non-empty bytes) in ``text`` (bytes), at most ``cap``."""
    cdef bytes t = bytes(text), w = bytes(word)
    if not w:
        raise ValueError("word must not be empty")
    return c_count_occurrences(string_view(<const char*>t, len(t)), string_view(<const char*>w, len(w)), cap)


def docs_section_scores(headings, heading_off, texts, text_off, candidates, words, phrase, rules, may_hold=None):
    """The docs scores of ``candidates`` (csrc/score/docs_sections.hpp): int32, one per candidate.

    ``headings``/``texts`` are lowercased UTF-8 blobs (uint8) with ``n + 1`` uint64 offsets each;
    ``candidates`` uint32 section numbers; ``words`` the query's words and ``phrase`` its phrase, as bytes
    (the phrase empty when its rules do not apply); ``rules`` ``(phrase_in_heading, phrase_in_text,
    term_in_heading, term_occurrence, max_counted_occurrences, all_terms)``; ``may_hold``, optional, a
    (candidates × words) bool array: False where a word is known absent from a candidate (not looked for).
    Raises ``ValueError`` when a candidate or its offsets lie outside the arrays, a word is empty, or
    ``may_hold`` has another shape.
    """
    cdef const uint8_t[::1] hv = np.ascontiguousarray(headings, dtype=np.uint8)
    cdef const uint64_t[::1] hov = np.ascontiguousarray(heading_off, dtype=np.uint64)
    cdef const uint8_t[::1] tv = np.ascontiguousarray(texts, dtype=np.uint8)
    cdef const uint64_t[::1] tov = np.ascontiguousarray(text_off, dtype=np.uint64)
    cdef const uint32_t[::1] cv = np.ascontiguousarray(candidates, dtype=np.uint32)
    if hov.shape[0] < 1 or hov.shape[0] != tov.shape[0]:
        raise ValueError("the heading and text offsets must describe the same sections")
    cdef list held = [bytes(w) for w in words]
    cdef bytes phrase_bytes = bytes(phrase)
    cdef vector[string_view] views
    cdef bytes w
    for w in held:
        if not w:
            raise ValueError("a word must not be empty")
        views.push_back(string_view(<const char*>w, len(w)))
    if len(rules) != 6:
        raise ValueError("rules must hold six integers")
    cdef DocsScoringRules r
    r.phrase_in_heading, r.phrase_in_text, r.term_in_heading, r.term_occurrence = \
        int(rules[0]), int(rules[1]), int(rules[2]), int(rules[3])
    if int(rules[4]) < 0:
        raise ValueError("max_counted_occurrences must be >= 0")
    r.max_counted_occurrences, r.all_terms = int(rules[4]), int(rules[5])
    out = np.empty(cv.shape[0], dtype=np.int32)
    cdef int32_t[::1] ov = out
    cdef const uint8_t* hp = &hv[0] if hv.shape[0] else <const uint8_t*>""
    cdef const uint8_t* tp = &tv[0] if tv.shape[0] else <const uint8_t*>""
    cdef const uint32_t* cp = &cv[0] if cv.shape[0] else NULL
    cdef int32_t* op = &ov[0] if cv.shape[0] else NULL
    cdef string_view ph = string_view(<const char*>phrase_bytes, len(phrase_bytes))
    cdef const uint8_t[::1] mv
    cdef const uint8_t* mp = NULL
    if may_hold is not None:
        held_mask = np.ascontiguousarray(may_hold, dtype=np.bool_)
        if held_mask.shape != (cv.shape[0], len(held)):
            raise ValueError("may_hold must hold one row per candidate and one column per word")
        mv = held_mask.reshape(-1).view(np.uint8)
        mp = &mv[0] if mv.shape[0] else NULL
    cdef bint ok
    with nogil:
        ok = c_docs_section_scores(hp, hv.shape[0], &hov[0], tp, tv.shape[0], &tov[0], hov.shape[0] - 1,
                                   cp, cv.shape[0], views, ph, r, mp, op)
    if not ok:
        raise ValueError("a candidate or its offsets lie outside the sections")
    return out

