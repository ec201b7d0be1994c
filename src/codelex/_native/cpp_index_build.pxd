# Declarations of csrc/lexical/index_build.hpp.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from codelex._native.cpp_checked cimport CheckedRegion
from codelex._native.cpp_for_blocks cimport ForBlocks, ForBlocksData
from codelex._native.cpp_offsets cimport PackedOffsets
from codelex._native.cpp_tokenizer cimport DefinitionList, DocumentTokenizer
from codelex._native.cpp_vocabulary cimport Vocabulary

cdef extern from "lexical/index_build.hpp" namespace "codelex" nogil:
    int64_t kLineCheckpoint
    size_t line_checkpoints(int64_t n_postings)

    cdef cppclass SegmentChecks:
        CheckedRegion term_ptr, post_doc, post_tf, line_ckpt, line_data

    cdef cppclass SegmentView:
        PackedOffsets term_ptr
        size_t n_terms
        const uint32_t* post_doc
        ForBlocks packed_doc
        const uint8_t* post_tf
        const uint64_t* tf_big_pos
        const uint32_t* tf_big_val
        size_t n_tf_big
        PackedOffsets line_ckpt
        const uint8_t* line_data
        size_t line_bytes
        uint64_t line_nibbles
        const SegmentChecks* checks
        int64_t n_postings() except +
        void verify_all() except +
        uint32_t doc(int64_t p)
        int64_t lower_bound(int64_t begin, int64_t end, uint32_t d)

    void pack_doc_ids(const SegmentView& seg, ForBlocksData& out) except +
    void for_each_doc_into(const SegmentView& seg, int64_t begin, int64_t end, vector[uint32_t]& out) except +

    cdef cppclass BuiltSegment:
        vector[int64_t] term_ptr
        vector[uint32_t] post_doc
        vector[uint8_t] post_tf
        vector[uint64_t] tf_big_pos
        vector[uint32_t] tf_big_val
        vector[uint64_t] line_ckpt
        vector[uint32_t] doc_len
        vector[uint32_t] field_len

    cdef cppclass BatchSegment:
        vector[uint32_t] terms
        vector[uint32_t] doc_len

    cdef cppclass SegmentBuilder:
        SegmentBuilder(Vocabulary& vocab) except +
        uint32_t add_document(const char* data, size_t n, const char* path, size_t path_n,
                              const DefinitionList* defs) except +
        size_t n_docs()
        void finish(BatchSegment& out) except +

    void concat_batches(vector[BatchSegment]& batches, const vector[const vector[uint32_t]*]& remaps, size_t n_terms,
                       BuiltSegment& out) except +

    cdef cppclass EncodedDocument:
        vector[uint32_t] terms
        vector[uint32_t] tf
        vector[uint32_t] line_off
        uint64_t length
        uint32_t field_length[3]

    cdef cppclass DocumentEncoder:
        DocumentEncoder() except +
        void encode(DocumentTokenizer& tokenizer, const char* data, size_t n, const char* path, size_t path_n,
                    const DefinitionList* defs, EncodedDocument& out) except +

    SegmentView view_of(const BuiltSegment& s)
    const char* validate_segment(const SegmentView& seg, size_t n_docs) except +
    void permute_terms(const SegmentView& seg, const vector[uint32_t]& order, BuiltSegment& out) except +
