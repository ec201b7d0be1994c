// Front-coded term blocks: how a sorted term dictionary is saved.
//
// Terms go kTermBlock to a block.  A block's first term is stored whole (a
// varint length, then its bytes), so that a lookup compares it in place
// without decoding anything.  Each next term is the previous one with its
// last d bytes dropped and k bytes appended: a header byte
// (min(d, 15) << 4 | min(k, 15)), then varint d - 15 when d >= 15, varint
// k - 15 when k >= 15, then the k bytes.  Sorted identifiers share most of
// their bytes with their neighbour (two thirds on the Linux tree, where the
// nibbles hold both counts for 87% of the terms), so the blocks take under
// half the bytes of the terms, and a block's offset is kept once instead of
// one offset per term.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace codelex {

constexpr size_t kTermBlock = 16;

inline size_t term_blocks(size_t n_terms) noexcept { return (n_terms + kTermBlock - 1) / kTermBlock; }

// Reads one block's terms.  Every read is bounded by the block's end, so a
// malformed block (a file that lies) is reported, never read past.
class TermBlockReader {
 public:
  TermBlockReader(const char* p, const char* end) noexcept
      : p_(reinterpret_cast<const unsigned char*>(p)), end_(reinterpret_cast<const unsigned char*>(end)) {}

  // The block's first term (whole, in place).  False when malformed.
  bool first(const char*& s, size_t& len) noexcept {
    uint64_t n;
    if (!varint(n) || n > static_cast<size_t>(end_ - p_)) return false;
    s = reinterpret_cast<const char*>(p_);
    len = static_cast<size_t>(n);
    p_ += len;
    return true;
  }
  // The next term, given the previous one's length: it keeps the previous
  // term's first `shared` bytes and appends suffix[0..len).  False when
  // malformed (more bytes dropped than the previous term has, or past the end).
  bool next(size_t prev_len, size_t& shared, const char*& suffix, size_t& len) noexcept {
    if (p_ == end_) return false;
    const unsigned h = *p_++;
    uint64_t d = h >> 4, k = h & 15, x;
    if (d == 15) {
      if (!varint(x) || x > prev_len) return false;
      d += x;
    }
    if (k == 15) {
      if (!varint(x) || x > static_cast<size_t>(end_ - p_)) return false;
      k += x;
    }
    if (d > prev_len || k > static_cast<size_t>(end_ - p_)) return false;
    shared = prev_len - static_cast<size_t>(d);
    suffix = reinterpret_cast<const char*>(p_);
    len = static_cast<size_t>(k);
    p_ += len;
    return true;
  }
  bool at_end() const noexcept { return p_ == end_; }

 private:
  // LEB128, at most 9 bytes (63 bits: no shift overflows).
  bool varint(uint64_t& v) noexcept {
    v = 0;
    for (int shift = 0; shift < 63; shift += 7) {
      if (p_ == end_) return false;
      const unsigned b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7F) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  const unsigned char* p_;
  const unsigned char* end_;
};

// Front-codes n terms (blob[offsets[i]..offsets[i + 1]]), which must be
// strictly ascending in byte order: appends the blocks to out and sets
// block_offsets to where each block starts in out, plus out's size
// (term_blocks(n) + 1 entries).  False when the terms are not strictly
// ascending or the offsets do not describe blob (blob_len bytes).
bool front_code(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n, std::vector<char>& out,
                std::vector<uint64_t>& block_offsets);

}  // namespace codelex
