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
from libcpp.vector cimport vector
from libc.stdint cimport int64_t

from codelex._cpp_tokenizer cimport (
    DocumentTokenizer, IdentifierSplitter, Occurrences, TokenList,
    split_identifier as c_split_identifier,
    tokenize_line as c_tokenize_line,
)
from codelex._cpp_bm25 cimport (
    QueryTerm, Scorer, SearchHit, SearchRequest, SegmentView, bm25_idf, validate_segment,
)
from codelex._cpp_index_build cimport BuiltSegment, SegmentBuilder
from codelex._cpp_unicode cimport unicode_version as c_unicode_version
from codelex._cpp_vocabulary cimport Vocabulary as CVocabulary

import numpy as np

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object text, Py_ssize_t* size) except NULL

cdef extern from "<mutex>" namespace "std" nogil:
    cdef cppclass mutex:
        void lock()
        void unlock()

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


# --- index: build and search --------------------------------------------------

def build_segment(Vocabulary vocab not None, contents):
    """Tokenize ``contents`` (an iterable of str/bytes) into one CSR segment.

    Returns a dict of numpy arrays: ``term_ptr``, ``post_doc``, ``post_tf``,
    ``term_line_ptr``, ``post_line_off``, ``line_data``, ``doc_len``,
    ``fwd_ptr``, ``fwd_term``.  Tokenization runs with the GIL released.
    """
    cdef SegmentBuilder* builder = new SegmentBuilder(vocab.c)
    cdef BuiltSegment seg
    cdef list keep
    cdef Py_ssize_t n
    cdef const char* data
    try:
        for content in contents:
            keep = []
            data = _utf8(content, &n, keep, "content")
            with nogil:
                vocab.lock.lock()
                try:
                    builder.add_document(data, n)
                finally:
                    vocab.lock.unlock()
        with nogil:
            vocab.lock.lock()
            try:
                builder.finish(seg)
            finally:
                vocab.lock.unlock()
    finally:
        del builder
    return {
        "term_ptr": _array(seg.term_ptr.data(), seg.term_ptr.size(), np.int64),
        "post_doc": _array(seg.post_doc.data(), seg.post_doc.size(), np.uint32),
        "post_tf": _array(seg.post_tf.data(), seg.post_tf.size(), np.uint32),
        "term_line_ptr": _array(seg.term_line_ptr.data(), seg.term_line_ptr.size(), np.int64),
        "post_line_off": _array(seg.post_line_off.data(), seg.post_line_off.size(), np.uint32),
        "line_data": _array(seg.line_data.data(), seg.line_data.size(), np.uint8),
        "doc_len": _array(seg.doc_len.data(), seg.doc_len.size(), np.uint32),
        "fwd_ptr": _array(seg.fwd_ptr.data(), seg.fwd_ptr.size(), np.int64),
        "fwd_term": _array(seg.fwd_term.data(), seg.fwd_term.size(), np.uint32),
    }


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
cdef uint8_t _DUMMY8 = 0


cdef class _ScorerBox:
    cdef Scorer scorer
    cdef vector[SearchHit] out
    cdef vector[QueryTerm] terms


cdef object _checked(object arr, object dtype, str name):
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d {np.dtype(dtype).name} array")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be contiguous")
    return arr


cdef class Searcher:
    """Scores queries against one immutable segment (private; see WordIndex).

    The arrays are validated once here, so that scoring can trust them.
    """

    cdef Vocabulary vocab
    cdef SegmentView seg
    cdef dict arrays
    cdef object doc_len_arr, df_arr, rank_arr
    cdef const uint32_t* doc_len
    cdef const uint32_t* df
    cdef const uint32_t* path_rank
    cdef size_t n_docs
    cdef size_t df_len
    cdef readonly double n_live
    cdef readonly double total_tokens
    cdef list pool

    def __init__(self, Vocabulary vocab not None, dict arrays not None, doc_len, df, path_rank,
                 double n_live, double total_tokens):
        self.vocab = vocab
        self.arrays = arrays
        term_ptr = _checked(arrays["term_ptr"], np.int64, "term_ptr")
        post_doc = _checked(arrays["post_doc"], np.uint32, "post_doc")
        post_tf = _checked(arrays["post_tf"], np.uint32, "post_tf")
        term_line_ptr = _checked(arrays["term_line_ptr"], np.int64, "term_line_ptr")
        post_line_off = _checked(arrays["post_line_off"], np.uint32, "post_line_off")
        line_data = _checked(arrays["line_data"], np.uint8, "line_data")
        self.doc_len_arr = _checked(doc_len, np.uint32, "doc_len")
        self.df_arr = _checked(df, np.uint32, "df")
        self.rank_arr = _checked(path_rank, np.uint32, "path_rank")
        if term_ptr.shape[0] < 1 or term_line_ptr.shape[0] != term_ptr.shape[0]:
            raise ValueError("term offset arrays disagree in length")
        if term_ptr[term_ptr.shape[0] - 1] != post_doc.shape[0] or post_tf.shape[0] != post_doc.shape[0] \
                or post_line_off.shape[0] != post_doc.shape[0]:
            raise ValueError("posting arrays disagree in length")
        if self.rank_arr.shape[0] != self.doc_len_arr.shape[0]:
            raise ValueError("path_rank and doc_len disagree in length")
        if self.df_arr.shape[0] < term_ptr.shape[0] - 1:
            raise ValueError("df is shorter than the segment's vocabulary")
        cdef const int64_t[::1] tp = term_ptr
        cdef const uint32_t[::1] pd = post_doc
        cdef const uint32_t[::1] pt = post_tf
        cdef const int64_t[::1] tlp = term_line_ptr
        cdef const uint32_t[::1] plo = post_line_off
        cdef const uint8_t[::1] ld = line_data
        cdef const uint32_t[::1] dl = self.doc_len_arr
        cdef const uint32_t[::1] dfv = self.df_arr
        cdef const uint32_t[::1] pr = self.rank_arr
        self.seg.term_ptr = &tp[0]
        self.seg.n_terms = tp.shape[0] - 1
        self.seg.post_doc = &pd[0] if pd.shape[0] else &_DUMMY32
        self.seg.post_tf = &pt[0] if pt.shape[0] else &_DUMMY32
        self.seg.term_line_ptr = &tlp[0]
        self.seg.post_line_off = &plo[0] if plo.shape[0] else &_DUMMY32
        self.seg.line_data = &ld[0] if ld.shape[0] else &_DUMMY8
        self.seg.line_bytes = ld.shape[0]
        self.n_docs = dl.shape[0]
        self.doc_len = &dl[0] if dl.shape[0] else &_DUMMY32
        self.path_rank = &pr[0] if pr.shape[0] else &_DUMMY32
        self.df = &dfv[0] if dfv.shape[0] else &_DUMMY32
        self.df_len = dfv.shape[0]
        cdef const char* err
        with nogil:
            err = validate_segment(self.seg, self.n_docs)
        if err != NULL:
            raise ValueError(err.decode("ascii"))
        self.n_live = n_live
        self.total_tokens = total_tokens
        self.pool = []

    def idf(self, Py_ssize_t term):
        """idf of a term id under the current statistics."""
        n = self.n_live if self.n_live > 0 else 1.0
        return bm25_idf(n, self.df[term] if 0 <= term < <Py_ssize_t>self.df_len else 0)

    def search(self, list tokens not None, Py_ssize_t limit, allowed=None, multiplier=None):
        """Rank documents for distinct query ``tokens``; returns ``[(doc, score, hits, line)]``."""
        if limit <= 0 or not tokens:
            return []
        cdef _ScorerBox box = self.pool.pop() if self.pool else _ScorerBox()
        cdef SearchRequest req
        cdef const uint8_t[::1] allowed_view
        cdef const double[::1] mult_view
        cdef double n = self.n_live if self.n_live > 0 else 1.0
        cdef double avgdl = self.total_tokens / n
        if not (avgdl > 0):
            avgdl = 1.0
        cdef int64_t tid
        cdef QueryTerm qt
        box.terms.clear()
        cdef list keep = []
        cdef Py_ssize_t tlen
        cdef const char* tdata
        # tokens are distinct (the caller de-duplicates), hence so are their ids.
        for tok in tokens:
            tdata = _utf8(tok, &tlen, keep, "token")
            # Under the GIL: a writer holds this lock only inside nogil sections,
            # which release it without needing the GIL.
            self.vocab.lock.lock()
            tid = self.vocab.c.find(tdata, tlen)
            self.vocab.lock.unlock()
            if tid < 0 or <size_t>tid >= self.df_len or self.df[tid] == 0:
                continue
            qt.term = <uint32_t>tid
            qt.idf = bm25_idf(n, self.df[tid])
            box.terms.push_back(qt)
        if box.terms.empty():
            self.pool.append(box)
            return []
        req.terms = box.terms.data()
        req.n_terms = box.terms.size()
        req.k1 = 1.2
        req.b = 0.75
        req.avgdl = avgdl
        req.doc_len = self.doc_len
        req.n_docs = self.n_docs
        req.allowed = NULL
        req.multiplier = NULL
        req.path_rank = self.path_rank
        req.limit = <size_t>limit
        try:
            if allowed is not None:
                allowed_view = allowed
                if <size_t>allowed_view.shape[0] != self.n_docs:
                    raise ValueError("allowed mask has the wrong length")
                if self.n_docs:
                    req.allowed = &allowed_view[0]
            if multiplier is not None:
                mult_view = multiplier
                if <size_t>mult_view.shape[0] != self.n_docs:
                    raise ValueError("multiplier has the wrong length")
                if self.n_docs:
                    req.multiplier = &mult_view[0]
            with nogil:
                box.scorer.search(self.seg, req, box.out)
            return [(h.doc, h.score, h.hits, h.line) for h in box.out]
        finally:
            self.pool.append(box)

    def search_hits(self, list tokens not None, Py_ssize_t limit, list paths not None, allowed=None,
                    multiplier=None):
        """Like :meth:`search`, but returns :class:`Hit` objects named by ``paths``."""
        cdef list out = []
        cdef Hit hit
        for doc, score, hits, line in self.search(tokens, limit, allowed, multiplier):
            hit = Hit.__new__(Hit)
            hit.file = paths[doc]
            hit.score = score
            hit.hits = hits
            hit.start_line = line
            hit.end_line = line
            out.append(hit)
        return out
