// Character classification, UTF-8 decoding and Python-compatible lowercasing.
//
// The tables behind these functions are generated at build time from the
// building interpreter (tools/gen_unicode_tables.py), so that the native
// tokenizer agrees with str.isalpha()/str.lower() of the Python it serves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace codelex {

enum CharFlag : uint8_t {
  kIdStart = 1,    // may start an identifier run
  kIdCont = 2,     // may continue an identifier run
  kChunk = 4,      // letter, digit or mark: part of a sub-identifier chunk
  kCased = 8,      // cased and not case-ignorable
  kIgnorable = 16  // case-ignorable
};

enum CharClass : uint8_t { kNone = 0, kUpper, kLower, kDigit, kAlpha, kMark };

struct CharRecord {
  uint8_t flags;
  uint8_t cls;
  uint8_t lower_len;    // code points in the lowercase mapping
  int32_t lower_value;  // delta to the lowercase code point, or kMultiLower index
};

const CharRecord& char_record(uint32_t cp) noexcept;

// Unicode version of the tables, e.g. "14.0.0".
const char* unicode_version() noexcept;

// Decodes one well-formed UTF-8 sequence at p (p < end).  Returns its length
// in bytes and stores the code point, or returns 0 for an ill-formed
// sequence (surrogates, overlongs, truncation, stray continuation bytes).
inline int decode_utf8(const unsigned char* p, const unsigned char* end, uint32_t& cp) noexcept {
  const unsigned c0 = p[0];
  if (c0 < 0x80) {
    cp = c0;
    return 1;
  }
  const std::ptrdiff_t avail = end - p;
  if (c0 >= 0xC2 && c0 <= 0xDF) {
    if (avail < 2 || (p[1] & 0xC0) != 0x80) return 0;
    cp = ((c0 & 0x1Fu) << 6) | (p[1] & 0x3Fu);
    return 2;
  }
  if (c0 >= 0xE0 && c0 <= 0xEF) {
    if (avail < 3) return 0;
    const unsigned c1 = p[1];
    const unsigned lo = c0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned hi = c0 == 0xED ? 0x9F : 0xBF;
    if (c1 < lo || c1 > hi || (p[2] & 0xC0) != 0x80) return 0;
    cp = ((c0 & 0x0Fu) << 12) | ((c1 & 0x3Fu) << 6) | (p[2] & 0x3Fu);
    return 3;
  }
  if (c0 >= 0xF0 && c0 <= 0xF4) {
    if (avail < 4) return 0;
    const unsigned c1 = p[1];
    const unsigned lo = c0 == 0xF0 ? 0x90 : 0x80;
    const unsigned hi = c0 == 0xF4 ? 0x8F : 0xBF;
    if (c1 < lo || c1 > hi || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
    cp = ((c0 & 0x07u) << 18) | ((c1 & 0x3Fu) << 12) | ((p[2] & 0x3Fu) << 6) | (p[3] & 0x3Fu);
    return 4;
  }
  return 0;
}

void append_utf8(std::string& out, uint32_t cp);

// Appends the lowercase form of the UTF-8 text [p, end) to out, exactly as
// Python's str.lower() would produce it for the whole span (including the
// context-dependent final sigma).  Ill-formed bytes are copied unchanged.
// Returns the number of code points appended (ill-formed bytes count one each).
size_t append_lower(std::string& out, const unsigned char* p, const unsigned char* end);

}  // namespace codelex
