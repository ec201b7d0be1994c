#include "score/docs_sections.hpp"

#include <algorithm>

namespace codelex {

size_t count_occurrences(std::string_view text, std::string_view word, size_t cap) noexcept {
  size_t n = 0;
  size_t at = 0;
  while (n < cap) {
    at = text.find(word, at);
    if (at == std::string_view::npos) break;
    ++n;
    at += word.size();
  }
  return n;
}

bool docs_section_scores(const uint8_t* headings, size_t headings_size, const uint64_t* heading_off,
                         const uint8_t* texts, size_t texts_size, const uint64_t* text_off, size_t n_sections,
                         const uint32_t* candidates, size_t n_candidates,
                         const std::vector<std::string_view>& words, std::string_view phrase,
                         const DocsScoringRules& rules, const uint8_t* may_hold, int32_t* out) noexcept {
  for (size_t k = 0; k < n_candidates; ++k) {
    const uint32_t i = candidates[k];
    if (i >= n_sections) return false;
    const uint64_t h0 = heading_off[i], h1 = heading_off[i + 1], t0 = text_off[i], t1 = text_off[i + 1];
    if (h0 > h1 || h1 > headings_size || t0 > t1 || t1 > texts_size) return false;
    const std::string_view heading(reinterpret_cast<const char*>(headings) + h0, h1 - h0);
    const std::string_view text(reinterpret_cast<const char*>(texts) + t0, t1 - t0);
    int32_t total = 0;
    if (!phrase.empty()) {
      if (heading.find(phrase) != std::string_view::npos) total += rules.phrase_in_heading;
      if (text.find(phrase) != std::string_view::npos) total += rules.phrase_in_text;
    }
    size_t present = 0;
    const uint8_t* row = may_hold != nullptr ? may_hold + k * words.size() : nullptr;
    for (size_t w = 0; w < words.size(); ++w) {
      if (row != nullptr && row[w] == 0) continue;  // absent: no score, not present
      const std::string_view word = words[w];
      const bool in_heading = heading.find(word) != std::string_view::npos;
      const size_t occurrences = count_occurrences(text, word, rules.max_counted_occurrences);
      if (in_heading) total += rules.term_in_heading;
      total += rules.term_occurrence * static_cast<int32_t>(occurrences);
      present += (in_heading || occurrences > 0) ? 1 : 0;
    }
    if (!words.empty() && present == words.size()) total += rules.all_terms;
    out[k] = total;
  }
  return true;
}

}  // namespace codelex
