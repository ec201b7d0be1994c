#include "text/tokenizer.hpp"

#include <cstring>

namespace codelex {

namespace {
constexpr uint8_t S = kIdStart | kIdCont;            // '_' and '$'
constexpr uint8_t L = kIdStart | kIdCont | kChunk;   // ASCII letters
constexpr uint8_t D = kIdCont | kChunk;              // ASCII digits
}  // namespace

// clang-format off
const uint8_t kAsciiFlags[128] = {
  0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0, 0,0,0,0,0,0,0,0,
  0,0,0,0,S,0,0,0, 0,0,0,0,0,0,0,0, D,D,D,D,D,D,D,D, D,D,0,0,0,0,0,0,
  0,L,L,L,L,L,L,L, L,L,L,L,L,L,L,L, L,L,L,L,L,L,L,L, L,L,L,0,0,0,0,S,
  0,L,L,L,L,L,L,L, L,L,L,L,L,L,L,L, L,L,L,L,L,L,L,L, L,L,L,0,0,0,0,0,
};
// clang-format on

const uint8_t kAsciiClass[128] = {
#define U kUpper
#define W kLower
#define G kDigit
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, G, G, G, G, G, G, G, G, G, G, 0, 0, 0, 0, 0, 0,
    0, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, 0, 0, 0, 0, 0,
    0, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, W, 0, 0, 0, 0, 0,
#undef U
#undef W
#undef G
};

namespace {
// The stopword table, generated at build time from codelex.defaults.STOPWORDS.
#include "codelex_stopwords.inc"
}  // namespace

// Compares the packed first eight bytes (one integer compare per candidate of
// the same length) and, for longer words, the rest.
bool is_stopword(const char* s, size_t n) noexcept {
  if (n < kStopMinLen || n > kStopMaxLen) return false;
  uint64_t v = 0;
  std::memcpy(&v, s, n < 8 ? n : 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  v = __builtin_bswap64(v);
#endif
  bool hit = false;
  for (size_t i = kStopStart[n]; i < kStopStart[n + 1]; ++i)
    hit |= kStopHead[i] == v && (n <= 8 || std::memcmp(s + 8, kStopTail[i], n - 8) == 0);
  return hit;
}

bool IdentifierSplitter::seen(const char* s, size_t n) const noexcept {
  for (const auto& k : kept_) {
    if (k.second == n && (n == 0 || std::memcmp(buf_.data() + k.first, s, n) == 0)) return true;
  }
  return false;
}

void IdentifierSplitter::add_piece(const unsigned char* p, const unsigned char* end, bool ascii) {
  const size_t base = len_;
  size_t chars, n;
  char* out = buf_.data() + base;
  if (ascii) {
    chars = n = static_cast<size_t>(end - p);
    if (chars < 2) return;
    for (size_t i = 0; i < n; ++i) {
      const unsigned char c = p[i];
      out[i] = static_cast<char>((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
    }
  } else {
    lowered_.clear();
    chars = append_lower(lowered_, p, end);
    n = lowered_.size();
    if (n) std::memcpy(out, lowered_.data(), n);
  }
  if (chars < 2 || is_stopword(out, n) || seen(out, n)) return;
  kept_.emplace_back(static_cast<uint32_t>(base), static_cast<uint32_t>(n));
  len_ = base + n;
}

// The four split rules of the specification, applied in order by regex
// replacement in the original, are equivalent to one predicate on adjacent
// characters (no replacement can consume the start of a later match); the
// reference implementation applies them literally.
static inline bool is_letter(uint8_t c) { return c == kUpper || c == kLower || c == kAlpha; }

static inline bool boundary(uint8_t prev, uint8_t cur, uint8_t next) {
  if (cur == kUpper && (prev == kLower || prev == kDigit)) return true;  // camel
  if (prev == kUpper && cur == kUpper && next == kLower) return true;    // acronym
  if (is_letter(prev) && cur == kDigit) return true;                     // letter|digit
  if (prev == kDigit && is_letter(cur)) return true;                     // digit|letter
  return false;
}

void IdentifierSplitter::split_ascii(const unsigned char* p, const unsigned char* end) {
  const unsigned char* q = p;
  while (q < end) {
    while (q < end && !(kAsciiFlags[*q] & kChunk)) ++q;
    const unsigned char* piece = q;
    while (q < end && (kAsciiFlags[*q] & kChunk)) {
      const unsigned char* nx = q + 1;
      if (nx < end && (kAsciiFlags[*nx] & kChunk)) {
        const uint8_t next = (nx + 1 < end) ? kAsciiClass[nx[1]] : kNone;
        if (boundary(kAsciiClass[*q], kAsciiClass[*nx], next)) {
          add_piece(piece, nx, true);
          piece = nx;
        }
      }
      q = nx;
    }
    if (piece < q) add_piece(piece, q, true);
  }
}

void IdentifierSplitter::split_unicode(const unsigned char* p, const unsigned char* end) {
  // Decode once: code point classes and byte offsets (ill-formed bytes are
  // separators, class kNone without kChunk).
  cls_.clear();
  offs_.clear();
  const unsigned char* q = p;
  while (q < end) {
    offs_.push_back(static_cast<uint32_t>(q - p));
    uint32_t cp;
    int len = decode_utf8(q, end, cp);
    if (len == 0) {
      cls_.push_back(0xFF);  // not a chunk character
      ++q;
      continue;
    }
    const CharRecord& r = char_record(cp);
    cls_.push_back((r.flags & kChunk) ? r.cls : 0xFF);
    q += len;
  }
  offs_.push_back(static_cast<uint32_t>(end - p));
  const size_t n = cls_.size();
  size_t i = 0;
  while (i < n) {
    while (i < n && cls_[i] == 0xFF) ++i;
    size_t piece = i;
    while (i < n && cls_[i] != 0xFF) {
      const size_t j = i + 1;
      if (j < n && cls_[j] != 0xFF) {
        const uint8_t next = (j + 1 < n && cls_[j + 1] != 0xFF) ? cls_[j + 1] : kNone;
        if (boundary(cls_[i], cls_[j], next)) {
          add_piece(p + offs_[piece], p + offs_[j], false);
          piece = j;
        }
      }
      i = j;
    }
    if (piece < i) add_piece(p + offs_[piece], p + offs_[i], false);
  }
}

}  // namespace codelex


namespace codelex {

void split_identifier(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out) {
  out.clear();
  auto p = reinterpret_cast<const unsigned char*>(data);
  bool ascii = true;
  for (size_t i = 0; i < n; ++i) ascii &= p[i] < 0x80;
  splitter.split(p, p + n, ascii, [&](const char* t, size_t len) { out.push(t, len); });
}

void tokenize_line(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out) {
  out.clear();
  auto p = reinterpret_cast<const unsigned char*>(data);
  tokenize_text(p, p + n, splitter, [&](uint32_t, const char* t, size_t len) { out.push(t, len); });
}

void DocumentTokenizer::reset_cache() {
  idents_.clear();
  ident_start_.assign(1, 0);
  ident_terms_.clear();
}

void DocumentTokenizer::tokenize(const char* data, size_t n, Occurrences& out) {
  out.terms.clear();
  out.lines.clear();
  tokenize(data, n, [&](uint32_t line, uint32_t term) {
    out.terms.push_back(term);
    out.lines.push_back(line);
  });
}

}  // namespace codelex
