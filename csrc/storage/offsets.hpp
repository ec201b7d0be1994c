// Monotonic offset arrays as saved: a 64-bit base every kOffsetBlock entries
// and a 32-bit remainder per entry (4.1 bytes an entry instead of 8).
//
// The term dictionary's byte offsets, the postings' term offsets and the line
// checkpoints are such arrays; they hold one entry per term (millions on a
// large tree), so their width is a good part of an index's size.  In memory a
// segment built here keeps plain 64-bit offsets; PackedOffsets reads either.
#pragma once

#include <cstddef>
#include <cstdint>

#include "storage/checked.hpp"
#include "storage/for_blocks.hpp"

namespace codelex {

constexpr size_t kOffsetBlockShift = 6;
constexpr size_t kOffsetBlock = size_t{1} << kOffsetBlockShift;

// Bases for n entries.
inline size_t offset_bases(size_t n) noexcept { return (n + kOffsetBlock - 1) >> kOffsetBlockShift; }

struct PackedOffsets {
  const uint64_t* plain = nullptr;  // plain offsets, or null for the packed form:
  const uint64_t* base = nullptr;   // offset_bases(n): the value of entry b * kOffsetBlock
  const uint32_t* rel = nullptr;    // n: value - its block's base; null: in rel_blocks
  const CheckedRegion* rel_check = nullptr;  // verifies rel lazily (null: trusted)
  // The remainders in frame-of-reference blocks (a saved index's posting
  // offsets and line checkpoints: a remainder takes the bits of its block's
  // largest, 10 on average on the Linux tree instead of 32).  Its own check
  // verifies the bits; used when rel is null.
  ForBlocks rel_blocks;

  bool empty() const noexcept { return !plain && !rel && !rel_blocks.bits; }
  uint32_t remainder(size_t i) const noexcept { return rel ? rel[i] : rel_blocks.get(i); }
  // Entry i (verified when checked lazily; may throw CorruptIndex).
  uint64_t operator[](size_t i) const {
    if (plain) return plain[i];
    ensure(i, i + 1);
    return base[i >> kOffsetBlockShift] + remainder(i);
  }
  // Entries i and i + 1 (one check).
  void pair(size_t i, uint64_t& a, uint64_t& b) const {
    if (plain) {
      a = plain[i];
      b = plain[i + 1];
      return;
    }
    ensure(i, i + 2);
    a = base[i >> kOffsetBlockShift] + remainder(i);
    b = base[(i + 1) >> kOffsetBlockShift] + remainder(i + 1);
  }
  // Identifies the storage (cache keys).
  const void* identity() const noexcept {
    return plain ? static_cast<const void*>(plain) : rel ? static_cast<const void*>(rel) : rel_blocks.bits;
  }

 private:
  void ensure(size_t i, size_t j) const {
    if (rel) {
      if (rel_check) rel_check->ensure(i * sizeof(uint32_t), j * sizeof(uint32_t));
    } else {
      rel_blocks.ensure(i, j);
    }
  }
};

// Packs n monotonic values; false when a block spans 2^32 or more (the
// outputs are then unspecified).
bool pack_offsets(const PackedOffsets& in, size_t n, uint64_t* base, uint32_t* rel);

// Checks a packed array of n entries: each block starts at its base (rel 0)
// and the values never decrease.  Reads the remainders through no check
// (rel_blocks' metadata must have passed validate_for_blocks).
bool packed_offsets_valid(const uint64_t* base, const uint32_t* rel, size_t n) noexcept;
bool packed_offsets_valid(const PackedOffsets& o, size_t n) noexcept;

}  // namespace codelex
