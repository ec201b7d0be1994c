# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the C++ core (csrc/).  The public API is in codelex.*.

Every entry point validates its Python arguments before any native memory is
touched, and releases the GIL around loops whose cost grows with the input.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.string cimport memcpy
from cython.operator cimport dereference as deref
from libcpp.memory cimport unique_ptr
from libcpp.utility cimport move
from libcpp.vector cimport vector

from codelex._cpp_tokenizer cimport (
    DocumentTokenizer, IdentifierSplitter, Occurrences, TokenList,
    split_identifier as c_split_identifier,
    tokenize_line as c_tokenize_line,
)
from codelex._cpp_bm25 cimport Scorer, SearchHit, SearchRequest, SearchStatus
from codelex._cpp_index_build cimport (
    BuiltSegment, ChunkSegment, DocumentEncoder, EncodedDocument, SegmentBuilder, concat_chunks, derive_line_offsets,
)
from codelex._cpp_live_index cimport (
    BaseArrays, IndexCounts, LiveIndex as CLiveIndex, MergedIndex, SlotArrays, base_arrays_of,
)
from codelex._cpp_unicode cimport unicode_version as c_unicode_version
from codelex._cpp_vocabulary cimport Vocabulary as CVocabulary

import numpy as np

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

from libcpp.mutex cimport mutex

# Inputs at least this long are tokenized with the GIL released (and private
# scratch buffers); shorter ones reuse the module's scratch under the GIL.
DEF _NOGIL_BYTES = 65536

cdef IdentifierSplitter _shared_splitter
cdef TokenList _shared_tokens

IS_NATIVE = True
UNICODE_VERSION = c_unicode_version().decode("ascii")


cdef const char* _utf8(object text, Py_ssize_t* size, list keep, str what) except NULL:
    """Point at the UTF-8 form of text (str or bytes), keeping owners alive in keep."""
    cdef bytes encoded
    if isinstance(text, str):
        try:
            return PyUnicode_AsUTF8AndSize(text, size)
        except UnicodeEncodeError:
            # Lone surrogates: pass them through as (ill-formed) bytes, which
            # the tokenizer treats as separators.
            encoded = (<str>text).encode("utf-8", "surrogatepass")
            keep.append(encoded)
            size[0] = PyBytes_GET_SIZE(encoded)
            return PyBytes_AS_STRING(encoded)
    if isinstance(text, bytes):
        size[0] = PyBytes_GET_SIZE(text)
        return PyBytes_AS_STRING(text)
    raise TypeError(f"{what} must be str or bytes, not {type(text).__name__}")


cdef list _to_list(TokenList& tokens):
    cdef list out = []
    cdef size_t i
    cdef const char* base = tokens.buf.data()
    for i in range(tokens.offsets.size() - 1):
        out.append(PyUnicode_DecodeUTF8(base + tokens.offsets[i],
                                        tokens.offsets[i + 1] - tokens.offsets[i], "surrogatepass"))
    return out


cdef object _array(const void* data, size_t n, object dtype):
    arr = np.empty(n, dtype=dtype)
    cdef uint8_t[::1] view
    if n:
        view = arr.view(np.uint8)
        memcpy(&view[0], data, n * arr.itemsize)
    return arr


def split_identifier(identifier):
    """Native twin of :func:`codelex.split_identifier`."""
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data
    if isinstance(identifier, bytes):
        identifier = (<bytes>identifier).decode("utf-8", "replace")
    data = _utf8(identifier, &n, keep, "identifier")
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
    cdef const char* data = _utf8(line, &n, keep, "line")
    cdef IdentifierSplitter splitter
    cdef TokenList tokens
    if n < _NOGIL_BYTES:
        c_tokenize_line(data, n, _shared_splitter, _shared_tokens)
        return _to_list(_shared_tokens)
    with nogil:
        c_tokenize_line(data, n, splitter, tokens)
    return _to_list(tokens)


cdef class Vocabulary:
    """Interned token strings with dense ids (the index's term dictionary)."""

    cdef CVocabulary c
    cdef DocumentTokenizer* tokenizer  # identifier cache bound to this vocabulary
    cdef mutex lock

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
        cdef const char* data = _utf8(token, &n, keep, "token")
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
        cdef const char* data = _utf8(token, &n, keep, "token")
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
    cdef const char* data = _utf8(content, &n, keep, "content")
    cdef Occurrences occ
    with nogil:
        vocab.lock.lock()
        try:
            vocab.tokenizer.tokenize(data, n, occ)
        finally:
            vocab.lock.unlock()
    return _array(occ.terms.data(), occ.terms.size(), np.uint32), _array(occ.lines.data(), occ.lines.size(), np.uint32)


# --- index ---------------------------------------------------------------------

cdef class Hit:
    """One ranked file.

    Attributes
    ----------
    file : str
        Path as stored in the index (``/``-separated, project-relative).
    score : float
        BM25 score times the priors.
    hits : int
        Sum over the matched query tokens of the number of lines mentioning them.
    start_line, end_line : int
        The best-matching line (1-based): the line whose distinct query tokens
        carry the largest total idf, the earliest on ties.  Equal for now.
    """

    cdef readonly str file
    cdef readonly double score
    cdef readonly long hits
    cdef readonly long start_line
    cdef readonly long end_line

    def __init__(self, str file not None, double score, long hits, long start_line, long end_line=-1):
        self.file = file
        self.score = score
        self.hits = hits
        self.start_line = start_line
        self.end_line = start_line if end_line < 0 else end_line

    def to_dict(self):
        """The original's result shape: ``{file, score, hits, startLine, endLine}``."""
        return {"file": self.file, "score": self.score, "hits": self.hits,
                "startLine": self.start_line, "endLine": self.end_line}

    def __repr__(self):
        return (f"Hit(file={self.file!r}, score={self.score:.6g}, hits={self.hits}, "
                f"start_line={self.start_line}, end_line={self.end_line})")

    def __eq__(self, other):
        if not isinstance(other, Hit):
            return NotImplemented
        cdef Hit o = other
        return (self.file == o.file and self.score == o.score and self.hits == o.hits
                and self.start_line == o.start_line and self.end_line == o.end_line)

    def __hash__(self):
        return hash((self.file, self.score, self.hits, self.start_line, self.end_line))

    def __reduce__(self):
        return (Hit, (self.file, self.score, self.hits, self.start_line, self.end_line))


# Valid addresses for empty arrays (never read: every loop is bounded by a length).
cdef uint32_t _DUMMY32 = 0
cdef uint64_t _DUMMY64 = 0
cdef int64_t _DUMMYI64 = 0


cdef class _ScorerBox:
    cdef Scorer scorer
    cdef vector[SearchHit] out
    cdef vector[uint32_t] ids


cdef object _checked(object arr, object dtype, str name):
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d {np.dtype(dtype).name} array")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be contiguous")
    return arr


cdef inline const uint32_t* _u32(const uint32_t[::1] v):
    return &v[0] if v.shape[0] else &_DUMMY32


cdef inline const int64_t* _i64(const int64_t[::1] v):
    return &v[0] if v.shape[0] else &_DUMMYI64


cdef inline const uint64_t* _u64(const uint64_t[::1] v):
    return &v[0] if v.shape[0] else &_DUMMY64


def encode_paths(paths):
    """Return ``(blob, offsets)``: UTF-8 (surrogatepass) bytes and uint64 offsets."""
    encoded = [p.encode("utf-8", "surrogatepass") for p in paths]
    offsets = np.zeros(len(encoded) + 1, dtype=np.uint64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)), out=offsets[1:])
    return b"".join(encoded), offsets


def utf8_length(content):
    """Bytes of ``content`` (str or bytes) in UTF-8, as the tokenizer reads it."""
    cdef list keep = []
    cdef Py_ssize_t n
    _utf8(content, &n, keep, "content")
    return n


cdef class Chunk:
    """The segment of consecutive documents built by a :class:`ChunkBuilder` (private).

    Its term ids are those of the builder's own vocabulary.
    """

    cdef ChunkSegment* seg
    cdef readonly Vocabulary vocab
    cdef readonly list sizes  # UTF-8 bytes per document

    def __dealloc__(self):
        del self.seg

    @property
    def n_docs(self):
        return len(self.sizes)


cdef class ChunkBuilder:
    """Tokenizes chunks of documents into chunk segments (private).

    Each builder interns into a vocabulary of its own, so builders on
    different threads never contend; :meth:`LiveIndex.install_chunks` maps
    the chunks' term ids onto the index's vocabulary.  Tokenization runs with
    the GIL released.  One thread at a time per builder.
    """

    cdef SegmentBuilder* builder
    cdef readonly Vocabulary vocab
    cdef mutex busy

    def __cinit__(self):
        self.vocab = Vocabulary()
        self.builder = new SegmentBuilder(self.vocab.c)

    def __dealloc__(self):
        del self.builder

    def build(self, list contents not None):
        """Tokenize ``contents`` (str or bytes each) into a :class:`Chunk`."""
        cdef list keep = []
        cdef vector[const char*] data
        cdef vector[size_t] lengths
        cdef Py_ssize_t n
        cdef size_t i
        for content in contents:
            data.push_back(_utf8(content, &n, keep, "content"))
            lengths.push_back(n)
        cdef Chunk chunk = Chunk.__new__(Chunk)
        chunk.seg = new ChunkSegment()
        chunk.vocab = self.vocab
        chunk.sizes = [lengths[i] for i in range(lengths.size())]
        cdef bint failed = True
        with nogil:
            self.busy.lock()
            try:
                for i in range(data.size()):
                    self.builder.add_document(data[i], lengths[i])
                self.builder.finish(deref(chunk.seg))
                failed = False
            finally:
                if failed:  # drop the half-filled builder
                    del self.builder
                    self.builder = new SegmentBuilder(self.vocab.c)
                self.busy.unlock()
        return chunk


cdef class LiveIndex:
    """The native live index (private; see :class:`codelex.WordIndex`).

    Writers (``build``, ``install``, ``add_slot``, ``put``, ``remove``,
    ``merge``) are serialized by an internal lock; searches may run from any
    thread at any time.  A search names the slot layout (``generation``) its
    mask and paths describe and gets ``None`` back when the layout changed.
    """

    cdef CLiveIndex* c
    cdef readonly Vocabulary vocab
    cdef DocumentEncoder encoder
    cdef EncodedDocument doc
    cdef mutex write_lock
    cdef object base_refs  # numpy arrays behind a borrowed base, else None
    cdef list pool

    def __cinit__(self):
        self.c = new CLiveIndex()
        self.pool = []

    def __dealloc__(self):
        del self.c

    def __init__(self, Vocabulary vocab not None):
        self.vocab = vocab

    # --- writers ---------------------------------------------------------------

    cdef _lock_writer(self):
        with nogil:
            self.write_lock.lock()

    cdef size_t _vocab_size(self) noexcept nogil:
        cdef size_t n
        self.vocab.lock.lock()
        n = self.vocab.c.size()
        self.vocab.lock.unlock()
        return n

    def install_chunks(self, list chunks not None, list paths not None, mtime_ns):
        """Concatenate built chunks (in document order) into a fresh base.

        ``paths`` and ``mtime_ns`` describe the chunks' documents in order;
        each chunk is consumed.
        """
        cdef vector[ChunkSegment] segs
        cdef vector[const vector[uint32_t]*] remap_of_chunk
        cdef vector[vector[uint32_t]] remaps
        cdef Vocabulary chunk_vocab
        cdef size_t ki
        cdef unique_ptr[BuiltSegment] seg
        cdef SlotArrays slots
        cdef BaseArrays base
        cdef const char* err
        cdef size_t n_terms
        cdef Chunk chunk
        cdef const uint8_t[::1] pbv
        cdef const uint64_t[::1] pov
        mtime_arr = np.asarray(mtime_ns, dtype=np.int64)
        sizes = []
        for obj in chunks:
            chunk = <Chunk?>obj
            if chunk.seg == NULL:
                raise ValueError("a chunk was already consumed")
            sizes.extend(chunk.sizes)
        if len(sizes) != len(paths) or mtime_arr.shape[0] != len(paths):
            raise ValueError("chunks, paths and mtimes disagree in length")
        size_arr = np.array(sizes, dtype=np.uint64)
        blob, offsets = encode_paths(paths)
        pbv = np.frombuffer(blob, dtype=np.uint8)
        pov = offsets
        # One remap per distinct chunk vocabulary, in order of first use.
        vocabs = []
        for obj in chunks:
            vocab = (<Chunk>obj).vocab
            if not any(vocab is v for v in vocabs):
                vocabs.append(vocab)
        remaps.resize(len(vocabs))
        self._lock_writer()
        try:
            for k, vocab in enumerate(vocabs):
                chunk_vocab = vocab
                ki = k
                with nogil:
                    self.vocab.lock.lock()
                    try:
                        self.vocab.c.intern_all(chunk_vocab.c, remaps[ki])
                    finally:
                        self.vocab.lock.unlock()
            for obj in chunks:
                chunk = <Chunk>obj
                k = next(i for i, v in enumerate(vocabs) if v is chunk.vocab)
                remap_of_chunk.push_back(&remaps[k])
                segs.push_back(move(deref(chunk.seg)))
                del chunk.seg
                chunk.seg = NULL
            seg.reset(new BuiltSegment())
            with nogil:
                n_terms = self._vocab_size()
                concat_chunks(segs, remap_of_chunk, n_terms, deref(seg))
                self.vocab.lock.lock()
                self.vocab.c.shrink_to_fit()
                n_terms = self.vocab.c.size()
                self.vocab.lock.unlock()
            slots.path_blob = <const char*>&pbv[0] if pbv.shape[0] else NULL
            slots.path_bytes = pbv.shape[0]
            slots.path_off = &pov[0]
            slots.mtime_ns = _i64(mtime_arr)
            slots.size = _u64(size_arr)
            base = base_arrays_of(deref(seg))  # before seg is moved from
            with nogil:
                err = self.c.install(base, move(seg), slots, n_terms, True)
            self.base_refs = None
            if err != NULL:
                raise ValueError(err.decode("ascii"))
        finally:
            self.write_lock.unlock()

    def install(self, dict arrays not None, path_blob, path_off, mtime_ns, size):
        """Install a persisted segment (for example memory-mapped arrays), borrowing them.

        ``arrays`` holds ``term_ptr`` (int64), ``post_doc``, ``post_tf``,
        ``doc_len`` (uint32) and ``line_data`` (uint8); the line offsets are
        derived here and the forward index when first needed.  Raises
        ``ValueError`` with a one-line reason when the arrays are inconsistent;
        the index is then unchanged.
        """
        term_ptr = _checked(arrays["term_ptr"], np.int64, "term_ptr")
        post_doc = _checked(arrays["post_doc"], np.uint32, "post_doc")
        post_tf = _checked(arrays["post_tf"], np.uint32, "post_tf")
        line_data = _checked(arrays["line_data"], np.uint8, "line_data")
        doc_len = _checked(arrays["doc_len"], np.uint32, "doc_len")
        path_blob = _checked(path_blob, np.uint8, "path_blob")
        path_off = _checked(path_off, np.uint64, "path_off")
        mtime_ns = _checked(mtime_ns, np.int64, "mtime_ns")
        size = _checked(size, np.uint64, "size")
        cdef size_t n_docs = doc_len.shape[0]
        if term_ptr.shape[0] < 1:
            raise ValueError("term offsets are empty")
        if term_ptr[term_ptr.shape[0] - 1] != post_doc.shape[0] or post_tf.shape[0] != post_doc.shape[0]:
            raise ValueError("posting arrays disagree in length")
        if <size_t>path_off.shape[0] != n_docs + 1 or <size_t>mtime_ns.shape[0] != n_docs \
                or <size_t>size.shape[0] != n_docs:
            raise ValueError("file table and documents disagree in length")
        cdef const int64_t[::1] tp = term_ptr
        cdef const uint32_t[::1] pd = post_doc
        cdef const uint32_t[::1] pt = post_tf
        cdef const uint8_t[::1] ld = line_data
        cdef const uint32_t[::1] dl = doc_len
        cdef const uint8_t[::1] pb = path_blob
        cdef const uint64_t[::1] po = path_off
        cdef const int64_t[::1] mt = mtime_ns
        cdef const uint64_t[::1] sz = size
        cdef BaseArrays base
        cdef SlotArrays slots
        cdef unique_ptr[BuiltSegment] derived
        derived.reset(new BuiltSegment())
        base.seg.term_ptr = &tp[0]
        base.seg.n_terms = tp.shape[0] - 1
        base.seg.post_doc = _u32(pd)
        base.seg.post_tf = _u32(pt)
        base.seg.line_data = &ld[0] if ld.shape[0] else <const uint8_t*>&_DUMMY32
        base.seg.line_bytes = ld.shape[0]
        base.doc_len = _u32(dl)
        base.fwd_ptr = NULL
        base.fwd_term = NULL
        base.n_docs = n_docs
        slots.path_blob = <const char*>&pb[0] if pb.shape[0] else NULL
        slots.path_bytes = pb.shape[0]
        slots.path_off = &po[0]
        slots.mtime_ns = _i64(mt)
        slots.size = _u64(sz)
        cdef const char* err
        cdef size_t n_terms
        with nogil:
            err = derive_line_offsets(base.seg, deref(derived).term_line_ptr, deref(derived).post_line_off)
        if err != NULL:
            raise ValueError(err.decode("ascii"))
        base.seg.term_line_ptr = deref(derived).term_line_ptr.data()
        base.seg.post_line_off = &_DUMMY32
        if deref(derived).post_line_off.size():
            base.seg.post_line_off = deref(derived).post_line_off.data()
        self._lock_writer()
        try:
            with nogil:
                n_terms = self._vocab_size()
                err = self.c.install(base, move(derived), slots, n_terms, False)
            if err == NULL:
                self.base_refs = (arrays, path_blob, path_off, mtime_ns, size)
        finally:
            self.write_lock.unlock()
        if err != NULL:
            raise ValueError(err.decode("ascii"))

    def add_slot(self, str path not None, int64_t mtime_ns, uint64_t size):
        """Append an empty slot for a new path; returns its id."""
        cdef bytes encoded = path.encode("utf-8", "surrogatepass")
        cdef uint32_t slot
        self._lock_writer()
        try:
            slot = self.c.add_slot(encoded, len(encoded), mtime_ns, size)
        finally:
            self.write_lock.unlock()
        return slot

    def put(self, uint32_t slot, content, int64_t mtime_ns):
        """Make ``content`` the document of ``slot``; returns its UTF-8 size."""
        cdef list keep = []
        cdef Py_ssize_t n
        cdef const char* data = _utf8(content, &n, keep, "content")
        with nogil:
            self.write_lock.lock()
            try:
                self.vocab.lock.lock()
                try:
                    self.encoder.encode(deref(self.vocab.tokenizer), data, n, self.doc)
                finally:
                    self.vocab.lock.unlock()
                self.c.put(slot, self.doc, mtime_ns, n)
            finally:
                self.write_lock.unlock()
        return n

    def remove(self, uint32_t slot):
        """Remove the document of ``slot``; False when it was not live."""
        cdef bint was
        with nogil:
            self.write_lock.lock()
            try:
                was = self.c.remove(slot)
            finally:
                self.write_lock.unlock()
        return was

    def needs_merge(self, double ratio, uint64_t min_postings):
        """Whether pending postings exceed ``max(min_postings, ratio * live postings)``.

        A negative ratio disables the policy; hard limits always apply.
        """
        cdef bint r
        self._lock_writer()
        try:
            r = self.c.needs_merge(ratio, min_postings)
        finally:
            self.write_lock.unlock()
        return r

    def merge(self):
        """Fold the delta and the removals into a new compact base.

        Returns the uint32 array of old slot ids, in new slot order.  Readers go
        on while the new base is built; they pause only for the swap.
        """
        cdef unique_ptr[MergedIndex] merged
        cdef size_t n_terms
        self._lock_writer()
        try:
            with nogil:
                n_terms = self._vocab_size()
                merged = self.c.build_merged(n_terms)
            old = _array(deref(merged).old_slot.data(), deref(merged).old_slot.size(), np.uint32)
            with nogil:
                self.c.install_merged(deref(merged))
                merged.reset()
            self.base_refs = None
        finally:
            self.write_lock.unlock()
        return old

    # --- reads -----------------------------------------------------------------

    @property
    def generation(self):
        """Counter of slot-layout changes (new slots, installs, merges)."""
        return self.c.generation()

    @property
    def n_slots(self):
        return self.c.n_slots()

    @property
    def n_live(self):
        return self.c.n_live()

    def merge_state(self):
        """``(pending_postings, is_compact)``: what a merge would fold in, and whether it would change anything."""
        self._lock_writer()
        try:
            return self.c.pending_postings(), self.c.is_compact()
        finally:
            self.write_lock.unlock()

    def alive(self, uint32_t slot):
        return self.c.alive(slot)

    def doc_len(self, uint32_t slot):
        return self.c.doc_len(slot)

    def file_info(self, uint32_t slot):
        """``(mtime_ns, size)`` of a slot's document at indexing time."""
        return self.c.mtime_ns(slot), self.c.size(slot)

    def live_slots(self):
        """Slots holding a document, ascending (uint32)."""
        cdef vector[uint32_t] out
        with nogil:
            self.c.live_slots(out)
        return _array(out.data(), out.size(), np.uint32)

    def counts(self):
        """Live statistics: documents, tokens, terms, postings and memory."""
        cdef IndexCounts c
        with nogil:
            c = self.c.counts()
        return {"live_docs": c.live_docs, "total_tokens": c.total_tokens, "terms": c.terms,
                "pairs": c.pairs, "line_postings": c.line_postings, "base_bytes": c.base_bytes,
                "delta_bytes": c.delta_bytes, "table_bytes": c.table_bytes}

    def export(self):
        """Copies of the base and file table, for saving a merged index (what :meth:`install` takes).

        Returns ``(arrays, path_blob, path_off, mtime_ns, size)``; raises
        ``RuntimeError`` when a delta or a removal is pending (merge first).
        """
        cdef const BaseArrays* b
        self._lock_writer()
        try:
            if not self.c.is_compact():
                raise RuntimeError("the index has pending changes: merge before exporting")
            b = &self.c.base()
            n_terms = b.seg.n_terms
            n_post = b.seg.term_ptr[n_terms]
            n_docs = b.n_docs
            arrays = {
                "term_ptr": _array(b.seg.term_ptr, n_terms + 1, np.int64),
                "post_doc": _array(b.seg.post_doc, n_post, np.uint32),
                "post_tf": _array(b.seg.post_tf, n_post, np.uint32),
                "line_data": _array(b.seg.line_data, b.seg.line_bytes, np.uint8),
                "doc_len": _array(b.doc_len, n_docs, np.uint32),
            }
            mtime = np.empty(n_docs, dtype=np.int64)
            size = np.empty(n_docs, dtype=np.uint64)
            for d in range(n_docs):
                mtime[d] = self.c.mtime_ns(d)
                size[d] = self.c.size(d)
        finally:
            self.write_lock.unlock()
        return arrays, mtime, size

    # --- search ----------------------------------------------------------------

    def search(self, list tokens not None, Py_ssize_t limit, uint64_t generation, allowed=None,
               multiplier=None, double multiplier_max=float("inf"), bint exhaustive=False,
               int64_t prune_min_postings=16384):
        """Rank slots for distinct query ``tokens``: ``[(slot, score, hits, line)]``.

        ``multiplier_max`` bounds ``multiplier`` from above (it enables
        pruning; infinity disables it); ``exhaustive`` scores every posting.
        Returns ``None`` when the slot layout is no longer ``generation``.
        """
        if limit <= 0 or not tokens:
            return []
        cdef _ScorerBox box = self.pool.pop() if self.pool else _ScorerBox()
        cdef SearchRequest req
        cdef const uint8_t[::1] allowed_view
        cdef const double[::1] mult_view
        cdef int64_t tid
        cdef list keep = []
        cdef Py_ssize_t tlen
        cdef const char* tdata
        cdef SearchStatus status
        try:
            box.ids.clear()
            for tok in tokens:
                tdata = _utf8(tok, &tlen, keep, "token")
                # Under the GIL: a writer holds this lock only inside nogil
                # sections, which release it without needing the GIL.
                self.vocab.lock.lock()
                tid = self.vocab.c.find(tdata, tlen)
                self.vocab.lock.unlock()
                if tid >= 0:
                    box.ids.push_back(<uint32_t>tid)
            req.term_ids = box.ids.data()
            req.n_term_ids = box.ids.size()
            req.generation = generation
            req.allowed = NULL
            req.allowed_len = 0
            req.multiplier = NULL
            req.multiplier_len = 0
            req.limit = <size_t>limit
            req.k1 = 1.2
            req.b = 0.75
            req.exhaustive = exhaustive
            req.prune_min_postings = prune_min_postings
            req.multiplier_max = 1.0 if multiplier is None else multiplier_max
            if allowed is not None:
                allowed_view = allowed
                req.allowed_len = allowed_view.shape[0]
                req.allowed = &allowed_view[0] if allowed_view.shape[0] else <const uint8_t*>&_DUMMY32
            if multiplier is not None:
                mult_view = multiplier
                req.multiplier_len = mult_view.shape[0]
                req.multiplier = &mult_view[0] if mult_view.shape[0] else <const double*>&_DUMMY64
            with nogil:
                status = box.scorer.search(deref(self.c), req, box.out)
            if status == SearchStatus.kStale:
                return None
            if status == SearchStatus.kBadLength:
                raise ValueError("mask or multiplier length differs from the number of slots")
            return [(h.doc, h.score, h.hits, h.line) for h in box.out]
        finally:
            self.pool.append(box)

    def search_hits(self, list tokens not None, Py_ssize_t limit, list paths not None, uint64_t generation,
                    allowed=None, multiplier=None, double multiplier_max=float("inf"), bint exhaustive=False,
                    int64_t prune_min_postings=16384):
        """Like :meth:`search`, but returns :class:`Hit` objects named by ``paths[slot]``."""
        found = self.search(tokens, limit, generation, allowed, multiplier, multiplier_max, exhaustive,
                            prune_min_postings)
        if found is None:
            return None
        cdef list out = []
        cdef Hit hit
        for doc, score, hits, line in found:
            hit = Hit.__new__(Hit)
            hit.file = paths[doc]
            hit.score = score
            hit.hits = hits
            hit.start_line = line
            hit.end_line = line
            out.append(hit)
        return out
