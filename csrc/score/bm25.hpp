// BM25 scoring over a live index (base segment + delta): term-at-a-time
// accumulation into a reusable dense accumulator, then partial top-k
// selection and a best-line pass over the winners only.
//
// Only tf and document lengths are stored; idf, N and avgdl come from the
// index's running counters at query time, so no stored value depends on
// global statistics.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lexical/live_index.hpp"
#include "score/topk.hpp"

namespace codelex {

struct QueryTerm {
  uint32_t term;
  double idf;
};

struct SearchRequest {
  const uint32_t* term_ids = nullptr;  // distinct, in query order; unknown ids are skipped
  size_t n_term_ids = 0;
  uint64_t generation = 0;             // the slot layout the caller's mask and paths describe
  const uint8_t* allowed = nullptr;    // n_slots, 0 = filtered out; null = all
  size_t allowed_len = 0;
  const double* multiplier = nullptr;  // n_slots priors; null = 1
  size_t multiplier_len = 0;
  double multiplier_max = std::numeric_limits<double>::infinity();  // bound of multiplier[]; +inf: no pruning
  size_t limit = 20;
  double k1 = 0;  // BM25 parameters: the caller passes them (codelex.defaults)
  double b = 0;
  bool exhaustive = false;  // score every posting (the reference path; tests compare the two)
  // Below this many base postings in all, scoring every posting beats pruning.
  int64_t prune_min_postings = 16384;
};

enum class SearchStatus : int { kOk = 0, kStale = 1, kBadLength = 2 };

// idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive.
inline double bm25_idf(double n_docs, double df) { return std::log(1.0 + (n_docs - df + 0.5) / (df + 0.5)); }

// Owns the accumulator; one per concurrent search.
class Scorer {
 public:
  // Ranks the live documents of index for req into out (best first), under
  // the index's read lock.  kStale when the index's slot layout is no longer
  // req.generation; kBadLength when a mask is not n_slots long.
  SearchStatus search(const LiveIndex& index, const SearchRequest& req, std::vector<SearchHit>& out);

 private:
  template <bool kMasked, bool kDeadBase>
  void accumulate_base(const LiveIndex& index, const SearchRequest& req);
  // Document-at-a-time over the base with MaxScore pruning: only documents
  // whose upper bound can reach the current k-th score are scored.  Scores
  // are summed in query-term order, as in accumulate_base, so they are the same.
  void search_base_pruned(const LiveIndex& index, const SearchRequest& req, TopK& top);
  // (max tf, min document length) over a base term's postings, cached per base.
  std::pair<uint32_t, uint32_t> term_bounds(const LiveIndex& index, uint32_t term);
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> bounds_;
  const void* bounds_base_ = nullptr;
  uint64_t bounds_generation_ = UINT64_MAX;
  void accumulate_delta(const LiveIndex& index, const SearchRequest& req);
  uint32_t best_line(const LiveIndex& index, uint32_t doc);

  // Per-document length norm k1 * (1 - b + b * dl / avgdl), computed once per
  // change of the index's statistics: one division per posting instead of two.
  void refresh_norms(const LiveIndex& index, double k1, double b, double avgdl);
  uint64_t norm_version_ = UINT64_MAX;
  double norm_k1_ = 0, norm_b_ = 0, norm_avgdl_ = 0;
  // Adds one posting's score.  A document is new to this query when its stamp
  // is not the current epoch; the test feeds selects instead of a branch that
  // would mispredict on every first touch.
  void add(uint32_t d, double score, uint32_t tf) {
    DocState& st = docs_[d];
    const bool seen = st.stamp == epoch_;
    st.stamp = epoch_;
    touched_[n_touched_] = d;
    n_touched_ += !seen;
    st.acc = (seen ? st.acc : 0.0) + score;  // 0 + s == s: the reference's sum, term by term
    st.hits = (seen ? st.hits : 0) + tf;
  }

  // Everything a posting touches about its document, in one place: one cache
  // line per posting instead of four scattered ones.
  struct DocState {
    double norm;  // k1 * (1 - b + b * dl / avgdl), per statistics version
    double acc;
    uint32_t hits;
    uint32_t stamp;
  };
  std::vector<QueryTerm> terms_;
  std::vector<DocState> docs_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> touched_;  // n_docs + 1 long; the first n_touched_ are this query's documents
  size_t n_touched_ = 0;
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

}  // namespace codelex
