#include "text/definitions.hpp"

#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

namespace codelex {

namespace {

#include "codelex_definition_rules.inc"

constexpr bool same_name(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
static_assert(sizeof(kDefinitionRuleNames) / sizeof(kDefinitionRuleNames[0]) == kDefinitionRuleCount,
              "codelex.languages.DEFINITION_RULES and DefinitionRules differ in number");
static_assert(same_name(kDefinitionRuleNames[kGenericRules], "generic") &&
                  same_name(kDefinitionRuleNames[kGoRules], "go"),
              "codelex.languages.DEFINITION_RULES and DefinitionRules differ in order");

using sv = std::string_view;

constexpr size_t kMaxLine = 2000;

constexpr sv kKeywords[] = {
    "def",    "defp",      "defmacro", "defmacrop", "defmodule", "defstruct", "defprotocol", "defimpl",
    "defguard", "defdelegate", "class", "struct",   "enum",      "trait",     "interface",   "protocol",
    "object", "record",    "module",   "namespace", "type",      "typealias", "func",        "fn",
    "fun",    "function",  "sub",      "proc",      "impl",      "union",     "mod",         "given",
    "macro_rules"};
constexpr sv kModifiers[] = {
    "export", "default", "public",  "private",  "protected", "internal",  "static",   "abstract",  "final",
    "sealed", "open",    "override", "async",   "inline",    "extern",    "unsafe",   "data",      "case",
    "inner",  "suspend", "virtual", "partial",  "pub",       "const",     "annotation", "companion", "value",
    "actual", "expect",  "lazy",    "implicit", "readonly",  "declare",   "synchronized", "native", "transient",
    "volatile", "strictfp", "mut"};
constexpr sv kControl[] = {
    "if",     "for",    "while",  "switch", "catch", "return", "new",   "else",    "do",    "try",   "throw",
    "await",  "yield",  "elif",   "except", "with",  "assert", "del",   "print",   "raise", "match", "when",
    "unless", "until",  "foreach", "lock",  "using", "fixed",  "sizeof", "typeof", "goto",  "case",  "delete",
    "not",    "and",    "or",     "in",     "is"};
constexpr sv kTailWords[] = {"->", "=>", "throws", "const", "override", "noexcept", "where", "="};

template <size_t N>
bool among(const sv (&words)[N], sv w) {
  for (const sv& x : words)
    if (x == w) return true;
  return false;
}

inline bool is_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$'; }
inline bool is_cont(char c) { return is_start(c) || (c >= '0' && c <= '9'); }
inline bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

struct Line {
  const char* p;
  size_t n;
  char at(size_t i) const { return i < n ? p[i] : '\0'; }
  sv slice(size_t a, size_t b) const { return sv(p + a, b - a); }
  bool starts_with(sv s, size_t i) const { return i <= n && n - i >= s.size() && std::memcmp(p + i, s.data(), s.size()) == 0; }
  size_t find(char c, size_t from) const {
    for (size_t i = from; i < n; ++i)
      if (p[i] == c) return i;
    return SIZE_MAX;
  }
};

size_t ident(const Line& l, size_t i) {
  if (i < l.n && is_start(l.p[i])) {
    ++i;
    while (i < l.n && is_cont(l.p[i])) ++i;
  }
  return i;
}

size_t spaces(const Line& l, size_t i) {
  while (i < l.n && (l.p[i] == ' ' || l.p[i] == '\t')) ++i;
  return i;
}

// The last part of a.b.c or a::b starting at i, as [begin, end); begin == end when none.
std::pair<size_t, size_t> dotted(const Line& l, size_t i) {
  size_t end = ident(l, i);
  if (end == i) return {i, i};
  size_t begin = i;
  for (;;) {
    size_t next;
    if (l.starts_with("::", end)) {
      next = end + 2;
    } else if (l.at(end) == '.') {
      next = end + 1;
    } else {
      return {begin, end};
    }
    const size_t stop = ident(l, next);
    if (stop == next) return {begin, end};
    begin = next;
    end = stop;
  }
}

bool upper_constant(sv w) {
  if (w.size() < 2 || !is_upper(w[0]) || w.back() == '_') return false;
  bool alpha = false;
  for (char c : w) {
    if (!(is_upper(c) || is_digit(c) || c == '_')) return false;
    alpha |= is_upper(c);
  }
  return alpha;
}

size_t matching(const Line& l, size_t paren) {
  int depth = 0;
  for (size_t q = paren; q < l.n; ++q) {
    if (l.p[q] == '(') {
      ++depth;
    } else if (l.p[q] == ')') {
      if (--depth == 0) return q;
    }
  }
  return SIZE_MAX;
}

bool prefix_char(char c) { return is_cont(c) || c == ' ' || c == '\t' || c == '<' || c == '>' || c == '[' || c == ']' ||
                                 c == ',' || c == '?' || c == '*' || c == '&' || c == ':'; }

bool blank(const Line& l, size_t a, size_t b) {
  for (size_t i = a; i < b; ++i)
    if (l.p[i] != ' ' && l.p[i] != '\t') return false;
  return true;
}

using Span = std::pair<size_t, size_t>;  // [begin, end) of a name in a line; begin == end for none
constexpr Span kNone{0, 0};

// `#define NAME` (the line's '#' at i).
Span macro_definition(const Line& l, size_t i) {
  const size_t n = l.n;
  const size_t j = spaces(l, i + 1);
  if (l.starts_with("define", j) && j + 6 < n && (l.p[j + 6] == ' ' || l.p[j + 6] == '\t')) {
    const size_t k = spaces(l, j + 6);
    return {k, ident(l, k)};
  }
  return kNone;
}

// Modifiers, then a definition keyword and a name (`pub fn name`, `func (r) Name`, `macro_rules! name`, a Go
// declaration's `type name`).
Span keyword_definition(const Line& l, size_t i, bool go) {
  size_t j = i;
  for (;;) {
    const size_t end = ident(l, j);
    if (end == j) return kNone;
    const sv word = l.slice(j, end);
    if (go && (word == "const" || word == "var" || word == "type")) {
      const size_t k = spaces(l, end);
      if (k > end) {
        const size_t stop = ident(l, k);
        if (stop > k) return {k, stop};
      }
      return kNone;
    }
    if (among(kModifiers, word)) {
      size_t after = end;
      if (word == "pub" && l.at(end) == '(') {  // Rust's pub(crate), pub(super), pub(in path)
        const size_t close = matching(l, end);
        if (close == SIZE_MAX) return kNone;
        after = close + 1;
      }
      const size_t k = spaces(l, after);
      if (k == end) return kNone;
      j = k;
      continue;
    }
    if (!among(kKeywords, word)) return kNone;
    size_t k = end;
    if (word == "macro_rules") {
      if (l.at(k) != '!') return kNone;
      ++k;
    }
    size_t k2 = spaces(l, k);
    if (word == "func" && l.at(k2) == '(') {
      const size_t close = l.find(')', k2);
      if (close == SIZE_MAX) return kNone;
      k2 = spaces(l, close + 1);
    } else if (k2 == k) {
      return kNone;
    }
    const auto name = dotted(l, k2);
    return name.second > name.first ? name : kNone;
  }
}

// `NAME = ...` or `NAME: type = ...` at the start of a line, NAME upper-case.
Span constant_assignment(const Line& l) {
  const size_t n = l.n;
  const size_t end = ident(l, 0);
  if (!upper_constant(l.slice(0, end))) return kNone;
  size_t k = spaces(l, end);
  if (k < n && l.p[k] == ':') {
    const size_t eq = l.find('=', k);
    k = eq == SIZE_MAX ? n : eq;
  }
  if (k < n && l.p[k] == '=' && !l.starts_with("==", k)) return {0, end};
  return kNone;
}

// For an `[export] const|let|var name = ...` line: the name when a function is bound to it (`function`, an arrow
// function), else none; nothing (no value) for any other line.
std::optional<Span> bound_function(const Line& l, size_t i) {
  const size_t n = l.n;
  size_t j = i;
  size_t end = ident(l, j);
  if (l.slice(j, end) == "export") {
    j = spaces(l, end);
    end = ident(l, j);
  }
  const sv decl = l.slice(j, end);
  if (decl != "const" && decl != "let" && decl != "var") return std::nullopt;
  const size_t k = spaces(l, end);
  const size_t name_end = ident(l, k);
  if (name_end > k) {
    const size_t eq = l.find('=', name_end);
    if (eq != SIZE_MAX && !l.starts_with("==", eq)) {
      // Between the name and '=' only blanks, or a type after ':'.
      size_t t = spaces(l, name_end);
      if (t == eq || l.p[t] == ':') {
        size_t r = spaces(l, eq + 1);
        if (l.starts_with("async ", r) || l.starts_with("async(", r)) r = spaces(l, r + 5);
        const size_t e2 = ident(l, r);
        const bool function = l.starts_with("function", r) && (r + 8 == n || !is_cont(l.p[r + 8]));
        const bool arrow_of_name = e2 > r && l.starts_with("=>", spaces(l, e2));
        if (function || l.at(r) == '(' || arrow_of_name) return Span{k, name_end};
      }
    }
  }
  return kNone;
}

// A function or method head from i (`Type name(params) {`, `def name(...):`).
Span function_head(const Line& l, size_t i) {
  const size_t n = l.n;
  const size_t first_end = ident(l, i);
  if (first_end == i) return kNone;
  const sv first = l.slice(i, first_end);
  if (among(kControl, first) || among(kKeywords, first)) return kNone;
  const size_t paren = l.find('(', i);
  if (paren == SIZE_MAX) return kNone;
  size_t k = paren;
  while (k > i && (l.p[k - 1] == ' ' || l.p[k - 1] == '\t')) --k;
  size_t start = k;
  while (start > i && is_cont(l.p[start - 1])) --start;
  if (start == k || !is_start(l.p[start]) || among(kControl, l.slice(start, k))) return kNone;
  for (size_t q = i; q < start; ++q)
    if (!prefix_char(l.p[q])) return kNone;
  const bool words_before = !blank(l, i, start);
  const size_t close = matching(l, paren);
  if (close == SIZE_MAX) {  // the parameters go on: a head if something (a type, a modifier) precedes the name
    if (!words_before) return kNone;
    for (size_t q = paren; q < n; ++q)
      if (l.p[q] == ';') return kNone;
    return {start, k};
  }
  size_t t = close + 1;
  while (t < n && (l.p[t] == ' ' || l.p[t] == '\t' || l.p[t] == '\r')) ++t;
  size_t tail_end = n;
  while (tail_end > t && (l.p[tail_end - 1] == ' ' || l.p[tail_end - 1] == '\t' || l.p[tail_end - 1] == '\r'))
    --tail_end;
  if (l.starts_with("==", t)) return kNone;
  if (t < tail_end && (l.p[t] == '{' || l.p[t] == ':')) return {start, k};
  for (const sv& w : kTailWords)
    if (l.starts_with(w, t)) return {start, k};
  if (t == tail_end && words_before) return {start, k};
  return kNone;
}

// The [begin, end) of the name a line defines; begin == end for none.  The steps as the Python reference's
// scan_line (codelex._reference.definitions) takes them.
Span scan_line(const Line& l, bool go, bool in_go_block) {
  if (l.n > kMaxLine) return kNone;
  const size_t i = spaces(l, 0);
  // 1. a preprocessor definition; a name inside a Go declaration block
  if (i < l.n && l.p[i] == '#') return macro_definition(l, i);
  if (in_go_block && i > 0) {
    const size_t end = ident(l, i);
    if (end > i) return {i, end};
  }
  // 2. modifiers, then a definition keyword and a name
  const Span keyword = keyword_definition(l, i, go);
  if (keyword.second > keyword.first) return keyword;
  // 3. an upper-case constant at the start of a line
  if (i == 0) {
    const Span constant = constant_assignment(l);
    if (constant.second > constant.first) return constant;
  }
  // 4. a function bound to a name (any other const/let/var line defines nothing)
  if (const auto bound = bound_function(l, i)) return *bound;
  // 5. a function or method head
  return function_head(l, i);
}

}  // namespace

uint8_t definition_rules_of(const char* path, size_t n) {
  size_t base = n;
  while (base > 0 && path[base - 1] != '/') --base;
  size_t dot = n;
  while (dot > base && path[dot - 1] != '.') --dot;
  if (dot <= base + 1) return kGenericRules;  // no dot, or a leading-dot name such as ".bashrc"
  const size_t start = dot - 1, len = n - start;
  for (size_t r = 0; r < kExtensionRuleCount; ++r) {
    const ExtensionRules& e = kExtensionRules[r];
    if (e.n != len) continue;
    size_t i = 0;
    while (i < len) {
      char c = path[start + i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != e.ext[i]) break;
      ++i;
    }
    if (i == len) return e.rules;
  }
  return kGenericRules;
}

void scan_definitions(const char* data, size_t n, uint8_t rules, std::vector<DefinitionName>& out) {
  const bool go = rules == kGoRules;
  bool in_block = false;
  uint32_t number = 0;
  size_t pos = 0;
  while (pos <= n) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', n - pos));
    const size_t end = nl ? static_cast<size_t>(nl - data) : n;
    ++number;
    Line line{data + pos, end - pos};
    bool skip = false;
    if (go) {
      size_t a = 0, b = line.n;
      while (a < b && (line.p[a] == ' ' || line.p[a] == '\t' || line.p[a] == '\r')) ++a;
      while (b > a && (line.p[b - 1] == ' ' || line.p[b - 1] == '\t' || line.p[b - 1] == '\r')) --b;
      const sv stripped = line.slice(a, b);
      if (in_block && !stripped.empty() && stripped[0] == ')') {
        in_block = false;
        skip = true;
      } else if (stripped == "const (" || stripped == "var (" || stripped == "type (") {
        in_block = true;
        skip = true;
      }
    }
    if (!skip) {
      const auto name = scan_line(line, go, in_block);
      if (name.second > name.first)
        out.push_back(DefinitionName{number, static_cast<uint32_t>(pos + name.first),
                                     static_cast<uint32_t>(pos + name.second)});
    }
    if (!nl) break;
    pos = end + 1;
  }
}

}  // namespace codelex
