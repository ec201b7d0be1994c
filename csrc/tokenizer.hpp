// Identifier-aware tokenizer: identifier runs, sub-identifier splitting,
// stopwords.  Behaviour is specified in the README ("Tokenization") and
// mirrored by src/codelex/_reference.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "unicode.hpp"

namespace codelex {

// True for the 44 stopwords (compared after lowercasing).
bool is_stopword(const char* s, size_t n) noexcept;

// Flags of an ASCII byte (same bits as CharRecord::flags).
extern const uint8_t kAsciiFlags[128];
extern const uint8_t kAsciiClass[128];

// Splits identifiers into tokens.  Owns scratch buffers, so one instance must
// not be shared between threads; reusing it avoids allocation per identifier.
class IdentifierSplitter {
 public:
  // Calls emit(const char* token, size_t len) for every token of the
  // identifier [p, end), in order: the whole identifier first (when kept),
  // then the new pieces.  Token pointers are valid only during the call.
  template <class Emit>
  void split(const unsigned char* p, const unsigned char* end, bool ascii, Emit&& emit);

 private:
  bool seen(const char* s, size_t n) const noexcept;
  void split_ascii(const unsigned char* p, const unsigned char* end);
  void split_unicode(const unsigned char* p, const unsigned char* end);
  void add_piece(const unsigned char* p, const unsigned char* end, bool ascii);

  std::string buf_;                                  // lowercased tokens
  std::vector<std::pair<uint32_t, uint32_t>> kept_;  // (offset, length) in buf_
  std::vector<uint32_t> cps_;                        // scratch for the Unicode path
  std::vector<uint32_t> offs_;
  std::vector<uint8_t> cls_;
};

template <class Emit>
void IdentifierSplitter::split(const unsigned char* p, const unsigned char* end, bool ascii, Emit&& emit) {
  buf_.clear();
  kept_.clear();
  const size_t chars = append_lower(buf_, p, end);
  if (chars >= 2 && !is_stopword(buf_.data(), buf_.size())) {
    kept_.emplace_back(0u, static_cast<uint32_t>(buf_.size()));
  } else {
    buf_.clear();
  }
  if (ascii) {
    split_ascii(p, end);
  } else {
    split_unicode(p, end);
  }
  for (const auto& k : kept_) emit(buf_.data() + k.first, static_cast<size_t>(k.second));
}

// Tokenizes UTF-8 text, calling sink(uint32_t line, const char* token, size_t
// len) for every token occurrence.  Lines are split on '\n' and numbered from
// 1 (a '\r' before '\n' is a separator like any other non-identifier byte).
// Ill-formed UTF-8 bytes act as separators.
template <class Sink>
void tokenize_text(const unsigned char* p, const unsigned char* end, IdentifierSplitter& splitter, Sink&& sink) {
  uint32_t line = 1;
  auto emit = [&](const char* t, size_t n) { sink(line, t, n); };
  while (p < end) {
    const unsigned c = *p;
    const unsigned char* start = p;
    if (c < 0x80) {
      if (c == '\n') {
        ++line;
        ++p;
        continue;
      }
      if (!(kAsciiFlags[c] & kIdStart)) {
        ++p;
        continue;
      }
      ++p;
    } else {
      uint32_t cp;
      const int len = decode_utf8(p, end, cp);
      if (len == 0) {
        ++p;
        continue;
      }
      p += len;
      if (!(char_record(cp).flags & kIdStart)) continue;
    }
    bool ascii = c < 0x80;
    while (p < end) {
      const unsigned d = *p;
      if (d < 0x80) {
        if (!(kAsciiFlags[d] & kIdCont)) break;
        ++p;
      } else {
        uint32_t cp;
        const int len = decode_utf8(p, end, cp);
        if (len == 0 || !(char_record(cp).flags & kIdCont)) break;
        p += len;
        ascii = false;
      }
    }
    splitter.split(start, p, ascii, emit);
  }
}

}  // namespace codelex

namespace codelex {

// Flat outputs for the bindings: token i is buf[offsets[i]:offsets[i+1]].
struct TokenList {
  std::string buf;
  std::vector<uint32_t> offsets{0};
  void clear() {
    buf.clear();
    offsets.assign(1, 0);
  }
  void push(const char* t, size_t n) {
    buf.append(t, n);
    offsets.push_back(static_cast<uint32_t>(buf.size()));
  }
};

// split_identifier() of the public API, on UTF-8 bytes.
void split_identifier(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out);
// tokenize_line() of the public API: every token of the text, as one line.
void tokenize_line(const char* data, size_t n, IdentifierSplitter& splitter, TokenList& out);

// Token occurrences of a document: terms[i] occurs on lines[i], in text order.
struct Occurrences {
  std::vector<uint32_t> terms;
  std::vector<uint32_t> lines;
};

class Vocabulary;
// Tokenizes a whole document and interns its tokens into vocab.
void tokenize_document(const char* data, size_t n, Vocabulary& vocab, IdentifierSplitter& splitter,
                       Occurrences& out);

}  // namespace codelex
