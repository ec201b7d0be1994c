// Frame-of-reference blocks: an array of uint32 values stored 128 to a block,
// each block as its minimum and the values' differences from it bit-packed
// at the block's width (the bits of its largest difference).
//
// The posting segment's document ids are such an array: within a term they
// ascend, so a block of one long list spans a narrow range (a few bits a
// value), while a block of many short lists still needs no more than the
// bits of the document count (16 on a 60,000-file tree, against 32 plain).
// Unlike delta coding, any value is read in O(1) (no prefix sum from a skip
// point), so posting indices, cursors and bisections keep their meaning.
//
// Layout: block b holds values [128 b, 128 b + 128) (the last one fewer);
// its packed bits start at byte 16 * off[b] (128 values of w bits take 16 w
// bytes), value i at bit (i mod 128) * w, little-endian.  At least 8 bytes
// follow the last block so that every value is read with one unaligned 8-byte
// load.  The metadata (min, width, off) is small and validated whole before
// use; the bits may be verified lazily (storage/checked.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "storage/checked.hpp"

namespace codelex {

constexpr unsigned kForShift = 7;
constexpr size_t kForBlock = size_t{1} << kForShift;  // values a block
constexpr size_t kForPadding = 8;                     // bytes after the last block

inline size_t for_blocks(size_t n) noexcept { return (n + kForBlock - 1) >> kForShift; }

// A borrowed array of n values in frame-of-reference blocks.
struct ForBlocks {
  const uint8_t* bits = nullptr;
  size_t bits_len = 0;
  const uint32_t* block_min = nullptr;    // for_blocks(n)
  const uint8_t* block_width = nullptr;   // for_blocks(n), each <= 32
  const uint32_t* block_off = nullptr;    // for_blocks(n): start of the block's bits, in 16-byte units
  size_t n = 0;
  const CheckedRegion* check = nullptr;   // verifies bits lazily (null: trusted)

  // Value i (< n).  Reads no unverified byte of a checked array only when
  // ensure() covered i: callers ensure a list's range before walking it.
  uint32_t get(size_t i) const noexcept {
    const size_t b = i >> kForShift;
    const unsigned w = block_width[b];
    if (!w) return block_min[b];
    const size_t bit = (i & (kForBlock - 1)) * w;
    uint64_t v;
    std::memcpy(&v, bits + size_t{block_off[b]} * 16 + (bit >> 3), 8);
    return block_min[b] + static_cast<uint32_t>((v >> (bit & 7)) & ((uint64_t{1} << w) - 1));
  }
  // Values [i, i + count) of one block (i / 128 == (i + count - 1) / 128) into out.
  void decode_run(size_t i, size_t count, uint32_t* out) const noexcept;
  // The first of [i, j) (within one block, ascending) whose value is >= d,
  // or j: galloped from i (a cursor's next target is mostly near), then
  // bisected, reading the block's metadata once.
  size_t lower_bound_in_block(size_t i, size_t j, uint32_t d) const noexcept {
    if (i >= j) return j;
    const size_t b = i >> kForShift;
    const unsigned w = block_width[b];
    const uint32_t mn = block_min[b];
    if (d <= mn) return i;
    if (!w) return j;  // every value is mn < d
    const uint8_t* base = bits + size_t{block_off[b]} * 16;
    const uint64_t mask = (uint64_t{1} << w) - 1;
    const uint64_t want = d - mn;
    const auto below = [&](size_t k) {  // value k (index within the block) < d
      const size_t bit = k * w;
      uint64_t v;
      std::memcpy(&v, base + (bit >> 3), 8);
      return ((v >> (bit & 7)) & mask) < want;
    };
    const size_t first = b << kForShift;
    size_t lo = i - first, hi = j - first, step = 1;
    size_t probe = lo;
    while (probe < hi && below(probe)) {  // gallop: lo..probe are all below
      lo = probe + 1;
      probe = lo + step - 1 < hi ? lo + step - 1 : hi;
      step <<= 1;
    }
    hi = probe;  // value at probe >= d (or probe == j)
    while (lo < hi) {
      const size_t mid = lo + ((hi - lo) >> 1);
      if (below(mid))
        lo = mid + 1;
      else
        hi = mid;
    }
    return first + lo;
  }
  // Verifies the bytes that values [begin, end) are read from (may throw CorruptIndex).
  void ensure(size_t begin, size_t end) const {
    if (!check || begin >= end) return;
    const size_t b0 = begin >> kForShift, b1 = (end - 1) >> kForShift;
    const size_t last_bit = ((end - 1) & (kForBlock - 1)) * block_width[b1];
    check->ensure(size_t{block_off[b0]} * 16, size_t{block_off[b1]} * 16 + (last_bit >> 3) + 8);
  }
};

namespace detail {
// count values of width W (a constant: the shifts and masks fold) from bit
// `bit` of base, each plus mn.
template <unsigned W>
inline void unpack_run(const uint8_t* base, size_t bit, size_t count, uint32_t mn, uint32_t* out) noexcept {
  constexpr uint64_t kMask = (uint64_t{1} << W) - 1;
  for (size_t k = 0; k < count; ++k, bit += W) {
    uint64_t v;
    std::memcpy(&v, base + (bit >> 3), 8);
    out[k] = mn + static_cast<uint32_t>((v >> (bit & 7)) & kMask);
  }
}
template <unsigned... Ws>
inline void unpack_dispatch(unsigned w, const uint8_t* base, size_t bit, size_t count, uint32_t mn, uint32_t* out,
                            std::integer_sequence<unsigned, Ws...>) noexcept {
  using Fn = void (*)(const uint8_t*, size_t, size_t, uint32_t, uint32_t*);
  static constexpr Fn kTable[] = {&unpack_run<Ws + 1>...};
  kTable[w - 1](base, bit, count, mn, out);
}
}  // namespace detail

inline void ForBlocks::decode_run(size_t i, size_t count, uint32_t* out) const noexcept {
  const size_t b = i >> kForShift;
  const unsigned w = block_width[b];
  const uint32_t mn = block_min[b];
  if (!w) {
    for (size_t k = 0; k < count; ++k) out[k] = mn;
    return;
  }
  detail::unpack_dispatch(w, bits + size_t{block_off[b]} * 16, (i & (kForBlock - 1)) * w, count, mn, out,
                          std::make_integer_sequence<unsigned, 32>{});
}

// The packed form of values[0, n), owned.
struct ForBlocksData {
  std::vector<uint8_t> bits;
  std::vector<uint32_t> block_min;
  std::vector<uint8_t> block_width;
  std::vector<uint32_t> block_off;
  ForBlocks view(size_t n) const noexcept;
};

// Packs n values; throws std::length_error past 64 GiB of bits.
void pack_for_blocks(const uint32_t* values, size_t n, ForBlocksData& out);

// Checks the metadata of n values against bits_len: widths <= 32, each
// block's bits inside the array with the padding after the last.  Returns
// null, or a static reason.  (The bits themselves can hold anything: every
// read they allow is inside the array.)
const char* validate_for_blocks(const ForBlocks& f) noexcept;

}  // namespace codelex
