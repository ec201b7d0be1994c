// A posting's lines: its ascending line numbers as deltas (the first from 0),
// each an unsigned varint of 4-bit units (nibbles): three value bits, low
// group first, and a continuation bit (0x8) on every unit but the last.
//
// Why nibbles: most deltas are small (on the Linux tree the median later delta
// needs 3 bits, the median first line 8), so a byte varint spent half of its
// bits on nothing; nibbles took the Linux lines from 155 to about 121 MiB and
// keep what reading relies on: a unit ends a value exactly when its high bit is
// clear, so a run of values is skipped by counting such units 16 at a time.
//
// A stream is addressed by nibble position: nibble n is the low half of byte
// n / 2 when n is even, the high half otherwise.  A stream of N nibbles takes
// (N + 1) / 2 bytes; an odd stream's last high half is 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace codelex {

// The most units a 32-bit delta takes (33 value bits).
constexpr int kLineDeltaUnits = 11;
// A position no stream reaches: what a skip past the end returns.
constexpr uint64_t kNoLinePos = UINT64_MAX;

inline uint32_t line_nibble(const uint8_t* data, uint64_t n) noexcept {
  return (data[n >> 1] >> ((n & 1) << 2)) & 0xFu;
}

inline uint64_t line_popcount(uint64_t x) noexcept {
#if defined(__POPCNT__)  // the instruction (a portable build calls a slower library routine instead)
  return static_cast<uint64_t>(__builtin_popcountll(x));
#else
  x = x - ((x >> 1) & 0x5555555555555555ULL);
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  return (((x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL) * 0x0101010101010101ULL) >> 56;
#endif
}

// An appendable stream: bytes and the number of nibbles written.
struct LineWriter {
  std::vector<uint8_t> bytes;
  uint64_t nibbles = 0;

  void put_nibble(uint32_t v) {
    if (nibbles & 1)
      bytes.back() = static_cast<uint8_t>(bytes.back() | (v << 4));
    else
      bytes.push_back(static_cast<uint8_t>(v));
    ++nibbles;
  }
  void put(uint32_t delta) {
    for (;;) {
      const uint32_t low = delta & 7u;
      delta >>= 3;
      if (!delta) {
        put_nibble(low);
        return;
      }
      put_nibble(low | 8u);
    }
  }
  // Pads to a whole byte (with a 0 nibble, which no reader reaches).
  void align() {
    if (nibbles & 1) ++nibbles;
  }
  void clear() {
    bytes.clear();
    nibbles = 0;
  }
  void reserve_nibbles(uint64_t n) { bytes.reserve(static_cast<size_t>((n + 1) / 2)); }
  // Appends n nibbles of src from nibble position from.
  void append(const uint8_t* src, uint64_t from, uint64_t n);
};

// Copies n nibbles of src from nibble position from to dst's nibble position
// at, OR-ing them in: the destination's nibbles there must be 0 (a zeroed
// buffer filled once, in any order).
inline void copy_line_nibbles(uint8_t* dst, uint64_t at, const uint8_t* src, uint64_t from, uint64_t n) noexcept {
  if (!n) return;
  if (at & 1) {  // a leading high half
    dst[at >> 1] = static_cast<uint8_t>(dst[at >> 1] | (line_nibble(src, from) << 4));
    ++at, ++from, --n;
  }
  if (!(from & 1)) {  // both even: whole bytes
    const uint64_t whole = n >> 1;
    if (whole) std::memcpy(dst + (at >> 1), src + (from >> 1), static_cast<size_t>(whole));
    at += whole << 1, from += whole << 1, n -= whole << 1;
  } else {  // a byte made of two source halves
    for (; n >= 2; at += 2, from += 2, n -= 2)
      dst[at >> 1] = static_cast<uint8_t>((src[from >> 1] >> 4) | (src[(from >> 1) + 1] << 4));
  }
  if (n) dst[at >> 1] = static_cast<uint8_t>(dst[at >> 1] | line_nibble(src, from));
}

inline void LineWriter::append(const uint8_t* src, uint64_t from, uint64_t n) {
  if (!n) return;
  const uint64_t total = nibbles + n;
  bytes.resize(static_cast<size_t>((total + 1) / 2), 0);
  copy_line_nibbles(bytes.data(), nibbles, src, from, n);
  nibbles = total;
}

// Reads the delta at pos (advancing it); false when the stream ends first or
// the delta is longer than a 32-bit value.
inline bool read_line_delta(const uint8_t* data, uint64_t& pos, uint64_t end, uint32_t& out) noexcept {
  uint64_t v = 0;
  for (int shift = 0;; shift += 3) {
    if (pos >= end || shift > 3 * (kLineDeltaUnits - 1)) return false;
    const uint32_t u = line_nibble(data, pos++);
    v |= static_cast<uint64_t>(u & 7u) << shift;
    if (!(u & 8u)) break;
  }
  if (v > UINT32_MAX) return false;
  out = static_cast<uint32_t>(v);
  return true;
}

// Nibbles taken by count deltas from pos (bounded by end); -1 when malformed
// or truncated.
inline int64_t line_span(const uint8_t* data, uint64_t pos, uint64_t end, uint64_t count) noexcept {
  const uint64_t start = pos;
  uint32_t ignored;
  for (; count; --count)
    if (!read_line_delta(data, pos, end, ignored)) return -1;
  return static_cast<int64_t>(pos - start);
}

// The position after count deltas from pos, skipping 16 units a word while
// they end fewer values than are left; kNoLinePos when the stream ends first.
// (Lengths are not checked: for validated streams.)
inline uint64_t skip_line_deltas(const uint8_t* data, uint64_t pos, uint64_t end, uint64_t count) noexcept {
  for (; count && (pos & 1); ++pos) {
    if (pos >= end) return kNoLinePos;
    if (!(line_nibble(data, pos) & 8u)) --count;
  }
  while (count > 1 && pos < end && end - pos >= 16) {
    uint64_t w;
    std::memcpy(&w, data + (pos >> 1), 8);
    const uint64_t ends = line_popcount(~w & 0x8888888888888888ULL);
    if (ends >= count) break;
    count -= ends;
    pos += 16;
  }
  for (; count; ++pos) {
    if (pos >= end) return kNoLinePos;
    if (!(line_nibble(data, pos) & 8u)) --count;
  }
  return pos;
}

}  // namespace codelex
