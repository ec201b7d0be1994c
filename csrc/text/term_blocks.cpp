#include "text/term_blocks.hpp"

#include <algorithm>
#include <cstring>

namespace codelex {

namespace {
void put_varint(std::vector<char>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}
}  // namespace

bool front_code(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n, std::vector<char>& out,
                std::vector<uint64_t>& block_offsets) {
  out.clear();
  block_offsets.clear();
  block_offsets.reserve(term_blocks(n) + 1);
  if (n && offsets[0] != 0) return false;
  for (size_t i = 0; i < n; ++i)
    if (offsets[i + 1] < offsets[i] || offsets[i + 1] > blob_len) return false;
  for (size_t i = 0; i < n; ++i) {
    const char* t = blob + offsets[i];
    const size_t len = offsets[i + 1] - offsets[i];
    if (i % kTermBlock == 0) {
      block_offsets.push_back(out.size());
      put_varint(out, len);
    }
    size_t shared = 0;
    if (i) {
      const char* prev = blob + offsets[i - 1];
      const size_t prev_len = offsets[i] - offsets[i - 1];
      const size_t m = std::min(prev_len, len);
      while (shared < m && prev[shared] == t[shared]) ++shared;
      // Strictly ascending: t must go on past the shared bytes, with a larger byte if prev does too.
      if (shared == len || (shared < prev_len && static_cast<unsigned char>(prev[shared]) >
                                                     static_cast<unsigned char>(t[shared])))
        return false;
      if (i % kTermBlock) {
        const size_t d = prev_len - shared, k = len - shared;
        out.push_back(static_cast<char>((std::min<size_t>(d, 15) << 4) | std::min<size_t>(k, 15)));
        if (d >= 15) put_varint(out, d - 15);
        if (k >= 15) put_varint(out, k - 15);
      } else {
        shared = 0;  // a block's first term is whole
      }
    }
    out.insert(out.end(), t + shared, t + len);
  }
  block_offsets.push_back(out.size());
  return true;
}

}  // namespace codelex
