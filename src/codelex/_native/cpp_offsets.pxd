# Declarations of csrc/storage/offsets.hpp.
from libc.stdint cimport uint32_t, uint64_t
from libcpp cimport bool

from codelex._native.cpp_checked cimport CheckedRegion
from codelex._native.cpp_for_blocks cimport ForBlocks

cdef extern from "storage/offsets.hpp" namespace "codelex" nogil:
    size_t kOffsetBlock
    size_t offset_bases(size_t n)

    cdef cppclass PackedOffsets:
        const uint64_t* plain
        const uint64_t* base
        const uint32_t* rel
        const CheckedRegion* rel_check
        ForBlocks rel_blocks
        bool empty()

    bool pack_offsets(const PackedOffsets& values, size_t n, uint64_t* base, uint32_t* rel) except +
    bool packed_offsets_valid(const uint64_t* base, const uint32_t* rel, size_t n)
    bool packed_offsets_valid(const PackedOffsets& o, size_t n)
