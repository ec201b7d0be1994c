# Declarations of csrc/lexical/index_build.hpp.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libcpp.vector cimport vector

from codelex._native.cpp_tokenizer cimport DefinitionList, DocumentTokenizer
from codelex._native.cpp_vocabulary cimport Vocabulary

cdef extern from "lexical/index_build.hpp" namespace "codelex" nogil:
    cdef struct SegmentView:
        const int64_t* term_ptr
        size_t n_terms
        const uint32_t* post_doc
        const uint32_t* post_tf
        const int64_t* term_line_ptr
        const uint32_t* post_line_off
        const uint8_t* line_data
        size_t line_bytes

    cdef cppclass BuiltSegment:
        vector[int64_t] term_ptr
        vector[uint32_t] post_doc
        vector[uint32_t] post_tf
        vector[int64_t] term_line_ptr
        vector[uint32_t] post_line_off
        vector[uint8_t] line_data
        vector[uint32_t] doc_len
        vector[uint32_t] field_len
        vector[int64_t] fwd_ptr
        vector[uint32_t] fwd_term

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
        vector[uint8_t] lines
        uint64_t length
        uint32_t field_length[3]

    cdef cppclass DocumentEncoder:
        DocumentEncoder() except +
        void encode(DocumentTokenizer& tokenizer, const char* data, size_t n, const char* path, size_t path_n,
                    const DefinitionList* defs, EncodedDocument& out) except +

    const char* validate_segment(const SegmentView& seg, size_t n_docs)
    const char* derive_line_offsets(const SegmentView& seg, vector[int64_t]& term_line_ptr,
                                    vector[uint32_t]& post_line_off) except +
