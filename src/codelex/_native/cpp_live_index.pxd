# Declarations of csrc/lexical/live_index.hpp.
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.memory cimport unique_ptr
from libcpp.string cimport string
from libcpp.string_view cimport string_view
from libcpp.vector cimport vector

from codelex._native.cpp_index_build cimport BuiltSegment, EncodedDocument, SegmentChecks, SegmentView
from codelex._native.cpp_vocabulary cimport Vocabulary as CVocabulary

cdef extern from "lexical/live_index.hpp" namespace "codelex" nogil:
    cdef struct BaseArrays:
        SegmentView seg
        const uint32_t* doc_len
        const uint32_t* field_len
        size_t n_docs

    cdef struct SlotArrays:
        const char* path_blob
        size_t path_bytes
        const uint64_t* path_off
        const int64_t* mtime_ns
        const uint64_t* size

    cdef cppclass MergedIndex:
        BuiltSegment seg
        vector[uint32_t] old_slot

    cdef struct IndexCounts:
        uint64_t live_docs
        uint64_t total_tokens
        uint64_t terms
        uint64_t pairs
        uint64_t line_postings
        uint64_t field_terms
        uint64_t base_bytes
        uint64_t delta_bytes
        uint64_t table_bytes

    BaseArrays base_arrays_of(const BuiltSegment& seg)

    cdef cppclass LiveIndex:
        LiveIndex() except +
        const char* install(const BaseArrays& base, unique_ptr[BuiltSegment] owned, const SlotArrays& slots,
                            size_t n_terms, bool trusted, unique_ptr[SegmentChecks] checks) except +
        uint32_t add_slot(const char* path, size_t n, int64_t mtime_ns, uint64_t size) except +
        void put(uint32_t slot, const EncodedDocument& doc, int64_t mtime_ns, uint64_t size) except +
        bool remove(uint32_t slot) except +
        unique_ptr[MergedIndex] build_merged(size_t n_terms) except +
        void install_merged(MergedIndex& m) except +
        uint64_t pending_postings() except +
        uint64_t base_postings()
        bool needs_merge(double ratio, uint64_t min_postings) except +
        bool is_compact()
        void set_line_starts_max(int64_t n) except +
        uint64_t generation() except +
        size_t n_slots() except +
        uint64_t n_live() except +
        bool alive(uint32_t slot) except +
        uint32_t doc_len(uint32_t slot) except +
        int64_t mtime_ns(uint32_t slot) except +
        uint64_t size(uint32_t slot) except +
        IndexCounts counts(const vector[uint8_t]& is_field_term) except +
        void live_slots(vector[uint32_t]& out) except +
        void file_table(vector[int64_t]& mtime, vector[uint64_t]& size, vector[uint8_t]& alive) except +
        int64_t find_slot(string_view path) except +
        bool copy_paths(uint64_t generation, const uint32_t* slots, size_t n, string& blob,
                        vector[uint32_t]& ends) except +
        uint64_t dead_base_docs() except +
        bool start_warmup(const CVocabulary* vocab) except +
        int warmup_state()
        const BaseArrays& base()
        const SegmentChecks* checks()
