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

namespace codelex {

constexpr size_t kOffsetBlockShift = 6;
constexpr size_t kOffsetBlock = size_t{1} << kOffsetBlockShift;

// Bases for n entries.
inline size_t offset_bases(size_t n) noexcept { return (n + kOffsetBlock - 1) >> kOffsetBlockShift; }

struct PackedOffsets {
  const uint64_t* plain = nullptr;  // plain offsets, or null for the packed form:
  const uint64_t* base = nullptr;   // offset_bases(n): the value of entry b * kOffsetBlock
  const uint32_t* rel = nullptr;    // n: value - its block's base
  const CheckedRegion* rel_check = nullptr;  // verifies rel lazily (null: trusted)

  bool empty() const noexcept { return !plain && !rel; }
  // Entry i (verified when checked lazily; may throw CorruptIndex).
  uint64_t operator[](size_t i) const {
    if (plain) return plain[i];
    if (rel_check) rel_check->ensure(i * sizeof(uint32_t), (i + 1) * sizeof(uint32_t));
    return base[i >> kOffsetBlockShift] + rel[i];
  }
  // Entries i and i + 1 (one check).
  void pair(size_t i, uint64_t& a, uint64_t& b) const {
    if (plain) {
      a = plain[i];
      b = plain[i + 1];
      return;
    }
    if (rel_check) rel_check->ensure(i * sizeof(uint32_t), (i + 2) * sizeof(uint32_t));
    a = base[i >> kOffsetBlockShift] + rel[i];
    b = base[(i + 1) >> kOffsetBlockShift] + rel[i + 1];
  }
  // Identifies the storage (cache keys).
  const void* identity() const noexcept { return plain ? static_cast<const void*>(plain) : rel; }
};

// Packs n monotonic values; false when a block spans 2^32 or more (the
// outputs are then unspecified).
bool pack_offsets(const PackedOffsets& in, size_t n, uint64_t* base, uint32_t* rel);

// Checks a packed array of n entries: each block starts at its base (rel 0)
// and the values never decrease.  Reads rel through no check.
bool packed_offsets_valid(const uint64_t* base, const uint32_t* rel, size_t n) noexcept;

}  // namespace codelex
