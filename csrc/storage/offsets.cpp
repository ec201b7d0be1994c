#include "storage/offsets.hpp"

namespace codelex {

bool pack_offsets(const PackedOffsets& in, size_t n, uint64_t* base, uint32_t* rel) {
  uint64_t block_base = 0, prev = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t v = in[i];
    if (v < prev) return false;
    prev = v;
    if ((i & (kOffsetBlock - 1)) == 0) {
      block_base = v;
      base[i >> kOffsetBlockShift] = v;
    }
    if (v - block_base > UINT32_MAX) return false;
    rel[i] = static_cast<uint32_t>(v - block_base);
  }
  return true;
}

namespace {
template <class Rel>
bool valid(const uint64_t* base, const Rel& rel, size_t n) noexcept {
  uint64_t prev = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t r = rel(i);
    if ((i & (kOffsetBlock - 1)) == 0 && r != 0) return false;
    const uint64_t b = base[i >> kOffsetBlockShift];
    if (b > UINT64_MAX - r) return false;
    const uint64_t v = b + r;
    if (v < prev) return false;
    prev = v;
  }
  return true;
}
}  // namespace

bool packed_offsets_valid(const uint64_t* base, const uint32_t* rel, size_t n) noexcept {
  return valid(base, [rel](size_t i) { return rel[i]; }, n);
}

bool packed_offsets_valid(const PackedOffsets& o, size_t n) noexcept {
  if (o.plain) return true;
  if (o.rel) return packed_offsets_valid(o.base, o.rel, n);
  if (o.rel_blocks.n != n) return false;
  return valid(o.base, [&o](size_t i) { return o.rel_blocks.get(i); }, n);
}

}  // namespace codelex
