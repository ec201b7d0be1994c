// The docs search's section scores: the seed's integer rules (codelex.docs.scoring) on lowercased UTF-8.
//
// A substring of valid UTF-8 is found, and counted, exactly where the decoded text holds it, so the
// rules run on bytes.  Occurrences are non-overlapping and counted only up to the rule's cap: a common
// word in a long section stops costing once it has scored all it can.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace codelex {

struct DocsScoringRules {
  int32_t phrase_in_heading;
  int32_t phrase_in_text;
  int32_t term_in_heading;
  int32_t term_occurrence;
  uint32_t max_counted_occurrences;
  int32_t all_terms;
};

// Non-overlapping occurrences of word in text, at most cap (word non-empty).
size_t count_occurrences(std::string_view text, std::string_view word, size_t cap) noexcept;

// out[k] = the score of section candidates[k], its lowercased heading headings[heading_off[i],
// heading_off[i + 1]) and text likewise.  phrase empty: the phrase rules do not apply (the caller passes
// it empty when it is shorter than the rule's minimum, counted in characters).  Returns false, writing
// nothing further, at the first candidate whose offsets do not lie within the blobs (n_sections: the
// offset arrays hold n_sections + 1 entries).  may_hold, when given (n_candidates rows of words.size()
// bytes), says which words a candidate may contain: a 0 is a word known absent from its heading and text
// (its run index says so), not looked for.
bool docs_section_scores(const uint8_t* headings, size_t headings_size, const uint64_t* heading_off,
                         const uint8_t* texts, size_t texts_size, const uint64_t* text_off, size_t n_sections,
                         const uint32_t* candidates, size_t n_candidates,
                         const std::vector<std::string_view>& words, std::string_view phrase,
                         const DocsScoringRules& rules, const uint8_t* may_hold, int32_t* out) noexcept;

}  // namespace codelex
