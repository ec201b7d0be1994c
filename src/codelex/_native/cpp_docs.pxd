# Declarations of csrc/score/docs_sections.hpp.
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libcpp cimport bool
from libcpp.string_view cimport string_view
from libcpp.vector cimport vector

cdef extern from "score/docs_sections.hpp" namespace "codelex" nogil:
    cdef struct DocsScoringRules:
        int32_t phrase_in_heading
        int32_t phrase_in_text
        int32_t term_in_heading
        int32_t term_occurrence
        uint32_t max_counted_occurrences
        int32_t all_terms

    size_t count_occurrences(string_view text, string_view word, size_t cap)
    bool docs_section_scores(const uint8_t* headings, size_t headings_size, const uint64_t* heading_off,
                             const uint8_t* texts, size_t texts_size, const uint64_t* text_off, size_t n_sections,
                             const uint32_t* candidates, size_t n_candidates,
                             const vector[string_view]& words, string_view phrase,
                             const DocsScoringRules& rules, const uint8_t* may_hold, int32_t* out)
