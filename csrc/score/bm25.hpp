// BM25 scoring over a live index (base segment + delta): term-at-a-time
// accumulation into a reusable dense accumulator, then partial top-k
// selection and a best-line pass over the winners only.
//
// Only tf and document lengths are stored; idf, N and avgdl come from the
// index's running counters at query time, so no stored value depends on
// global statistics.
#pragma once

#include <algorithm>
#include <iterator>
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

// A query term of the code ranking: its term id in each field (kNoTerm when
// the field has none), its weight (1 for a query token, less for a stem
// variant) and whether it is a query token (the boosts and the best line
// consider those only).  Terms that are not query tokens are the stem
// variants of the query token before them.
constexpr uint32_t kNoTerm = 0xFFFFFFFFu;
struct FieldTerm {
  uint32_t ids[kFields] = {kNoTerm, kNoTerm, kNoTerm, kNoTerm};
  double weight = 1.0;
  bool query_token = true;
};

// BM25F: per field a weight and a length normalisation, then the boosts for a
// document whose definitions, or file name, hold every query token.
struct FieldParams {
  double w[kFields] = {1.0, 0.0, 0.0, 0.0};
  double b[kFields] = {0.75, 0.5, 0.5, 0.5};
  double def_boost = 1.0;
  double name_boost = 1.0;
};

// The collection's statistics when the index is one shard of several (a
// federation): every shard scores with the same N, average lengths and dfs,
// so its scores are those of one index over the union of the shards.
struct GlobalStats {
  uint64_t n_docs = 0;        // live documents
  uint64_t total_tokens = 0;  // body tokens of the live documents
  uint64_t field_totals[kExtraFields] = {0, 0, 0};  // dir, name, defs
  // One df per req.term_ids entry (classic), or kFields per req.field_terms
  // entry, in field order (the code ranking).
  const uint64_t* df = nullptr;
  size_t n_df = 0;
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
  // The code ranking (BM25F over body, dir, name and defs) instead of classic BM25 over the body.
  bool fields = false;
  const FieldTerm* field_terms = nullptr;  // in query order, stem variants after their token
  size_t n_field_terms = 0;
  size_t n_query_tokens = 0;  // distinct tokens of the query (the boosts need all of them)
  FieldParams field_params;
  // Below this many base postings in all, scoring every posting beats pruning.
  int64_t prune_min_postings = 4096;
  // Statistics to score with instead of the index's own (null: the index's).
  const GlobalStats* global = nullptr;
};

// What a shard contributes to a federation's statistics, read under one read
// lock: its counters and the df of terms[0..n) (kNoTerm: 0) into dfs[0..n).
void local_stats(const LiveIndex& index, const uint32_t* terms, size_t n, GlobalStats& out, uint64_t* dfs);

// The code ranking walks the base document at a time (MaxScore) only when
// its rarest query term is in more than this share of the documents...
constexpr double kWindowsRareShare = 0.002;
// ...and in at most this share; otherwise by windows (see search_fields).
constexpr double kWindowsCommonShare = 0.3;

enum class SearchStatus : int { kOk = 0, kStale = 1, kBadLength = 2 };

// idf = ln(1 + (N - df + 0.5) / (df + 0.5)), always positive.
inline double bm25_idf(double n_docs, double df) { return std::log(1.0 + (n_docs - df + 0.5) / (df + 0.5)); }

// The first position of [p, end) holding a value >= d, searched from p
// outwards (steps 1, 2, 4...) and then by bisection: cheap when it is near.
// (It: a pointer or a DocIter.)
template <class It>
inline It gallop(It p, It end, uint32_t d) {
  size_t step = 1;
  It lo = p;
  while (lo < end && *lo < d) {
    p = lo + 1;
    lo = static_cast<size_t>(end - p) > step ? p + step : end;
    step <<= 1;
  }
  return std::lower_bound(p, lo < end ? lo + 1 : end, d);
}

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
  void accumulate_delta(const LiveIndex& index, const SearchRequest& req);
  // The code ranking, term at a time: per term, the field contributions of
  // each document are summed (in field order), saturated, and added.
  // The query's known terms (df > 0) with their idf, and the best line's terms.
  void prepare_field_terms(const LiveIndex& index, const SearchRequest& req);
  void accumulate_fields(const LiveIndex& index, const SearchRequest& req, bool base);
  void search_fields_pruned(const LiveIndex& index, const SearchRequest& req, TopK& top);
  // search_fields_pruned's steps: the cursors in bound order (field_cursors_, pruned_prefix_,
  // pruned_at_term_), one document's exact score offered to top, and the boosted documents scored first
  // (true when some are left to the main loop, their bounds carrying the boosts).
  struct FieldCursor;
  void open_field_cursors(const LiveIndex& index, const SearchRequest& req);
  bool score_exactly(std::vector<FieldCursor>& cs, size_t from, uint32_t d, const SearchRequest& req, TopK& top);
  bool score_boosted_first(const LiveIndex& index, const SearchRequest& req, TopK& top);
  std::vector<double> pruned_prefix_;
  std::vector<int> pruned_at_term_;
  // (max tf, min field length) over a base field term's postings, cached per base.
  std::pair<uint32_t, uint32_t> field_term_bounds(const LiveIndex& index, uint32_t term, int field);
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> field_bounds_;
  const void* field_bounds_base_ = nullptr;
  uint64_t field_bounds_generation_ = UINT64_MAX;
  // A query token with df > 0 somewhere among its terms, and its stem
  // variants (req.field_terms[first_variant, first_variant + n_variants)),
  // which fold into its tf~ with their weights: one idf (the largest df of
  // them all), one saturation.
  struct PrunedTerm {
    FieldTerm ft;
    double idf;
    size_t first_variant = 0;
    size_t n_variants = 0;
  };
  // The group path (a token with variants): every member's lists, base and
  // delta, through the delta scratch.
  // The per-term delta scratch, sized for n_docs, with a fresh epoch.
  void begin_term(size_t n_docs);
  // The base part (documents [lo, hi) of the base lists) and/or the delta part.
  void accumulate_group(const LiveIndex& index, const SearchRequest& req, const PrunedTerm& t, bool base, bool delta,
                        size_t all, uint32_t lo = 0, uint32_t hi = UINT32_MAX);
  // Block-max over document windows: the base is cut into windows of
  // 2^window_shift_ documents; each list's (max tf, min length) per window
  // bounds every query term's contribution there; windows are scored
  // exactly (term at a time, restricted to the window) in descending order
  // of their bound until the next bound cannot reach the k-th score.
  void search_fields_windows(const LiveIndex& index, const SearchRequest& req, TopK& top);
  // Per window of a field list: the largest tf * norm factor of its
  // documents there (0 where it has none), exactly as the scoring computes
  // it.  Cached for long lists (per base, window size and field norms),
  // recomputed for short ones.
  const std::vector<double>& window_bounds(const LiveIndex& index, uint32_t term, int field, int shift);
  std::unordered_map<uint64_t, std::vector<double>> window_cache_;
  // Per cached list (same keys): the first posting of each window, relative to the list's first.
  std::unordered_map<uint64_t, std::vector<uint32_t>> window_starts_;
  int window_shift_ = 0;  // the current windows' size (search_fields_windows)
  // The current windows' lists, by term: each one's postings, and where a
  // window's part of it starts (a long list's cached starts) or its
  // documents decoded (a short one), so clipping a list to a window costs
  // neither a posting lookup nor a search through packed ids.
  struct ClipList {
    uint32_t term;
    SegmentView::Range r;
    const uint32_t* starts;  // window_starts_ entry, or null
    size_t docs;             // offset of the decoded documents in clip_docs_ (starts null)
  };
  std::vector<ClipList> clip_lists_;
  std::vector<uint32_t> clip_docs_;
  size_t window_starts_n_ = 0;  // windows of the current base (each starts entry holds one more)
  void prepare_clip_lists(const LiveIndex& index, const SearchRequest& req);
  // The term's postings among documents [lo, hi): through window_starts_ for a window of a cached list.
  SegmentView::Range clip_to(const SegmentView& seg, uint32_t term, uint32_t lo, uint32_t hi) const;
  std::vector<double> window_scratch_;
  uint64_t field_norm_epoch_ = 0, window_cache_epoch_ = UINT64_MAX;
  std::vector<double> window_total_, window_tilde_;
  std::vector<uint32_t> window_order_;
  size_t window_cache_entries_ = 0;
  std::vector<PrunedTerm> pruned_terms_;
  size_t n_known_query_tokens_ = 0;
  double field_avg_[kFields] = {1.0, 1.0, 1.0, 1.0};
  // One query term over the base for document-at-a-time scoring: a cursor
  // into each of its non-empty field lists (in field order); cur is the
  // smallest document among them.  eval() caches the term's contribution at
  // a document, summed exactly as the term-at-a-time passes do.
  // One query term (a token with its stem variants, if any) as the union of
  // its members' field lists, members in order, each member's fields in order.
  static constexpr int kMaxSubs = 32;
  struct FieldCursor {
    struct Sub {
      int64_t p, end;  // postings of the list still ahead
      uint32_t doc;    // the document at p (UINT32_MAX once p reaches end)
      // Packed ids: the decoded run [run_lo, run_hi) of p's block (kForBlock
      // entries of the scorer's storage), so a step costs a load, not a decode.
      uint32_t* run;
      int64_t run_lo, run_hi;
      int field;
      double weight;  // the member's weight: 1 for the token, stem_weight for a variant
      bool own;       // the token itself: only it counts for the boosts
    };
    Sub sub[kMaxSubs];
    const SegmentView* seg = nullptr;
    int n = 0;
    bool grouped = false;
    double scale = 0, ub = 0;
    size_t term = 0;
    bool query_token = false;
    uint32_t cur = UINT32_MAX;
    uint32_t at = UINT32_MAX;  // the document of the cached contribution
    double contrib = 0;
    bool scored = false;  // tf~ > 0 at `at`
    uint32_t hits = 0;
    uint8_t mask = 0;
    void settle() {
      cur = UINT32_MAX;
      for (int i = 0; i < n; ++i)
        if (sub[i].doc < cur) cur = sub[i].doc;
    }
    // After a step (sequential: the run is worth decoding) or a seek (one id).
    void load(Sub& s, bool stepping = true) const noexcept {
      if (s.p >= s.end) {
        s.doc = UINT32_MAX;
      } else if (seg->post_doc) {
        s.doc = seg->post_doc[s.p];
      } else if (!stepping && (s.p < s.run_lo || s.p >= s.run_hi)) {
        s.doc = seg->packed_doc.get(static_cast<size_t>(s.p));
      } else {
        if (s.p < s.run_lo || s.p >= s.run_hi) {
          const int64_t stop = std::min<int64_t>(s.end, ((s.p >> kForShift) + 1) << kForShift);
          seg->packed_doc.decode_run(static_cast<size_t>(s.p), static_cast<size_t>(stop - s.p), s.run);
          s.run_lo = s.p;
          s.run_hi = stop;
        }
        s.doc = s.run[s.p - s.run_lo];
      }
    }
    // Gives every sub a run buffer of its own in storage (kForBlock a sub), none decoded yet.
    void assign_runs(uint32_t* storage) noexcept {
      for (int i = 0; i < n; ++i) {
        sub[i].run = storage + static_cast<size_t>(i) * kForBlock;
        sub[i].run_lo = sub[i].run_hi = 0;
      }
    }
    // tf~ summed as the term-at-a-time passes sum it: a plain term as body +
    // ((dir + name) + defs); a group as (sum of weight * body parts) + (sum of
    // weight * other parts), member-major.
    void eval(uint32_t d, const double* field_factor, double body_factor, double k1) {
      at = d;
      mask = 0;
      hits = 0;
      double body = 0.0, extra = 0.0;
      bool any_body = false, any_extra = false;
      for (int i = 0; i < n; ++i) {
        const Sub& s = sub[i];
        if (s.doc != d) continue;
        if (s.own) mask |= static_cast<uint8_t>(1u << s.field);
        const uint32_t tf = seg->tf(s.p);
        if (s.field == kBody) {
          hits += tf;
          const double c = grouped ? s.weight * (tf * body_factor) : tf * body_factor;
          body = any_body ? body + c : c;
          any_body = true;
        } else {
          const double f = tf * field_factor[d * kExtraFields + s.field - 1];
          const double c = grouped ? s.weight * f : f;
          extra = any_extra ? extra + c : c;
          any_extra = true;
        }
      }
      const double tilde = body + extra;
      scored = tilde > 0;
      contrib = scored ? scale * tilde * (k1 + 1) / (k1 + tilde) : 0.0;
    }
    void step(uint32_t d) {
      for (int i = 0; i < n; ++i)
        if (sub[i].doc == d) {
          ++sub[i].p;
          load(sub[i]);
        }
      settle();
    }
    void seek(uint32_t d) {
      for (int i = 0; i < n; ++i) {
        Sub& s = sub[i];
        if (s.doc >= d) continue;
        if (!seg->post_doc && s.p >= s.run_lo && s.p < s.run_hi && s.run[s.run_hi - 1 - s.run_lo] >= d) {
          s.p = s.run_lo + (std::lower_bound(s.run + (s.p - s.run_lo), s.run + (s.run_hi - s.run_lo), d) - s.run);
        } else if (seg->post_doc) {
          s.p = gallop(seg->post_doc + s.p, seg->post_doc + s.end, d) - seg->post_doc;
        } else {
          s.p = seg->lower_bound(s.p, s.end, d);
        }
        load(s, false);
      }
      settle();
    }
  };
  std::vector<FieldCursor> field_cursors_, first_cursors_;
  std::vector<uint32_t> cursor_runs_, first_cursor_runs_;  // the cursors' decoded runs (FieldCursor::Sub::run)
  std::vector<uint32_t> boosted_defs_, boosted_name_, scored_first_;
  static constexpr size_t kScoredFirstAll = 4096, kScoredFirstSome = 256;
  template <bool kMasked, bool kDeadBase>
  void accumulate_field_term_base(const LiveIndex& index, const SearchRequest& req, const FieldTerm& ft, double idf,
                                  uint32_t lo = 0, uint32_t hi = UINT32_MAX);
  void base_all_tokens(const LiveIndex& index, const SearchRequest& req, int field, std::vector<uint32_t>& out);
  std::vector<std::pair<DocIter, DocIter>> intersect_lists_;
  std::vector<uint32_t> base_full_;
  // Base postings of the query's terms, resolved once a query: the top hits'
  // fields and lines look up one document in each (cleared by search()).
  struct CachedRange {
    uint32_t term;  // kNoTerm: empty
    SegmentView::Range r;
  };
  static constexpr size_t kRangeSlots = 256;  // open addressing; at most half used
  mutable std::vector<CachedRange> range_cache_;
  mutable std::vector<uint32_t> range_used_;  // occupied slots, to clear
  void clear_range_cache();
  // The posting of doc in the base list of term, or -1 (its tf unverified: lines() verifies it).
  int64_t find_base_posting(const SegmentView& seg, uint32_t term, uint32_t doc) const;
  // The fields of doc that some query term matches (for the top hits only).
  uint32_t hit_fields(const LiveIndex& index, const SearchRequest& req, uint32_t doc) const;
  void accumulate_field_term_delta(const LiveIndex& index, const SearchRequest& req, const FieldTerm& ft, double idf,
                                   size_t all);
  // Counts, for a delta document, the query tokens found in its definitions
  // and file name; a count reaching `all` queues d for that boost.
  void mark(uint32_t d, uint8_t mask, size_t all);
  // The line of doc whose terms (of `terms`, in order) carry the largest total idf; earliest on ties.
  uint32_t best_line(const LiveIndex& index, uint32_t doc, const QueryTerm* terms, size_t n_terms);
  std::vector<QueryTerm> line_terms_;  // the code ranking's: body terms, then definition terms
  std::vector<QueryTerm> def_line_terms_;
  size_t n_body_line_terms_ = 0;
  void refresh_field_norms(const LiveIndex& index, const SearchRequest& req);
  void begin_query(size_t n_docs);
  SearchStatus search_fields(const LiveIndex& index, const SearchRequest& req, std::vector<SearchHit>& out);
  uint64_t field_norm_version_ = UINT64_MAX;
  FieldParams field_norm_params_;
  double field_norm_avg_[kFields] = {0, 0, 0, 0};  // the averages the factors were made with (local or global)
  // Per document and field, w / (1 - b + b * len / avglen): a posting's
  // contribution to tf~ is one multiplication.  The body's is in DocState.
  std::vector<double> field_factor_;  // n_docs * kExtraFields: dir, name, defs
  size_t field_norm_n_ = 0;

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
    double body_factor;  // the code ranking's w / (1 - b + b * dl / avgdl): beside acc, one cache line
  };
  // The code ranking's per-document records for documents of the delta
  // (few): their boost counts, and one term's field sums.
  struct FieldMarks {
    uint32_t stamp;   // query epoch
    uint32_t n_defs;  // query tokens found in the definitions
    uint32_t n_name;  // query tokens found in the file name
  };
  std::vector<FieldMarks> marks_;
  std::vector<uint32_t> defs_full_, name_full_;  // documents that reached every query token
  struct DeltaAcc {
    double body;     // this term's body contribution
    double extra;    // and its dir, name and defs contributions, summed in that order
    uint32_t stamp;  // term epoch
    uint32_t hits;   // this term's body tf
    uint8_t mask;    // fields this term matched
  };
  std::vector<DeltaAcc> delta_acc_;
  // The base pass's scratch: one term's dir + name + defs sum per document.
  struct ExtraAcc {
    double tilde;
    uint32_t stamp;  // open (even) or consumed (open - 1) for the current term
  };
  std::vector<ExtraAcc> extra_;
  uint32_t extra_epoch_ = 0;
  std::vector<uint32_t> delta_touched_;
  uint32_t term_epoch_ = 0;
  std::vector<QueryTerm> terms_;
  std::vector<DocState> docs_;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> touched_;  // n_docs + 1 long; the first n_touched_ are this query's documents
  size_t n_touched_ = 0;
  struct LineCursor {
    const uint8_t* data;
    uint64_t pos;  // nibble positions (lexical/line_lists.hpp)
    uint64_t end;
    uint32_t left;  // lines not yet decoded
    uint32_t line;  // current line
    double idf;
    bool active = true;
    // Moves to the next line; false (and inactive) when exhausted or malformed.
    bool advance() noexcept {
      uint32_t delta;
      if (left == 0 || !read_line_delta(data, pos, end, delta)) return active = false;
      line += delta;
      --left;
      return true;
    }
  };
  std::vector<LineCursor> cursors_;
};

}  // namespace codelex
