# Declarations of csrc/storage/for_blocks.hpp.
from libc.stdint cimport uint8_t, uint32_t
from libcpp.vector cimport vector

from codelex._native.cpp_checked cimport CheckedRegion

cdef extern from "storage/for_blocks.hpp" namespace "codelex" nogil:
    size_t kForPadding
    size_t for_blocks(size_t n)

    cdef cppclass ForBlocks:
        const uint8_t* bits
        size_t bits_len
        const uint32_t* block_min
        const uint8_t* block_width
        const uint32_t* block_off
        size_t n
        const CheckedRegion* check
        uint32_t get(size_t i)

    cdef cppclass ForBlocksData:
        vector[uint8_t] bits
        vector[uint32_t] block_min
        vector[uint8_t] block_width
        vector[uint32_t] block_off

    void pack_for_blocks(const uint32_t* values, size_t n, ForBlocksData& out) except +
    const char* validate_for_blocks(const ForBlocks& f)
