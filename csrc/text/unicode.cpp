#include "text/unicode.hpp"

#include <vector>

namespace codelex {
namespace {
#include "codelex_unicode_data.inc"
}  // namespace

const CharRecord& char_record(uint32_t cp) noexcept {
  if (cp > 0x10FFFF) cp = 0xFFFD;
  return kRecords[kStage2[(static_cast<uint32_t>(kStage1[cp >> 8]) << 8) | (cp & 0xFF)]];
}

const char* unicode_version() noexcept { return CODELEX_UNICODE_VERSION; }

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

constexpr uint32_t kInvalid = 0xFFFFFFFFu;  // an ill-formed byte, kept verbatim
constexpr uint32_t kCapitalSigma = 0x03A3;

// CPython's Final_Sigma rule: U+03A3 lowers to U+03C2 when preceded by a cased
// letter and not followed by one, case-ignorable characters being skipped on
// both sides.  The CASED/IGNORABLE flags are probed from str.lower() itself by
// the generator: "A"+c+"Σ" ends in ς iff c is ignorable or cased, "1"+c+"Σ"
// ends in ς iff c is cased and not ignorable.
bool is_final_sigma(const std::vector<uint32_t>& cps, size_t i) {
  size_t j = i;
  uint8_t flags = 0;
  bool found = false;
  while (j > 0) {
    --j;
    flags = cps[j] == kInvalid ? 0 : char_record(cps[j]).flags;
    if (!(flags & kIgnorable)) {
      found = true;
      break;
    }
  }
  if (!found || !(flags & kCased)) return false;
  for (j = i + 1; j < cps.size(); ++j) {
    flags = cps[j] == kInvalid ? 0 : char_record(cps[j]).flags;
    if (!(flags & kIgnorable)) return !(flags & kCased);
  }
  return true;
}

}  // namespace

size_t append_lower(std::string& out, const unsigned char* p, const unsigned char* end) {
  // ASCII fast path: the overwhelmingly common case for source code.
  const unsigned char* q = p;
  while (q < end && *q < 0x80) ++q;
  if (q == end) {
    const size_t n = static_cast<size_t>(end - p);
    const size_t base = out.size();
    out.resize(base + n);
    for (size_t i = 0; i < n; ++i) {
      unsigned char c = p[i];
      out[base + i] = static_cast<char>((c >= 'A' && c <= 'Z') ? (c | 0x20) : c);
    }
    return n;
  }
  std::vector<uint32_t> cps;
  cps.reserve(static_cast<size_t>(end - p));
  std::vector<unsigned char> raw;  // per kInvalid entry: its byte count, then its bytes
  while (p < end) {
    uint32_t cp;
    int len = decode_utf8(p, end, cp);
    if (len == 0) {
      // A surrogate (only from str input encoded with "surrogatepass") is one
      // character to Python; any other ill-formed byte counts alone.
      const bool surrogate = end - p >= 3 && p[0] == 0xED && (p[1] & 0xE0) == 0xA0 && (p[2] & 0xC0) == 0x80;
      const int skip = surrogate ? 3 : 1;
      cps.push_back(kInvalid);
      raw.push_back(static_cast<unsigned char>(skip));
      raw.insert(raw.end(), p, p + skip);
      p += skip;
    } else {
      cps.push_back(cp);
      p += len;
    }
  }
  size_t count = 0;
  size_t raw_i = 0;
  for (size_t i = 0; i < cps.size(); ++i) {
    const uint32_t cp = cps[i];
    if (cp == kInvalid) {
      const int skip = raw[raw_i++];
      out.append(reinterpret_cast<const char*>(raw.data() + raw_i), skip);
      raw_i += skip;
      ++count;
      continue;
    }
    if (cp == kCapitalSigma) {
      append_utf8(out, is_final_sigma(cps, i) ? 0x03C2 : 0x03C3);
      ++count;
      continue;
    }
    const CharRecord& r = char_record(cp);
    if (r.lower_len == 1) {
      append_utf8(out, static_cast<uint32_t>(static_cast<int32_t>(cp) + r.lower_value));
    } else {
      for (int k = 0; k < r.lower_len; ++k) append_utf8(out, kMultiLower[r.lower_value + k]);
    }
    count += r.lower_len;
  }
  return count;
}

}  // namespace codelex
