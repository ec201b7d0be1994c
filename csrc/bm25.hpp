// BM25 scoring over CSR posting segments: term-at-a-time accumulation into a
// reusable dense accumulator, then partial top-k selection.
//
// Only tf and document lengths are stored; idf, N and avgdl come from running
// counters at query time, so no stored value depends on global statistics.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace codelex {

// Read-only view of a segment's arrays (numpy- or mmap-owned).
struct SegmentView {
  const int64_t* term_ptr = nullptr;  // n_terms + 1
  size_t n_terms = 0;
  const uint32_t* post_doc = nullptr;
  const uint32_t* post_tf = nullptr;
  const int64_t* term_line_ptr = nullptr;  // n_terms + 1
  const uint32_t* post_line_off = nullptr;
  const uint8_t* line_data = nullptr;
  size_t line_bytes = 0;
};

struct QueryTerm {
  uint32_t term;
  double idf;
};

struct SearchRequest {
  const QueryTerm* terms = nullptr;
  size_t n_terms = 0;
  double k1 = 1.2;
  double b = 0.75;
  double avgdl = 1.0;
  const uint32_t* doc_len = nullptr;    // n_docs
  size_t n_docs = 0;
  const uint8_t* allowed = nullptr;     // n_docs, 0 = filtered out; null = all
  const double* multiplier = nullptr;   // n_docs priors; null = 1
  const uint32_t* path_rank = nullptr;  // n_docs, position of the path in sorted order
  size_t limit = 20;
};

struct SearchHit {
  uint32_t doc;
  uint32_t hits;  // sum of tf over the matched query terms
  uint32_t line;  // best line: largest total idf of distinct query terms, earliest on ties
  double score;
};

// idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive.
inline double bm25_idf(double n_docs, double df) { return std::log(1.0 + (n_docs - df + 0.5) / (df + 0.5)); }

// Owns the accumulator; one per concurrent search.
class Scorer {
 public:
  // Ranks the documents of seg for req into out (best first).
  void search(const SegmentView& seg, const SearchRequest& req, std::vector<SearchHit>& out);

 private:
  template <bool kMasked>
  void accumulate(const SegmentView& seg, const SearchRequest& req);
  uint32_t best_line(const SegmentView& seg, const SearchRequest& req, uint32_t doc);

  std::vector<double> acc_;
  std::vector<uint32_t> hits_;
  std::vector<uint32_t> touched_;
  struct LineCursor {
    const uint8_t* pos;
    const uint8_t* end;
    uint32_t left;  // lines not yet decoded
    uint32_t line;  // current line
    double idf;
    bool active = true;
    // Moves to the next line; false (and inactive) when exhausted or malformed.
    bool advance() noexcept {
      if (left == 0 || pos >= end) return active = false;
      uint32_t delta = 0;
      int shift = 0;
      for (;;) {
        if (pos >= end || shift > 28) return active = false;
        const uint8_t byte = *pos++;
        delta |= static_cast<uint32_t>(byte & 0x7F) << shift;
        if (!(byte & 0x80)) break;
        shift += 7;
      }
      line += delta;
      --left;
      return true;
    }
  };
  std::vector<LineCursor> cursors_;
};

// Finds doc in the postings of term; returns the posting index or -1.
int64_t find_posting(const SegmentView& seg, uint32_t term, uint32_t doc) noexcept;

}  // namespace codelex

namespace codelex {
// Checks the structural invariants that scoring relies on (monotonic offsets,
// document ids in range and ascending within a term, line offsets inside the
// line data).  Returns null when valid, else a static description.
const char* validate_segment(const SegmentView& seg, size_t n_docs) noexcept;
}  // namespace codelex
