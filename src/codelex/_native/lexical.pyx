# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# distutils: language = c++
"""Private binding of the lexical stage (csrc/lexical/, csrc/score/): the live word index and BM25.

Public API: :class:`codelex.WordIndex`.  Every entry point validates its
Python arguments before native memory is touched, and releases the GIL
around loops whose cost grows with the input.
"""

cimport cython
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from cython.operator cimport dereference as deref
from libcpp.memory cimport unique_ptr
from libcpp.mutex cimport mutex
from libcpp.utility cimport move
from libcpp.vector cimport vector

from codelex._native.buffers cimport (
    codelex_dummy32, codelex_dummy64, copy_array, i64_ptr, u32_ptr, u64_ptr, utf8_of,
)
from codelex._native.cpp_bm25 cimport (FieldParams, FieldTerm, GlobalStats, Scorer, SearchRequest, SearchStatus,
                                      kNoTerm, local_stats)
from codelex._native.cpp_tokenizer cimport DefinitionList
from libcpp.string cimport string
from cpython.unicode cimport PyUnicode_DecodeUTF8
from codelex._native.cpp_checked cimport CheckedRegion, chunk_count
from codelex._native.cpp_offsets cimport PackedOffsets, offset_bases, pack_offsets
from codelex._native.cpp_index_build cimport (
    BuiltSegment, BatchSegment, DocumentEncoder, EncodedDocument, SegmentBuilder, SegmentChecks, SegmentView,
    concat_batches, for_each_doc_into, kLineCheckpoint, line_checkpoints, pack_doc_ids, permute_terms, view_of,
)
from codelex._native.cpp_for_blocks cimport ForBlocks, ForBlocksData, for_blocks, pack_for_blocks, validate_for_blocks
from libcpp.string_view cimport string_view
from codelex._native.cpp_live_index cimport (
    BaseArrays, IndexCounts, LiveIndex as CLiveIndex, MergedIndex, SlotArrays, base_arrays_of,
)
from codelex._native.cpp_topk cimport SearchHit
from codelex._native.cpp_vocabulary cimport Vocabulary as CVocabulary
from codelex._native.text cimport Vocabulary
from codelex._native.text import chunk_digests as _chunk_digests
from codelex._native.cpp_vocabulary cimport TermReader

import numpy as np

cdef extern from "text/tokenizer.hpp" namespace "codelex" nogil:
    const int kFields
    const char kFieldPrefix[4]


# --- index ---------------------------------------------------------------------

#: Postings per line checkpoint (part of the saved format: see csrc/lexical/index_build.hpp).
LINE_CHECKPOINT = kLineCheckpoint


cdef _check_region(CheckedRegion& region, arr, digests, const char* name):
    """Points ``region`` at ``arr``'s bytes, checked against ``digests`` (both kept alive by the caller)."""
    cdef const uint8_t[::1] view = arr.view(np.uint8)
    cdef const uint64_t[::1] dv = digests
    region.reset(&view[0] if view.shape[0] else NULL, view.shape[0], &dv[0] if dv.shape[0] else NULL, name)

cdef tuple _packed(const PackedOffsets& values, size_t n):
    """(base, rel) arrays of n offsets in any representation (see storage/offsets.hpp)."""
    base = np.zeros(offset_bases(n), dtype=np.uint64)
    rel = np.zeros(n, dtype=np.uint32)
    cdef uint64_t[::1] bv = base
    cdef uint32_t[::1] rv = rel
    cdef bint ok = True
    if n:
        with nogil:
            ok = pack_offsets(values, n, &bv[0], &rv[0])
    if not ok:
        raise ValueError("the index is too large to save: an offset block spans 4 GiB or more")
    return base, rel


# --- result rows -----------------------------------------------------------------
#
# A search answers rows ``(file, score, hits, start_line, end_line, symbol, fields)``: plain tuples, or
# tuples of the tuple subclass the caller names (``codelex.lexical.hits.Hit``, whose type and wire shape
# are Python's).  They are filled here, so no Python code runs per hit.

cdef extern from *:
    """
    /* A row of 7 items of tuple type t (tuple itself, or a subclass adding no storage: checked by the caller).
       Below 3.14 a subclass instance is allocated and filled as tuple.__new__ does; from 3.14 on (tuples
       cache their hash) it is made by tuple.__new__ itself. */
    static PyObject* codelex_row7(PyTypeObject* t, PyObject* a, PyObject* b, PyObject* c, PyObject* d,
                                  PyObject* e, PyObject* f, PyObject* g) {
        PyObject* items[7] = {a, b, c, d, e, f, g};
        PyObject* out;
        int i;
    #if PY_VERSION_HEX < 0x030E0000
        out = (t == &PyTuple_Type) ? PyTuple_New(7) : t->tp_alloc(t, 7);
        if (out == NULL) return NULL;
        for (i = 0; i < 7; ++i) { Py_INCREF(items[i]); PyTuple_SET_ITEM(out, i, items[i]); }
        return out;
    #else
        PyObject* plain = PyTuple_New(7);
        PyObject* args;
        if (plain == NULL) return NULL;
        for (i = 0; i < 7; ++i) { Py_INCREF(items[i]); PyTuple_SET_ITEM(plain, i, items[i]); }
        if (t == &PyTuple_Type) return plain;
        args = PyTuple_Pack(1, plain);
        Py_DECREF(plain);
        if (args == NULL) return NULL;
        out = PyTuple_Type.tp_new(t, args, NULL);
        Py_DECREF(args);
        return out;
    #endif
    }
    """
    object codelex_row7(type t, object a, object b, object c, object d, object e, object f, object g)

cdef inline bint _is_field_byte(char c) noexcept nogil:
    """Whether ``c`` is the prefix byte of a field other than the body (``kFieldPrefix``)."""
    cdef int f
    for f in range(1, kFields):
        if c == kFieldPrefix[f]:
            return True
    return False


cdef type _row_type_ok = tuple  # the last row type checked


cdef type _row_type(object row_type):
    """``row_type`` once checked: tuple, or a subclass of it that adds no storage (``__slots__ = ()``)."""
    global _row_type_ok
    if row_type is _row_type_ok:
        return <type>row_type
    if not isinstance(row_type, type) or not issubclass(row_type, tuple):
        raise TypeError(f"row_type must be tuple or a subclass of it, not {row_type!r}")
    if (row_type.__basicsize__ != tuple.__basicsize__ or row_type.__itemsize__ != tuple.__itemsize__
            or row_type.__dictoffset__ or row_type.__weakrefoffset__):
        raise TypeError(f"row_type must add no storage to tuple (__slots__ = ()): {row_type!r}")
    _row_type_ok = row_type
    return <type>row_type


#: The fields of a document, in the native order (csrc/text/tokenizer.hpp, ``Field``): what ``Hit.fields`` names.
FIELD_NAMES = ("body", "dir", "name", "defs")
#: Field prefixes of the vocabulary, as the native tokenizer writes them (``kFieldPrefix``): a field's terms are
#: its tokens behind this byte (none for the body).  The one source of the vocabulary's field bytes.
FIELD_PREFIXES = tuple(chr(<unsigned char>kFieldPrefix[f]) if f else "" for f in range(kFields))
cdef tuple _BODY = ("body",)
if kFields != len(FIELD_NAMES):  # pragma: no cover - a header change this binding has not followed
    raise ImportError(f"the native tokenizer has {kFields} fields, the binding names {len(FIELD_NAMES)}")
#: ``Hit.fields`` of each mask of matched fields (typed: indexed per hit without a lookup).
cdef tuple _FIELD_TUPLES = tuple(tuple(FIELD_NAMES[f] for f in range(4) if mask >> f & 1) for mask in range(16))


cdef class _ScorerBox:
    cdef Scorer scorer
    cdef vector[SearchHit] out
    cdef vector[uint32_t] hit_slots
    cdef vector[uint32_t] path_ends
    cdef string path_blob
    cdef vector[uint32_t] ids
    cdef vector[FieldTerm] fts
    cdef vector[string] keys
    cdef string key
    cdef GlobalStats glob      # a federation's statistics for this request
    cdef bint has_global       # whether this request has them (set by _set_global)
    cdef vector[uint64_t] gdf_all, gdfs  # their dfs as given, and aligned with the request's terms


cdef bint _set_global(_ScorerBox box, object global_stats, size_t n_dfs) except -1:
    """Load a federation's statistics ``(n_docs, total_tokens, (dir, name, defs), dfs)`` into ``box``
    (``n_dfs`` dfs expected); False, and none loaded, for None."""
    box.has_global = False
    box.gdf_all.clear()
    if global_stats is None:
        return False
    n_docs, total_tokens, field_totals, dfs = global_stats
    totals = tuple(field_totals)
    if len(totals) != 3:
        raise ValueError(f"global_stats: three field token totals expected, not {len(totals)}")
    cdef const int64_t[::1] view = np.ascontiguousarray(dfs, dtype=np.int64).reshape(-1)
    if <size_t>view.shape[0] != n_dfs:
        raise ValueError(f"global_stats: {n_dfs} dfs expected, not {view.shape[0]}")
    cdef Py_ssize_t i
    for i in range(view.shape[0]):
        if view[i] < 0:
            raise ValueError("global_stats: a df is negative")
        box.gdf_all.push_back(<uint64_t>view[i])
    box.glob.n_docs = n_docs  # (OverflowError when negative)
    box.glob.total_tokens = total_tokens
    for i in range(3):
        box.glob.field_totals[i] = totals[i]
    box.glob.df = NULL
    box.glob.n_df = 0
    box.has_global = True
    return True


cdef class FieldRanking:
    """The code ranking's parameters, checked once: BM25F saturation ``k1``,
    per-field ``weights`` and length normalisations ``bs`` (body, dir, name,
    defs), and the ``def_boost`` and ``name_boost`` multipliers.

    Every value is given: the native ``FieldParams`` defaults are never used
    (a ranking made without ``__init__`` is refused by the search).
    """

    cdef FieldParams c
    cdef bint ready
    cdef readonly double k1
    cdef readonly tuple weights
    cdef readonly tuple bs
    cdef readonly double def_boost
    cdef readonly double name_boost

    def __init__(self, double k1, weights, bs, double def_boost, double name_boost):
        w = tuple(float(x) for x in weights)
        bb = tuple(float(x) for x in bs)
        if len(w) != 4 or len(bb) != 4:
            raise ValueError("weights and bs need one value per field (body, dir, name, defs)")
        if not all(0 <= x < float("inf") for x in w) or not all(0 <= x <= 1 for x in bb):
            raise ValueError(f"field weights must be finite and >= 0, length normalisations in [0, 1]: {w}, {bb}")
        if not 0 <= k1 < float("inf") or not 0 < def_boost < float("inf") or not 0 < name_boost < float("inf"):
            raise ValueError(f"k1 must be finite and >= 0, the boosts finite and > 0: {k1}, {def_boost}, {name_boost}")
        cdef int f
        for f in range(4):
            self.c.w[f] = w[f]
            self.c.b[f] = bb[f]
        self.c.def_boost = def_boost
        self.c.name_boost = name_boost
        self.k1, self.weights, self.bs, self.def_boost, self.name_boost = k1, w, bb, def_boost, name_boost
        self.ready = True

    def native_params(self):
        """What the native scorer receives, read back from its ``FieldParams``: ``{weights, bs, def_boost,
        name_boost}`` (tests check it against :mod:`codelex.defaults`)."""
        return {"weights": tuple(self.c.w[f] for f in range(4)), "bs": tuple(self.c.b[f] for f in range(4)),
                "def_boost": self.c.def_boost, "name_boost": self.c.name_boost}

    def __repr__(self):
        return (f"FieldRanking(k1={self.k1}, weights={self.weights}, bs={self.bs}, def_boost={self.def_boost}, "
                f"name_boost={self.name_boost})")


cdef object _checked(object arr, object dtype, str name):
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d {np.dtype(dtype).name} array")
    if not arr.flags.c_contiguous:
        raise ValueError(f"{name} must be contiguous")
    return arr


def pack_doc_blocks(values):
    """``(bits, block_min, block_width, block_off)``: uint32 ``values`` in frame-of-reference blocks, as a
    save packs the postings' documents (tests compare :mod:`codelex._reference.for_blocks`)."""
    cdef const uint32_t[::1] v = np.ascontiguousarray(values, dtype=np.uint32)
    cdef ForBlocksData out
    with nogil:
        pack_for_blocks(&v[0] if v.shape[0] else NULL, v.shape[0], out)
    return (copy_array(out.bits.data(), out.bits.size(), np.uint8),
            copy_array(out.block_min.data(), out.block_min.size(), np.uint32),
            copy_array(out.block_width.data(), out.block_width.size(), np.uint8),
            copy_array(out.block_off.data(), out.block_off.size(), np.uint32))


def read_doc_blocks(packed, Py_ssize_t n, positions, ranges):
    """Reads of packed documents (tests): ``(values at positions, every value in order through the run
    decoder, [lower_bound(begin, end, d) for (begin, end, d) in ranges])``; each range must ascend."""
    bits, mins, widths, offs = packed
    cdef const uint8_t[::1] bv = _checked(bits, np.uint8, "bits")
    cdef const uint32_t[::1] mv = _checked(mins, np.uint32, "block_min")
    cdef const uint8_t[::1] wv = _checked(widths, np.uint8, "block_width")
    cdef const uint32_t[::1] ov = _checked(offs, np.uint32, "block_off")
    cdef SegmentView seg
    seg.post_doc = NULL
    seg.packed_doc.bits = &bv[0] if bv.shape[0] else NULL
    seg.packed_doc.bits_len = bv.shape[0]
    seg.packed_doc.block_min = &mv[0] if mv.shape[0] else NULL
    seg.packed_doc.block_width = &wv[0] if wv.shape[0] else NULL
    seg.packed_doc.block_off = &ov[0] if ov.shape[0] else NULL
    seg.packed_doc.n = <size_t>n
    seg.packed_doc.check = NULL
    cdef const char* err = validate_for_blocks(seg.packed_doc)
    if err != NULL:
        raise ValueError(err.decode("ascii"))
    cdef list at = []
    for p in positions:
        if not 0 <= p < n:
            raise IndexError("position out of range")
        at.append(seg.doc(<int64_t>p))
    cdef vector[uint32_t] all_values
    for_each_doc_into(seg, 0, n, all_values)
    cdef list found = []
    for begin, end, d in ranges:
        if not 0 <= begin <= end <= n:
            raise IndexError("range out of range")
        found.append(seg.lower_bound(<int64_t>begin, <int64_t>end, <uint32_t>d))
    return at, [all_values[i] for i in range(all_values.size())], found


def encode_paths(paths):
    """Return ``(blob, offsets)``: UTF-8 (surrogatepass) bytes and uint64 offsets."""
    encoded = [p.encode("utf-8", "surrogatepass") for p in paths]
    offsets = np.zeros(len(encoded) + 1, dtype=np.uint64)
    if encoded:
        np.cumsum(np.fromiter(map(len, encoded), dtype=np.uint64, count=len(encoded)), out=offsets[1:])
    return b"".join(encoded), offsets


cdef bint _definitions(object definitions, DefinitionList& out) except -1:
    """Fill ``out`` from ``[(name, line), ...]`` (sorted by line); False for None (the scanner decides)."""
    out.names.clear()
    out.lines.clear()
    if definitions is None:
        return False
    cdef list keep = []
    cdef Py_ssize_t n
    cdef const char* data
    for name, line in sorted(definitions, key=lambda d: d[1]):
        data = utf8_of(name, &n, keep, "definition name")
        if not isinstance(line, int) or isinstance(line, bool) or not 1 <= line < 2**32:
            raise ValueError(f"definition lines must be ints >= 1, not {line!r}")
        out.names.push_back(string(data, n))
        out.lines.push_back(<uint32_t>line)
    return True


cdef class SegmentBatch:
    """The segment of consecutive documents built by a :class:`BatchBuilder` (private).

    Its term ids are those of the builder's own vocabulary.
    """

    cdef BatchSegment* seg
    cdef readonly Vocabulary vocab
    cdef readonly list sizes  # UTF-8 bytes per document

    def __dealloc__(self):
        del self.seg

    @property
    def n_docs(self):
        return len(self.sizes)


cdef class BatchBuilder:
    """Tokenizes batches of documents into batch segments (private).

    Each builder interns into a vocabulary of its own, so builders on
    different threads never contend; :meth:`LiveIndex.install_batches` maps
    the batches' term ids onto the index's vocabulary.  Tokenization runs with
    the GIL released.  One thread at a time per builder.
    """

    cdef SegmentBuilder* builder
    cdef readonly Vocabulary vocab
    cdef mutex busy
    cdef size_t vocab_seen  # the vocabulary's size after the last batch (smaller now: it was absorbed)

    def __cinit__(self):
        self.vocab = Vocabulary()
        self.builder = new SegmentBuilder(self.vocab.c)

    def __dealloc__(self):
        del self.builder

    def build(self, list contents not None, list paths not None, list definitions=None):
        """Tokenize ``contents`` (str or bytes each) into a :class:`SegmentBatch`.

        ``paths`` give each document's path fields; ``definitions`` (one
        ``[(name, line)]`` list or None per document) its definitions, None
        meaning the definition scanner's.
        """
        cdef list keep = []
        cdef vector[const char*] data
        cdef vector[size_t] lengths
        cdef vector[const char*] path_data
        cdef vector[size_t] path_lengths
        cdef vector[DefinitionList] defs
        cdef vector[bint] has_defs
        cdef Py_ssize_t n
        cdef size_t i
        if len(paths) != len(contents) or (definitions is not None and len(definitions) != len(contents)):
            raise ValueError("contents, paths and definitions disagree in length")
        for content in contents:
            data.push_back(utf8_of(content, &n, keep, "content"))
            lengths.push_back(n)
        for path in paths:
            if not isinstance(path, str):
                raise TypeError(f"path must be str, not {type(path).__name__}")
            encoded = (<str>path).encode("utf-8", "surrogatepass")
            keep.append(encoded)
            path_data.push_back(<const char*>encoded)
            path_lengths.push_back(len(encoded))
        defs.resize(lengths.size())
        has_defs.resize(lengths.size())
        if definitions is not None:
            for i in range(lengths.size()):
                has_defs[i] = _definitions(definitions[i], defs[i])
        cdef SegmentBatch batch = SegmentBatch.__new__(SegmentBatch)
        batch.seg = new BatchSegment()
        batch.vocab = self.vocab
        batch.sizes = [lengths[i] for i in range(lengths.size())]
        cdef bint failed = True
        with nogil:
            self.busy.lock()
            try:
                if self.vocab.c.size() < self.vocab_seen:  # absorbed by a join: its cached ids are gone
                    del self.builder
                    self.builder = new SegmentBuilder(self.vocab.c)
                for i in range(data.size()):
                    self.builder.add_document(data[i], lengths[i], path_data[i], path_lengths[i],
                                              &defs[i] if has_defs[i] else NULL)
                self.builder.finish(deref(batch.seg))
                self.vocab_seen = self.vocab.c.size()
                failed = False
            finally:
                if failed:  # drop the half-filled builder
                    del self.builder
                    self.builder = new SegmentBuilder(self.vocab.c)
                self.busy.unlock()
        return batch


cdef class _Blocks:
    """A saved array of frame-of-reference blocks (``NAME`` the bits, ``NAME_min``, ``NAME_width``,
    ``NAME_off`` each block's minimum, width and start), checked for shape; the ForBlocks view of it."""
    cdef object bits, mins, widths, offs
    cdef str name
    cdef size_t n

    def __init__(self, dict arrays, str name, size_t n):
        self.name = name
        self.n = n
        self.bits = _checked(arrays[name], np.uint8, name)
        self.mins = _checked(arrays[name + "_min"], np.uint32, name + "_min")
        self.widths = _checked(arrays[name + "_width"], np.uint8, name + "_width")
        self.offs = _checked(arrays[name + "_off"], np.uint32, name + "_off")
        if not (<size_t>self.mins.shape[0] == <size_t>self.widths.shape[0] == <size_t>self.offs.shape[0]
                == for_blocks(n)):
            raise ValueError(f"{name} blocks and entries disagree in number")

    cdef ForBlocks view(self) except *:
        """The blocks' view, its metadata validated (widths, layout, padding); no check attached."""
        cdef const uint8_t[::1] b = self.bits
        cdef const uint32_t[::1] m = self.mins
        cdef const uint8_t[::1] w = self.widths
        cdef const uint32_t[::1] o = self.offs
        cdef ForBlocks f
        f.bits = &b[0] if b.shape[0] else <const uint8_t*>&codelex_dummy32
        f.bits_len = b.shape[0]
        f.block_min = u32_ptr(m)
        f.block_width = &w[0] if w.shape[0] else <const uint8_t*>&codelex_dummy32
        f.block_off = u32_ptr(o)
        f.n = self.n
        f.check = NULL
        cdef const char* err = validate_for_blocks(f)
        if err != NULL:
            raise ValueError(f"{self.name}: {err.decode('ascii')}")
        return f

    cdef check_metadata(self, dict digests):
        """Every read trusts a block's metadata (where its bits are, how wide): small (9 bytes a block
        of 128), so verified whole against its digests now rather than chunk by chunk."""
        for suffix, arr in (("_min", self.mins), ("_width", self.widths), ("_off", self.offs)):
            dg = _checked(digests[self.name + suffix], np.uint64, self.name + suffix + " digests")
            if not np.array_equal(dg, _chunk_digests(arr)):
                raise ValueError(f"corrupt index: {self.name + suffix} does not match its digests")


def _pack_blocks(values, str name):
    """``{NAME: bits, NAME_min, NAME_width, NAME_off}``: uint32 ``values`` in frame-of-reference blocks."""
    bits, mins, widths, offs = pack_doc_blocks(values)
    return {name: bits, name + "_min": mins, name + "_width": widths, name + "_off": offs}


def _segment_arrays(dict arrays, path_blob, path_off, mtime_ns, size, dict digests, Py_ssize_t n_terms):
    """:meth:`LiveIndex.install`'s arrays, each checked for its type and the lengths checked against each other
    (``ValueError`` with a one-line reason); with ``digests``, theirs for the lazily verified arrays."""
    cdef _Blocks term_ptr, docs, line_ckpt
    if n_terms < 0:
        raise ValueError("n_terms is required")
    term_ptr_base = _checked(arrays["term_ptr_base"], np.uint64, "term_ptr_base")
    post_tf = _checked(arrays["post_tf"], np.uint8, "post_tf")
    n_post = post_tf.shape[0]
    term_ptr = _Blocks(arrays, "term_ptr_rel", <size_t>n_terms + 1)
    docs = _Blocks(arrays, "post_doc", n_post)
    line_ckpt = _Blocks(arrays, "line_ckpt_rel", line_checkpoints(n_post))
    tf_big_pos = _checked(arrays["tf_big_pos"], np.uint64, "tf_big_pos")
    tf_big_val = _checked(arrays["tf_big_val"], np.uint32, "tf_big_val")
    line_ckpt_base = _checked(arrays["line_ckpt_base"], np.uint64, "line_ckpt_base")
    line_data = _checked(arrays["line_data"], np.uint8, "line_data")
    doc_len = _checked(arrays["doc_len"], np.uint32, "doc_len")
    field_len = _checked(arrays["field_len"], np.uint32, "field_len")
    path_blob = _checked(path_blob, np.uint8, "path_blob")
    path_off = _checked(path_off, np.uint64, "path_off")
    mtime_ns = _checked(mtime_ns, np.int64, "mtime_ns")
    size = _checked(size, np.uint64, "size")
    n_docs = doc_len.shape[0]
    n_ckpt = line_checkpoints(n_post)
    if <size_t>term_ptr_base.shape[0] != offset_bases(<size_t>n_terms + 1) \
            or <size_t>line_ckpt_base.shape[0] != offset_bases(n_ckpt):
        raise ValueError("offset bases do not cover the offsets")
    if tf_big_pos.shape[0] != tf_big_val.shape[0]:
        raise ValueError("posting arrays disagree in length")
    # The bases are small and read unchecked: they must not decrease.
    if np.any(term_ptr_base[1:] < term_ptr_base[:-1]) or np.any(line_ckpt_base[1:] < line_ckpt_base[:-1]):
        raise ValueError("offset bases decrease")
    if <size_t>path_off.shape[0] != n_docs + 1 or <size_t>mtime_ns.shape[0] != n_docs \
            or <size_t>size.shape[0] != n_docs:
        raise ValueError("file table and documents disagree in length")
    if <size_t>field_len.shape[0] != n_docs * 3:
        raise ValueError("field lengths and documents disagree in length")
    digest_list = []
    if digests is not None:
        for name, arr in (("term_ptr_rel", term_ptr.bits), ("post_doc", docs.bits), ("post_tf", post_tf),
                          ("line_ckpt_rel", line_ckpt.bits), ("line_data", line_data)):
            dg = _checked(digests[name], np.uint64, name + " digests")
            if <size_t>dg.shape[0] != chunk_count(arr.nbytes):
                raise ValueError(f"the digests of {name} do not cover it")
            digest_list.append(dg)
        for blocks in (term_ptr, docs, line_ckpt):
            (<_Blocks>blocks).check_metadata(digests)
    return (term_ptr_base, post_tf, term_ptr, docs, line_ckpt, tf_big_pos, tf_big_val, line_ckpt_base, line_data,
            doc_len, field_len, path_blob, path_off, mtime_ns, size, digest_list)


cdef SlotArrays _slot_arrays(const uint8_t[::1] pb, const uint64_t[::1] po, const int64_t[::1] mt,
                             const uint64_t[::1] sz):
    """The file table of a segment installed from arrays (borrowed: the caller keeps them alive)."""
    cdef SlotArrays slots
    slots.path_blob = <const char*>&pb[0] if pb.shape[0] else NULL
    slots.path_bytes = pb.shape[0]
    slots.path_off = &po[0]
    slots.mtime_ns = i64_ptr(mt)
    slots.size = u64_ptr(sz)
    return slots


cdef int _attach_checks(BaseArrays* base, SegmentChecks* checks, _Blocks term_ptr, _Blocks docs, _Blocks line_ckpt,
                        post_tf, line_data, list digest_list) except -1:
    """Point ``checks`` at the lazily verified arrays with their digests, and ``base``'s readers at ``checks``."""
    _check_region(checks.term_ptr, term_ptr.bits, digest_list[0], b"term offsets")
    _check_region(checks.post_doc, docs.bits, digest_list[1], b"posting documents")
    _check_region(checks.post_tf, post_tf, digest_list[2], b"posting tfs")
    _check_region(checks.line_ckpt, line_ckpt.bits, digest_list[3], b"line checkpoints")
    _check_region(checks.line_data, line_data, digest_list[4], b"line data")
    base.seg.checks = checks
    base.seg.packed_doc.check = &checks.post_doc
    base.seg.term_ptr.rel_blocks.check = &checks.term_ptr
    base.seg.line_ckpt.rel_blocks.check = &checks.line_ckpt
    return 0


def _batch_inputs(list batches, list paths, mtime_ns):
    """What :meth:`install_batches` installs, checked: ``(mtimes, sizes, path blob, path offsets, the batches'
    distinct vocabularies in order of first use)``."""
    mtime_arr = np.asarray(mtime_ns, dtype=np.int64)
    sizes = []
    for obj in batches:
        if (<SegmentBatch?>obj).seg == NULL:
            raise ValueError("a batch was already consumed")
        sizes.extend((<SegmentBatch>obj).sizes)
    if len(sizes) != len(paths) or mtime_arr.shape[0] != len(paths):
        raise ValueError("batches, paths and mtimes disagree in length")
    blob, offsets = encode_paths(paths)
    vocabs = []
    for obj in batches:
        vocab = (<SegmentBatch>obj).vocab
        if not any(vocab is v for v in vocabs):
            vocabs.append(vocab)
    return mtime_arr, np.array(sizes, dtype=np.uint64), blob, offsets, vocabs


@cython.no_gc_clear  # __dealloc__ joins the warm-up thread, which reads the vocabulary: keep it until then
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

    def install_batches(self, list batches not None, list paths not None, mtime_ns):
        """Concatenate built batches (in document order) into a fresh base.

        ``paths`` and ``mtime_ns`` describe the batches' documents in order;
        each batch is consumed.
        """
        cdef vector[BatchSegment] segs
        cdef vector[const vector[uint32_t]*] remap_of_batch
        cdef vector[vector[uint32_t]] remaps
        cdef Vocabulary batch_vocab
        cdef vector[CVocabulary*] sources
        cdef vector[mutex*] source_locks
        cdef size_t ki
        cdef unique_ptr[BuiltSegment] seg
        cdef unique_ptr[SegmentChecks] no_checks
        cdef SlotArrays slots
        cdef BaseArrays base
        cdef const char* err
        cdef size_t n_terms
        cdef SegmentBatch batch
        cdef const uint8_t[::1] pbv
        cdef const uint64_t[::1] pov
        mtime_arr, size_arr, blob, offsets, vocabs = _batch_inputs(batches, paths, mtime_ns)
        pbv = np.frombuffer(blob, dtype=np.uint8)
        pov = offsets
        remaps.resize(len(vocabs))
        self._lock_writer()
        try:
            if self.vocab.c.size() == 0 and all((<Vocabulary?>v).c.base_size() == 0 for v in vocabs):
                # A fresh build: the terms take ids in byte order, so that a save renumbers nothing.
                for vocab in vocabs:
                    batch_vocab = vocab
                    sources.push_back(&batch_vocab.c)
                    source_locks.push_back(&batch_vocab.lock)
                with nogil:  # (vocabulary locks are taken without the GIL: the index's first, as below)
                    self.vocab.lock.lock()
                    for ki in range(source_locks.size()):
                        source_locks[ki].lock()
                    try:
                        self.vocab.c.absorb_sorted(sources, remaps)
                    finally:
                        for ki in range(source_locks.size()):
                            source_locks[ki].unlock()
                        self.vocab.lock.unlock()
                for vocab in vocabs:
                    (<Vocabulary>vocab).tokenizer.reset_cache()
                self.vocab.tokenizer.reset_cache()
            else:  # into terms held already: each builder's vocabulary interned
                for k, vocab in enumerate(vocabs):
                    batch_vocab = vocab
                    ki = k
                    with nogil:
                        self.vocab.lock.lock()
                        batch_vocab.lock.lock()
                        try:  # (the builders' vocabularies are done with: absorbed, they are left empty)
                            self.vocab.c.absorb(batch_vocab.c, remaps[ki])
                        finally:
                            batch_vocab.lock.unlock()
                            self.vocab.lock.unlock()
                        batch_vocab.tokenizer.reset_cache()
                        self.vocab.tokenizer.reset_cache()
            for obj in batches:
                batch = <SegmentBatch>obj
                k = next(i for i, v in enumerate(vocabs) if v is batch.vocab)
                remap_of_batch.push_back(&remaps[k])
                segs.push_back(move(deref(batch.seg)))
                del batch.seg
                batch.seg = NULL
                batch.vocab = None
            # The builders' vocabularies are mapped: free them before the join
            # (together about as large as the index's own), unless a caller still holds one.
            vocabs = vocab = None
            batch_vocab = None
            seg.reset(new BuiltSegment())
            with nogil:
                n_terms = self._vocab_size()
                concat_batches(segs, remap_of_batch, n_terms, deref(seg))
                self.vocab.lock.lock()
                self.vocab.c.shrink_to_fit()
                n_terms = self.vocab.c.size()
                self.vocab.lock.unlock()
            slots.path_blob = <const char*>&pbv[0] if pbv.shape[0] else NULL
            slots.path_bytes = pbv.shape[0]
            slots.path_off = &pov[0]
            slots.mtime_ns = i64_ptr(mtime_arr)
            slots.size = u64_ptr(size_arr)
            base = base_arrays_of(deref(seg))  # before seg is moved from
            with nogil:
                err = self.c.install(base, move(seg), slots, n_terms, True, move(no_checks))
                if err == NULL:
                    self.c.find_slot(string_view())  # the path table edits use, built with the rest
            self.base_refs = None
            if err != NULL:
                raise ValueError(err.decode("ascii"))
        finally:
            self.write_lock.unlock()

    def install(self, dict arrays not None, path_blob, path_off, mtime_ns, size, dict digests=None,
                Py_ssize_t n_terms=-1):
        """Install a persisted segment (for example memory-mapped arrays), borrowing them.

        ``arrays`` holds the ``n_terms`` + 1 posting offsets packed as ``term_ptr_base`` (uint64, one per 64
        entries) and the remainders in frame-of-reference blocks (``term_ptr_rel`` and its ``_min``, ``_width``,
        ``_off``: :func:`pack_doc_blocks`), the postings' documents in such blocks too (``post_doc`` and its
        three), ``post_tf`` (uint8, 255 = see ``tf_big_pos``/``tf_big_val``, uint64 and uint32), the line
        checkpoints packed as ``line_ckpt_base`` and ``line_ckpt_rel`` (blocks), ``line_data`` (uint8),
        ``doc_len`` and ``field_len`` (uint32).  With ``digests`` (the :func:`codelex._native.text.chunk_digests`
        of the blocks' arrays, ``post_tf`` and ``line_data``; the small base arrays are the caller's to check)
        nothing is scanned here but the blocks' metadata: each chunk of the rest is verified when a reader first
        touches it.  Without, every structural invariant is checked now.  Raises ``ValueError`` with a one-line
        reason when the arrays are inconsistent; the index is then unchanged.
        """
        cdef _Blocks term_ptr, docs, line_ckpt
        (term_ptr_base, post_tf, term_ptr, docs, line_ckpt, tf_big_pos, tf_big_val, line_ckpt_base, line_data,
         doc_len, field_len, path_blob, path_off, mtime_ns, size, digest_list) = _segment_arrays(
            arrays, path_blob, path_off, mtime_ns, size, digests, n_terms)
        cdef size_t n_post = post_tf.shape[0]
        cdef size_t n_docs = doc_len.shape[0]
        cdef size_t n_ckpt = line_checkpoints(n_post)
        cdef const uint64_t[::1] tpb = term_ptr_base
        cdef const uint64_t[::1] lcb = line_ckpt_base
        cdef const uint8_t[::1] pt = post_tf
        cdef const uint64_t[::1] bp = tf_big_pos
        cdef const uint32_t[::1] bv = tf_big_val
        cdef const uint8_t[::1] ld = line_data
        cdef const uint32_t[::1] dl = doc_len
        cdef const uint32_t[::1] fl = field_len
        cdef BaseArrays base
        cdef SlotArrays slots
        cdef const char* err
        cdef unique_ptr[BuiltSegment] no_owned
        cdef unique_ptr[SegmentChecks] checks
        base.seg.term_ptr.plain = NULL
        base.seg.term_ptr.base = &tpb[0]
        base.seg.term_ptr.rel = NULL
        base.seg.term_ptr.rel_check = NULL
        base.seg.term_ptr.rel_blocks = term_ptr.view()
        base.seg.n_terms = <size_t>n_terms
        base.seg.post_doc = NULL
        base.seg.packed_doc = docs.view()
        # The last entries are compared, not used (their chunks are verified when read).
        if tpb[tpb.shape[0] - 1] + base.seg.term_ptr.rel_blocks.get(<size_t>n_terms) != n_post:
            raise ValueError("term offsets do not end at the posting count")
        base.seg.post_tf = &pt[0] if pt.shape[0] else <const uint8_t*>&codelex_dummy32
        base.seg.tf_big_pos = &bp[0] if bp.shape[0] else <const uint64_t*>&codelex_dummy64
        base.seg.tf_big_val = u32_ptr(bv)
        base.seg.n_tf_big = bp.shape[0]
        base.seg.line_ckpt.plain = NULL
        base.seg.line_ckpt.base = &lcb[0]
        base.seg.line_ckpt.rel = NULL
        base.seg.line_ckpt.rel_check = NULL
        base.seg.line_ckpt.rel_blocks = line_ckpt.view()
        # The last checkpoint is the line data's length in nibbles (codelex/csrc/lexical/line_lists.hpp).
        cdef uint64_t line_nibbles = lcb[lcb.shape[0] - 1] + base.seg.line_ckpt.rel_blocks.get(n_ckpt - 1)
        if line_nibbles // 2 + (line_nibbles & 1) != <uint64_t>ld.shape[0]:  # (no wrap at 2**64 - 1)
            raise ValueError("line checkpoints do not end at the line data size")
        base.seg.line_data = &ld[0] if ld.shape[0] else <const uint8_t*>&codelex_dummy32
        base.seg.line_bytes = ld.shape[0]
        base.seg.line_nibbles = line_nibbles
        base.seg.checks = NULL
        base.doc_len = u32_ptr(dl)
        base.field_len = u32_ptr(fl)
        base.n_docs = n_docs
        slots = _slot_arrays(path_blob, path_off, mtime_ns, size)
        if digest_list:
            checks.reset(new SegmentChecks())
            _attach_checks(&base, checks.get(), term_ptr, docs, line_ckpt, post_tf, line_data, digest_list)
        cdef size_t vocab_terms
        self._lock_writer()
        try:
            with nogil:
                vocab_terms = self._vocab_size()
                err = self.c.install(base, move(no_owned), slots, vocab_terms, False, move(checks))
            if err == NULL:
                self.base_refs = (arrays, path_blob, path_off, mtime_ns, size, digest_list)
        finally:
            self.write_lock.unlock()
        if err != NULL:
            raise ValueError(err.decode("ascii"))

    def verify(self):
        """Verify every lazily checked chunk of the base now (``RuntimeError('corrupt index: ...')`` on a mismatch)."""
        self._lock_writer()
        try:
            with nogil:
                self.c.base().seg.verify_all()
        finally:
            self.write_lock.unlock()

    def verified_chunks(self):
        """``(verified, total)`` lazily checked chunks of the base (``(0, 0)`` for a trusted base)."""
        cdef const SegmentChecks* c = self.c.checks()
        if c == NULL:
            return 0, 0
        return (c.term_ptr.verified_chunks() + c.post_doc.verified_chunks() + c.post_tf.verified_chunks()
                + c.line_ckpt.verified_chunks() + c.line_data.verified_chunks(),
                c.term_ptr.chunks() + c.post_doc.chunks() + c.post_tf.chunks() + c.line_ckpt.chunks()
                + c.line_data.chunks())

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

    def put(self, uint32_t slot, content, int64_t mtime_ns, str path not None, definitions=None):
        """Make ``content`` the document of ``slot`` (whose path is ``path``); returns its UTF-8 size.

        ``definitions`` (``[(name, line)]``) replace the definition scanner's.
        """
        cdef list keep = []
        cdef Py_ssize_t n
        cdef const char* data = utf8_of(content, &n, keep, "content")
        cdef DefinitionList defs
        cdef bint has_defs = _definitions(definitions, defs)
        cdef string path_bytes = path.encode("utf-8", "surrogatepass")
        if slot >= self.c.n_slots():
            raise IndexError("slot out of range")
        with nogil:
            self.write_lock.lock()
            try:
                self.vocab.lock.lock()
                try:
                    self.encoder.encode(deref(self.vocab.tokenizer), data, n, path_bytes.data(), path_bytes.size(),
                                        &defs if has_defs else NULL, self.doc)
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

    def set_line_starts_max(self, int64_t n):
        """Derive per-posting line offsets only for a base of at most ``n`` postings (tests use 0 and -1)."""
        self._lock_writer()
        try:
            with nogil:
                self.c.set_line_starts_max(n)
        finally:
            self.write_lock.unlock()

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
            old = copy_array(deref(merged).old_slot.data(), deref(merged).old_slot.size(), np.uint32)
            with nogil:
                self.c.install_merged(deref(merged))
                merged.reset()
                self.c.find_slot(string_view())  # the path table, for the slots' new order
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

    def find_slot(self, str path not None):
        """The slot of ``path`` (removed documents' slots included), or -1.

        The first call after a load hashes every path (about 5 ms per 100,000,
        the GIL released; a build or a merge does it as it ends); later ones cost a probe.
        """
        cdef bytes encoded = path.encode("utf-8", "surrogatepass")
        cdef string_view view = string_view(encoded, len(encoded))
        cdef int64_t slot
        with nogil:
            slot = self.c.find_slot(view)
        return slot

    @property
    def dead_base_docs(self):
        """Base documents removed or replaced since the base was installed (tests)."""
        return self.c.dead_base_docs()

    def prepare_edits(self):
        """Start readying the index for edits on a native thread (see ``LiveIndex::start_warmup``).

        Builds the path table and verifies the vocabulary's mapped base chunk
        by chunk; nothing waits for it, and the index's destruction stops and
        joins it.  False when one is already running.
        """
        cdef bint started
        self._lock_writer()
        try:
            started = self.c.start_warmup(&self.vocab.c)
        finally:
            self.write_lock.unlock()
        return started

    @property
    def warmup_state(self):
        """``"none"``, ``"running"``, ``"done"`` or ``"stopped"`` (stopped early, or a chunk did not match)."""
        return ("none", "running", "done", "stopped")[self.c.warmup_state()]

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
        return copy_array(out.data(), out.size(), np.uint32)

    def file_table(self):
        """``(mtime_ns, size, alive)`` of every slot, in slot order (int64, uint64, bool arrays)."""
        cdef vector[int64_t] mt
        cdef vector[uint64_t] sz
        cdef vector[uint8_t] al
        with nogil:
            self.c.file_table(mt, sz, al)
        return (copy_array(mt.data(), mt.size(), np.int64), copy_array(sz.data(), sz.size(), np.uint64),
                copy_array(al.data(), al.size(), np.uint8).astype(bool))

    def counts(self):
        """Live statistics: documents, tokens, terms, postings and memory (body terms; field terms apart)."""
        cdef IndexCounts c
        cdef vector[uint8_t] is_field
        cdef size_t t, n_terms
        cdef string_view term
        cdef TermReader reader = TermReader(&self.vocab.c)
        with nogil:
            self.vocab.lock.lock()
            try:
                n_terms = self.vocab.c.size()
                is_field.resize(n_terms)
                for t in range(n_terms):
                    term = reader.get(<uint32_t>t)
                    is_field[t] = term.size() > 0 and _is_field_byte(term.data()[0])
            finally:
                self.vocab.lock.unlock()
            c = self.c.counts(is_field)
        return {"live_docs": c.live_docs, "total_tokens": c.total_tokens, "terms": c.terms,
                "pairs": c.pairs, "line_postings": c.line_postings, "field_terms": c.field_terms,
                "base_bytes": c.base_bytes, "delta_bytes": c.delta_bytes, "table_bytes": c.table_bytes}

    def term_stats(self, list words not None):
        """What this index contributes to a federation's statistics for ``words``, read at one instant:
        ``(live documents, body tokens, (dir, name, defs) tokens, dfs)``, ``dfs`` an int64 array of shape
        ``(len(words), 4)``: each word's df in the body, dir, name and defs fields (0 where it is not a term).
        """
        cdef vector[string] keys
        cdef vector[uint32_t] ids
        cdef list keep = []
        cdef Py_ssize_t tlen
        cdef const char* tdata
        cdef string key
        cdef int64_t tid
        cdef size_t i
        cdef int f
        cdef GlobalStats out
        for word in words:
            tdata = utf8_of(word, &tlen, keep, "word")
            keys.push_back(string(tdata, tlen))
        ids.resize(keys.size() * 4)
        with nogil:  # the vocabulary's lock is only ever taken without the GIL
            self.vocab.lock.lock()
            try:
                for i in range(keys.size()):
                    key.assign(1, 0)
                    key.append(keys[i])
                    for f in range(4):
                        if f == 0:
                            tid = self.vocab.c.lookup(keys[i].data(), keys[i].size())
                        else:
                            key[0] = kFieldPrefix[f]
                            tid = self.vocab.c.lookup(key.data(), key.size())
                        ids[i * 4 + f] = <uint32_t>tid if tid >= 0 else kNoTerm
            finally:
                self.vocab.lock.unlock()
        dfs = np.zeros((keys.size(), 4), dtype=np.uint64)
        cdef uint64_t[:, ::1] view = dfs
        cdef uint64_t* dst = &view[0, 0] if keys.size() else NULL
        with nogil:
            local_stats(deref(self.c), ids.data(), ids.size(), out, dst)
        return (out.n_docs, out.total_tokens, (out.field_totals[0], out.field_totals[1], out.field_totals[2]),
                dfs.astype(np.int64))

    def export(self):
        """Copies of the base, its terms and the file table, for saving a merged index (what :meth:`install` takes).

        The terms come out in byte order (the sorted dictionary a load
        searches in place), the postings renumbered to match.  Returns
        ``(arrays, vocab_blob, vocab_offsets, mtime_ns, size)``; raises
        ``RuntimeError`` when a delta or a removal is pending (merge first).
        """
        cdef const BaseArrays* b
        cdef vector[uint32_t] order
        cdef unique_ptr[BuiltSegment] permuted
        cdef SegmentView v
        cdef ForBlocksData packed
        cdef bint identity = True
        self._lock_writer()
        try:
            if not self.c.is_compact():
                raise RuntimeError("the index has pending changes: merge before exporting")
            b = &self.c.base()
            order_arr = self.vocab.sorted_order()
            order = order_arr
            identity = <size_t>order_arr.shape[0] == b.seg.n_terms and bool(
                np.array_equal(order_arr, np.arange(order_arr.shape[0], dtype=np.uint32)))
            v = b.seg
            if not identity:
                permuted.reset(new BuiltSegment())
                with nogil:
                    permute_terms(b.seg, order, deref(permuted))
                v = view_of(deref(permuted))
            else:
                with nogil:
                    b.seg.verify_all()
            vocab_blob, vocab_offsets = self.vocab.to_arrays(None if identity else order_arr)
            n_terms = v.n_terms
            n_post = v.n_postings()
            n_docs = b.n_docs
            with nogil:
                pack_doc_ids(v, packed)
            term_ptr_base, term_ptr_rel = _packed(v.term_ptr, n_terms + 1)
            line_ckpt_base, line_ckpt_rel = _packed(v.line_ckpt, line_checkpoints(n_post))
            # The remainders in frame-of-reference blocks too: mostly a few hundred, 10 bits on average.
            rel_blocks = _pack_blocks(term_ptr_rel, "term_ptr_rel") | _pack_blocks(line_ckpt_rel, "line_ckpt_rel")
            arrays = {
                "term_ptr_base": term_ptr_base,
                "post_doc": copy_array(packed.bits.data(), packed.bits.size(), np.uint8),
                "post_doc_min": copy_array(packed.block_min.data(), packed.block_min.size(), np.uint32),
                "post_doc_width": copy_array(packed.block_width.data(), packed.block_width.size(), np.uint8),
                "post_doc_off": copy_array(packed.block_off.data(), packed.block_off.size(), np.uint32),
                "post_tf": copy_array(v.post_tf, n_post, np.uint8),
                "tf_big_pos": copy_array(v.tf_big_pos, v.n_tf_big, np.uint64),
                "tf_big_val": copy_array(v.tf_big_val, v.n_tf_big, np.uint32),
                "line_ckpt_base": line_ckpt_base,
                **rel_blocks,
                "line_data": copy_array(v.line_data, v.line_bytes, np.uint8),
                "doc_len": copy_array(b.doc_len, n_docs, np.uint32),
                "field_len": copy_array(b.field_len, n_docs * 3, np.uint32),
            }
            permuted.reset()
            mtime, size, _ = self.file_table()  # compact: slot d is document d
        finally:
            self.write_lock.unlock()
        return arrays, vocab_blob, vocab_offsets, mtime, size

    # --- search ----------------------------------------------------------------

    def search(self, list tokens not None, Py_ssize_t limit, uint64_t generation, double k1, double b,
               allowed=None, multiplier=None, double multiplier_max=float("inf"), bint exhaustive=False,
               int64_t prune_min_postings=4096):
        """Rank slots for distinct query ``tokens``: ``[(slot, score, hits, line)]``.

        ``k1`` and ``b`` are the BM25 parameters.  ``multiplier_max`` bounds
        ``multiplier`` from above (it enables pruning; infinity disables it);
        ``exhaustive`` scores every posting.  Returns ``None`` when the slot
        layout is no longer ``generation``.
        """
        if limit <= 0 or not tokens:
            return []
        cdef _ScorerBox box = self.pool.pop() if self.pool else _ScorerBox()
        try:
            _set_global(box, None, 0)
            if self._classic(box, tokens, limit, generation, k1, b, allowed, multiplier, multiplier_max, exhaustive,
                             prune_min_postings) == SearchStatus.kStale:
                return None
            return [(h.doc, h.score, h.hits, h.line) for h in box.out]
        finally:
            self.pool.append(box)

    cdef list _hit_paths(self, _ScorerBox box, uint64_t generation):
        """The paths of box.out's hits read from the index's own table (None: the layout changed)."""
        cdef size_t i, n = box.out.size(), start = 0
        cdef list names = []
        box.hit_slots.clear()
        box.path_ends.clear()
        box.path_blob.clear()
        for i in range(n):
            box.hit_slots.push_back(box.out[i].doc)
        if not self.c.copy_paths(generation, box.hit_slots.data(), n, box.path_blob, box.path_ends):
            return None
        cdef const char* blob = box.path_blob.data()
        try:
            for i in range(n):
                names.append(PyUnicode_DecodeUTF8(blob + start, box.path_ends[i] - start, "surrogatepass"))
                start = box.path_ends[i]
        except UnicodeDecodeError:
            raise RuntimeError("corrupt index: a path is not valid UTF-8") from None
        return names

    cdef object _rows(self, _ScorerBox box, uint64_t generation, object paths, type rt, bint fields):
        """box.out as rows ``(file, score, hits, line, line, None, fields)`` of ``rt``, ``file`` being
        ``paths[slot]``, or, when ``paths`` is None, the index's own record of the slot's path (None: the
        layout changed meanwhile)."""
        cdef list out = []
        cdef object line
        cdef size_t i, n = box.out.size()
        cdef list names = self._hit_paths(box, generation) if paths is None else None
        if paths is None and names is None:
            return None
        for i in range(n):
            line = box.out[i].line
            out.append(codelex_row7(rt, names[i] if names is not None else paths[box.out[i].doc], box.out[i].score,
                                    box.out[i].hits, line, line, None,
                                    _FIELD_TUPLES[box.out[i].fields & 15] if fields else _BODY))
        return out

    def search_hits(self, list tokens not None, Py_ssize_t limit, object paths, uint64_t generation,
                    double k1, double b, allowed=None, multiplier=None, double multiplier_max=float("inf"),
                    bint exhaustive=False, int64_t prune_min_postings=4096, row_type=tuple, global_stats=None):
        """Like :meth:`search`, but answers rows ``(file, score, hits, line, line, None, ("body",))`` of the
        tuple type ``row_type`` (``codelex.Hit``), ``file`` being ``paths[slot]`` (``paths`` None: the
        index's own record of the slot's path).

        ``global_stats``: ``(n_docs, total_tokens, (dir, name, defs) token totals, dfs)`` to score with
        instead of this index's own, ``dfs`` one per token (a federation's statistics; see
        :meth:`term_stats`).

        (Positional arguments: this sits on every query's path.)
        """
        if limit <= 0 or not tokens:
            return []
        cdef type rt = _row_type(row_type)
        cdef _ScorerBox box = self.pool.pop() if self.pool else _ScorerBox()
        try:
            _set_global(box, global_stats, len(tokens))
            if self._classic(box, tokens, limit, generation, k1, b, allowed, multiplier, multiplier_max, exhaustive,
                             prune_min_postings) == SearchStatus.kStale:
                return None
            return self._rows(box, generation, paths, rt, False)
        finally:
            self.pool.append(box)

    cdef SearchStatus _classic(self, _ScorerBox box, list tokens, Py_ssize_t limit, uint64_t generation, double k1,
                               double b, allowed, multiplier, double multiplier_max, bint exhaustive,
                               int64_t prune_min_postings) except *:
        """The classic ranking of ``tokens`` into ``box.out`` (best first)."""
        if not (k1 >= 0 and 0 <= b <= 1):
            raise ValueError(f"BM25 parameters out of range: k1={k1}, b={b}")
        cdef SearchRequest req
        cdef int64_t tid
        cdef size_t i
        cdef list keep = []
        cdef Py_ssize_t tlen
        cdef const char* tdata
        cdef bint global_ = box.has_global
        box.ids.clear()
        box.keys.clear()
        box.gdfs.clear()
        for tok in tokens:
            tdata = utf8_of(tok, &tlen, keep, "token")
            box.keys.push_back(string(tdata, tlen))
        with nogil:  # the vocabulary's lock is only ever taken without the GIL
            self.vocab.lock.lock()
            try:
                for i in range(box.keys.size()):
                    tid = self.vocab.c.lookup(box.keys[i].data(), box.keys[i].size())
                    if tid >= 0:
                        box.ids.push_back(<uint32_t>tid)
                        if global_:
                            box.gdfs.push_back(box.gdf_all[i])
            finally:
                self.vocab.lock.unlock()
        req.glob = NULL
        if global_:
            box.glob.df = box.gdfs.data()
            box.glob.n_df = box.gdfs.size()
            req.glob = &box.glob
        req.term_ids = box.ids.data()
        req.n_term_ids = box.ids.size()
        req.generation = generation
        req.allowed = NULL
        req.allowed_len = 0
        req.multiplier = NULL
        req.multiplier_len = 0
        req.limit = <size_t>limit
        req.k1 = k1
        req.b = b
        req.exhaustive = exhaustive
        req.prune_min_postings = prune_min_postings
        req.multiplier_max = 1.0 if multiplier is None else multiplier_max
        return self._run(box, &req, allowed, multiplier)

    cdef SearchStatus _run(self, _ScorerBox box, SearchRequest* req, allowed, multiplier) except *:
        """Attach the mask and multipliers to ``req`` and score without the GIL (the caller keeps the
        arrays alive and clears the pointers afterwards)."""
        cdef const uint8_t[::1] allowed_view
        cdef const double[::1] mult_view
        cdef SearchStatus status
        if allowed is not None:
            allowed_view = allowed
            req.allowed_len = allowed_view.shape[0]
            req.allowed = &allowed_view[0] if allowed_view.shape[0] else <const uint8_t*>&codelex_dummy32
        if multiplier is not None:
            mult_view = multiplier
            req.multiplier_len = mult_view.shape[0]
            req.multiplier = &mult_view[0] if mult_view.shape[0] else <const double*>&codelex_dummy64
        with nogil:
            status = box.scorer.search(deref(self.c), deref(req), box.out)
        if status == SearchStatus.kBadLength:
            raise ValueError("mask or multiplier length differs from the number of slots")
        return status

    cdef int _field_terms(self, _ScorerBox box, list terms) except -1:
        """``box.fts``: each query term's weight, whether it is a query token, and its term id in each field
        (body, then the dir, name and defs prefixes; ``kNoTerm`` where the vocabulary lacks it)."""
        cdef FieldTerm ft
        cdef int64_t tid
        cdef list keep = []
        cdef Py_ssize_t tlen
        cdef const char* tdata
        cdef int f
        cdef size_t i
        box.fts.clear()
        box.keys.clear()
        for item in terms:
            if isinstance(item, str):
                token = item
                ft.weight = 1.0
                ft.query_token = True
            else:
                token, weight, is_query = item
                ft.weight = weight
                ft.query_token = bool(is_query)
            tdata = utf8_of(token, &tlen, keep, "token")
            box.keys.push_back(string(tdata, tlen))
            box.fts.push_back(ft)
        with nogil:  # the vocabulary's lock is only ever taken without the GIL
            self.vocab.lock.lock()
            try:
                for i in range(box.fts.size()):
                    box.key.assign(1, 0)
                    box.key.append(box.keys[i])
                    for f in range(4):
                        if f == 0:
                            tid = self.vocab.c.lookup(box.keys[i].data(), box.keys[i].size())
                        else:
                            box.key[0] = kFieldPrefix[f]
                            tid = self.vocab.c.lookup(box.key.data(), box.key.size())
                        box.fts[i].ids[f] = <uint32_t>tid if tid >= 0 else kNoTerm
            finally:
                self.vocab.lock.unlock()
        return 0

    def search_fields(self, list terms not None, Py_ssize_t limit, object paths, uint64_t generation,
                      FieldRanking ranking not None, Py_ssize_t n_query_tokens, allowed=None, multiplier=None,
                      double multiplier_max=float("inf"), bint exhaustive=False, int64_t prune_min_postings=4096,
                      row_type=tuple, global_stats=None):
        """The code ranking (BM25F over body, dir, name and defs): rows ``(file, score, hits, line, line, None,
        fields)`` of the tuple type ``row_type`` (``codelex.Hit``), best first; ``fields`` names the fields
        matched (:data:`FIELD_NAMES`).

        ``terms`` holds the query tokens in query order, each a str or a
        ``(token, weight, is_query_token)`` tuple (stem variants come after
        their token, as non-query tokens); ``n_query_tokens`` counts the
        distinct query tokens (the boosts need all of them);
        ``multiplier_max``, ``exhaustive`` and ``prune_min_postings`` as in
        :meth:`search`; ``global_stats`` as in :meth:`search_hits`, with four
        dfs (body, dir, name, defs) per entry of ``terms``, flat.  Returns
        ``None`` when the slot layout is no longer ``generation``.
        """
        if limit <= 0 or not terms:
            return []
        if not ranking.ready:
            raise ValueError("the FieldRanking was not initialized: every parameter must be given")
        cdef type rt = _row_type(row_type)
        cdef SearchRequest req
        cdef _ScorerBox box = self.pool.pop() if self.pool else _ScorerBox()
        try:
            req.glob = NULL
            if _set_global(box, global_stats, 4 * len(terms)):
                box.glob.df = box.gdf_all.data()
                box.glob.n_df = box.gdf_all.size()
                req.glob = &box.glob
            self._field_terms(box, terms)
            req.generation = generation
            req.limit = <size_t>limit
            req.k1 = ranking.k1
            req.b = ranking.c.b[0]
            req.fields = True
            req.exhaustive = exhaustive
            req.prune_min_postings = prune_min_postings
            req.multiplier_max = 1.0 if multiplier is None else multiplier_max
            req.field_terms = box.fts.data()
            req.n_field_terms = box.fts.size()
            req.n_query_tokens = <size_t>n_query_tokens
            req.field_params = ranking.c
            req.allowed = NULL
            req.allowed_len = 0
            req.multiplier = NULL
            req.multiplier_len = 0
            if self._run(box, &req, allowed, multiplier) == SearchStatus.kStale:
                return None
            return self._rows(box, generation, paths, rt, True)
        finally:
            self.pool.append(box)
