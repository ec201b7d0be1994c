// Identifier-aware tokenizer: identifier runs, sub-identifier splitting,
// stopwords.  Behaviour is specified in the README ("Tokenization") and
// mirrored by src/codelex/_reference.py.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "text/definitions.hpp"
#include "text/unicode.hpp"
#include "text/vocabulary.hpp"

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

  // Lowercased tokens; a plain buffer, sized once per identifier, because
  // std::string growth showed up in profiles.
  std::vector<char> buf_;
  size_t len_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> kept_;  // (offset, length) in buf_
  std::string lowered_;                              // scratch for the Unicode path
  std::vector<uint32_t> offs_;
  std::vector<uint8_t> cls_;
};

template <class Emit>
void IdentifierSplitter::split(const unsigned char* p, const unsigned char* end, bool ascii, Emit&& emit) {
  kept_.clear();
  len_ = 0;
  const size_t n = static_cast<size_t>(end - p);
  if (ascii) {
    // Whole identifier and pieces: at most 2n bytes.
    if (buf_.size() < 2 * n + 16) buf_.resize(2 * n + 16);
    char* out = buf_.data();
    for (size_t i = 0; i < n; ++i) {
      const unsigned char c = p[i];
      out[i] = static_cast<char>((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
    }
    if (n >= 2 && !is_stopword(out, n)) {
      kept_.emplace_back(0u, static_cast<uint32_t>(n));
      len_ = n;
    }
  } else {
    lowered_.clear();
    const size_t chars = append_lower(lowered_, p, end);
    // Lowercasing grows UTF-8 by at most 1.5x (e.g. U+0130 -> "i" U+0307).
    const size_t need = lowered_.size() + 2 * n + 16;
    if (buf_.size() < need) buf_.resize(need);
    if (chars >= 2 && !is_stopword(lowered_.data(), lowered_.size())) {
      std::memcpy(buf_.data(), lowered_.data(), lowered_.size());
      kept_.emplace_back(0u, static_cast<uint32_t>(lowered_.size()));
      len_ = lowered_.size();
    }
  }
  if (ascii) {
    split_ascii(p, end);
  } else {
    split_unicode(p, end);
  }
  for (const auto& k : kept_) emit(buf_.data() + k.first, static_cast<size_t>(k.second));
}

// Finds identifier runs in UTF-8 text, calling on_run(uint32_t line, const
// unsigned char* begin, const unsigned char* end, bool ascii) for each.  Lines
// are split on '\n' and numbered from 1 (a '\r' before '\n' is a separator like
// any other non-identifier byte).  Ill-formed UTF-8 bytes act as separators.
template <class OnRun>
void for_each_identifier(const unsigned char* p, const unsigned char* end, OnRun&& on_run) {
  uint32_t line = 1;
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
    on_run(line, start, p, ascii);
  }
}

// Tokenizes UTF-8 text, calling sink(uint32_t line, const char* token, size_t
// len) for every token occurrence.
template <class Sink>
void tokenize_text(const unsigned char* p, const unsigned char* end, IdentifierSplitter& splitter, Sink&& sink) {
  for_each_identifier(p, end, [&](uint32_t line, const unsigned char* b, const unsigned char* e, bool ascii) {
    splitter.split(b, e, ascii, [&](const char* t, size_t n) { sink(line, t, n); });
  });
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

// The fields of a document besides its body (the code ranking's): the
// identifiers of its directory and of its file name (without the extension),
// and of the names it defines.  Their terms are the body's tokens behind a
// one-byte prefix (kFieldPrefix), so they share the vocabulary and the
// posting machinery without ever meeting a body term.
enum Field : int { kBody = 0, kDir = 1, kName = 2, kDefs = 3 };
constexpr int kFields = 4;
constexpr int kExtraFields = 3;  // dir, name, defs
constexpr char kFieldPrefix[kFields] = {0, 1, 2, 3};

// Definitions given by the caller (instead of the scanner's): names[i] stands on lines[i].
struct DefinitionList {
  std::vector<std::string> names;
  std::vector<uint32_t> lines;
};

// Token occurrences of a document: terms[i] occurs on lines[i], in text order.
struct Occurrences {
  std::vector<uint32_t> terms;
  std::vector<uint32_t> lines;
};

// Tokenizes documents into term ids of a vocabulary.  Identifiers repeat
// heavily in code, so each distinct identifier is split and interned once and
// its term ids are cached (the cache stays valid because term ids never
// change).  Not thread-safe: one instance per thread or behind a lock.
class DocumentTokenizer {
 public:
  explicit DocumentTokenizer(Vocabulary& vocab) : vocab_(vocab) { reset_cache(); }

  // Calls sink(uint32_t line, uint32_t term_id) for every token occurrence.
  template <class Sink>
  void tokenize(const char* data, size_t n, Sink&& sink);

  void tokenize(const char* data, size_t n, Occurrences& out);
  void reset_cache();

  // Calls sink(int field, uint32_t line, uint32_t term_id) for the extra
  // fields of a document: its path's directory and name tokens (line 0), then
  // its definitions' tokens on their lines, in line order.  defs, when not
  // null, replaces the definition scanner.
  template <class Sink>
  void tokenize_fields(const char* path, size_t path_n, const char* data, size_t n, const DefinitionList* defs,
                       Sink&& sink);

 private:
  uint32_t intern_field(int field, const char* t, size_t len);
  std::string field_scratch_;
  std::vector<DefinitionName> scanned_;

  Vocabulary& vocab_;
  IdentifierSplitter splitter_;
  Vocabulary idents_;                  // distinct identifier runs seen so far
  std::vector<uint32_t> ident_start_;  // run id -> first index in ident_terms_
  std::vector<uint32_t> ident_terms_;
};

template <class Sink>
void DocumentTokenizer::tokenize(const char* data, size_t n, Sink&& sink) {
  auto p = reinterpret_cast<const unsigned char*>(data);
  for_each_identifier(p, p + n, [&](uint32_t line, const unsigned char* b, const unsigned char* e, bool ascii) {
    const size_t before = idents_.size();
    const uint32_t rid = idents_.intern(reinterpret_cast<const char*>(b), static_cast<size_t>(e - b));
    if (idents_.size() != before) {
      splitter_.split(b, e, ascii, [&](const char* t, size_t len) { ident_terms_.push_back(vocab_.intern(t, len)); });
      ident_start_.push_back(static_cast<uint32_t>(ident_terms_.size()));
    }
    for (uint32_t i = ident_start_[rid]; i < ident_start_[rid + 1]; ++i) sink(line, ident_terms_[i]);
  });
  if (idents_.size() > (1u << 22)) reset_cache();  // bound the cache (~4M distinct runs)
}

inline uint32_t DocumentTokenizer::intern_field(int field, const char* t, size_t len) {
  field_scratch_.assign(1, kFieldPrefix[field]);
  field_scratch_.append(t, len);
  return vocab_.intern(field_scratch_.data(), field_scratch_.size());
}

template <class Sink>
void DocumentTokenizer::tokenize_fields(const char* path, size_t path_n, const char* data, size_t n,
                                        const DefinitionList* defs, Sink&& sink) {
  // dir / name: everything before the last '/', and the last part without its extension.
  size_t slash = path_n;
  while (slash > 0 && path[slash - 1] != '/') --slash;
  const size_t base = slash;
  size_t stem_end = path_n;
  for (size_t i = path_n; i > base + 1; --i) {
    if (path[i - 1] == '.') {
      stem_end = i - 1;
      break;
    }
  }
  auto p = reinterpret_cast<const unsigned char*>(path);
  if (base > 0)
    tokenize_text(p, p + base - 1, splitter_, [&](uint32_t, const char* t, size_t len) {
      sink(kDir, 0u, intern_field(kDir, t, len));
    });
  tokenize_text(p + base, p + stem_end, splitter_, [&](uint32_t, const char* t, size_t len) {
    sink(kName, 0u, intern_field(kName, t, len));
  });
  auto each_name = [&](const char* name, size_t len, uint32_t line) {
    auto q = reinterpret_cast<const unsigned char*>(name);
    tokenize_text(q, q + len, splitter_, [&](uint32_t, const char* t, size_t tl) {
      sink(kDefs, line, intern_field(kDefs, t, tl));
    });
  };
  if (defs != nullptr) {
    for (size_t i = 0; i < defs->names.size(); ++i)
      each_name(defs->names[i].data(), defs->names[i].size(), defs->lines[i]);
    return;
  }
  scanned_.clear();
  scan_definitions(data, n, definition_rules_of(path, path_n), scanned_);
  for (const DefinitionName& d : scanned_) each_name(data + d.begin, d.end - d.begin, d.line);
}

}  // namespace codelex
