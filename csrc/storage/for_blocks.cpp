#include "storage/for_blocks.hpp"

#include <algorithm>
#include <stdexcept>

namespace codelex {

ForBlocks ForBlocksData::view(size_t n) const noexcept {
  ForBlocks f;
  f.bits = bits.data();
  f.bits_len = bits.size();
  f.block_min = block_min.data();
  f.block_width = block_width.data();
  f.block_off = block_off.data();
  f.n = n;
  return f;
}

void pack_for_blocks(const uint32_t* values, size_t n, ForBlocksData& out) {
  const size_t nb = for_blocks(n);
  out.block_min.assign(nb, 0);
  out.block_width.assign(nb, 0);
  out.block_off.assign(nb, 0);
  out.bits.clear();
  size_t units = 0;  // 16-byte units so far
  for (size_t b = 0; b < nb; ++b) {
    const size_t lo = b << kForShift, hi = std::min(n, lo + kForBlock);
    const auto [mn, mx] = std::minmax_element(values + lo, values + hi);
    const uint32_t span = *mx - *mn;
    const unsigned w = span ? 32 - static_cast<unsigned>(__builtin_clz(span)) : 0;
    if (units > UINT32_MAX) throw std::length_error("frame-of-reference blocks past 64 GiB");
    out.block_min[b] = *mn;
    out.block_width[b] = static_cast<uint8_t>(w);
    out.block_off[b] = static_cast<uint32_t>(units);
    if (!w) continue;
    const size_t start = units * 16;
    units += w;  // 128 values of w bits: 16 w bytes
    out.bits.resize(units * 16, 0);
    uint8_t* p = out.bits.data() + start;
    for (size_t i = lo; i < hi; ++i) {
      const size_t bit = (i - lo) * w;
      const uint64_t v = static_cast<uint64_t>(values[i] - *mn) << (bit & 7);
      for (size_t k = 0; k < 5 && (v >> (8 * k)); ++k) p[(bit >> 3) + k] |= static_cast<uint8_t>(v >> (8 * k));
    }
  }
  out.bits.resize(units * 16 + kForPadding, 0);
}

const char* validate_for_blocks(const ForBlocks& f) noexcept {
  const size_t nb = for_blocks(f.n);
  if (nb && (!f.block_min || !f.block_width || !f.block_off)) return "missing block data";
  if (f.bits_len < kForPadding || (f.bits_len && !f.bits)) return "packed document ids lack their padding";
  const size_t units = (f.bits_len - kForPadding) / 16;
  size_t next = 0;
  for (size_t b = 0; b < nb; ++b) {
    const unsigned w = f.block_width[b];
    if (w > 32) return "a block of document ids is wider than 32 bits";
    // Blocks are laid out in order, back to back (empty ones take no room).
    if (f.block_off[b] != next) return "a block of document ids is not where the previous one ends";
    next += w;
    if (next > units) return "a block of document ids runs past its array";
  }
  if (next != units || f.bits_len != units * 16 + kForPadding) return "packed document ids do not end at their array";
  return nullptr;
}

}  // namespace codelex
