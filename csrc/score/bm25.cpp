#include "score/bm25.hpp"

#include <algorithm>

namespace codelex {

namespace {

// Same expression, same evaluation order as the reference (and the
// original), so scores agree to the last bit without FMA contraction; the
// length norm k1 * (1 - b + b * dl / avgdl) comes precomputed.
inline double term_score(double idf, double tf, double norm, double k1) {
  return idf * tf * (k1 + 1) / (tf + norm);
}

}  // namespace

void Scorer::refresh_norms(const LiveIndex& index, double k1, double b, double avgdl) {
  const size_t n = index.n_slots_unlocked();
  if (norm_version_ == index.stats_version_unlocked() && docs_.size() >= n && norm_k1_ == k1 && norm_b_ == b &&
      norm_avgdl_ == avgdl)
    return;
  const uint32_t* doc_len = index.doc_len_data();
  for (size_t d = 0; d < n; ++d) docs_[d].norm = k1 * (1 - b + b * static_cast<double>(doc_len[d]) / avgdl);
  norm_version_ = index.stats_version_unlocked();
  norm_k1_ = k1;
  norm_b_ = b;
  norm_avgdl_ = avgdl;
}

template <bool kMasked, bool kDeadBase>
void Scorer::accumulate_base(const LiveIndex& index, const SearchRequest& req) {
  const SegmentView& seg = index.base().seg;
  const uint8_t* base_live = index.base_live_or_null();
  const double k1 = req.k1;
  for (const QueryTerm& q : terms_) {
    if (q.term >= seg.n_terms) continue;
    const int64_t e = seg.term_ptr[q.term + 1];
    for (int64_t p = seg.term_ptr[q.term]; p < e; ++p) {
      const uint32_t d = seg.post_doc[p];
      if (kDeadBase && !base_live[d]) continue;
      if (kMasked && !req.allowed[d]) continue;
      add(d, term_score(q.idf, seg.post_tf[p], docs_[d].norm, k1), seg.post_tf[p]);
    }
  }
}

void Scorer::accumulate_delta(const LiveIndex& index, const SearchRequest& req) {
  const uint32_t* gen = index.gen_data();
  const double k1 = req.k1;
  for (const QueryTerm& q : terms_) {
    const std::vector<DeltaPosting>* list = index.delta_list(q.term);
    if (!list) continue;
    for (const DeltaPosting& dp : *list) {
      const uint32_t d = dp.doc;
      if (dp.gen != gen[d]) continue;  // superseded or removed
      if (req.allowed && !req.allowed[d]) continue;
      add(d, term_score(q.idf, dp.tf, docs_[d].norm, k1), dp.tf);
    }
  }
}

// Streams the matched terms' line lists in ascending line order (a k-way
// merge of varint cursors): the first line carrying every matched term has
// the maximal weight, so the scan usually stops early.
uint32_t Scorer::best_line(const LiveIndex& index, uint32_t doc) {
  cursors_.clear();
  double total = 0.0;
  const bool in_base = index.is_base_doc(doc);
  const SegmentView& seg = index.base().seg;
  for (const QueryTerm& q : terms_) {
    LineCursor c;
    if (in_base) {
      const int64_t p = find_posting(seg, q.term, doc);
      if (p < 0) continue;
      c.pos = seg.line_data + seg.term_line_ptr[q.term] + seg.post_line_off[p];
      c.end = seg.line_data + seg.line_bytes;
      c.left = seg.post_tf[p];
    } else {
      const DeltaPosting* dp = index.find_delta(q.term, doc);
      if (!dp) continue;
      c.pos = index.delta_lines() + dp->line_off;
      c.end = index.delta_lines() + index.delta_line_bytes();
      c.left = dp->tf;
    }
    c.line = 0;
    c.idf = q.idf;
    if (!c.advance()) continue;
    total += c.idf;
    cursors_.push_back(c);
  }
  if (cursors_.empty()) return 1;
  uint32_t best = 1;
  double best_w = -1.0;
  for (;;) {
    uint32_t m = UINT32_MAX;
    bool any = false;
    for (const auto& c : cursors_) {
      if (c.active && c.line < m) {
        m = c.line;
        any = true;
      }
    }
    if (!any) break;
    double w = 0.0;  // summed in query-term order, like the reference
    for (auto& c : cursors_) {
      if (c.active && c.line == m) {
        w += c.idf;
        c.advance();
      }
    }
    if (w > best_w) {
      best_w = w;
      best = m;
      if (w == total) break;  // every matched term is on this line: nothing later can beat it
    }
  }
  return best;
}

std::pair<uint32_t, uint32_t> Scorer::term_bounds(const LiveIndex& index, uint32_t term) {
  const SegmentView& seg = index.base().seg;
  // The base changes only by install or merge, which change the generation too.
  if (bounds_base_ != seg.term_ptr || bounds_generation_ != index.generation_unlocked()) {
    bounds_.clear();
    bounds_base_ = seg.term_ptr;
    bounds_generation_ = index.generation_unlocked();
  }
  auto it = bounds_.find(term);
  if (it != bounds_.end()) return it->second;
  uint32_t max_tf = 0, min_dl = UINT32_MAX;
  const uint32_t* doc_len = index.doc_len_data();
  for (int64_t p = seg.term_ptr[term]; p < seg.term_ptr[term + 1]; ++p) {
    max_tf = std::max(max_tf, seg.post_tf[p]);
    min_dl = std::min(min_dl, doc_len[seg.post_doc[p]]);
  }
  // A document that later left the base only lowers the true maxima: still bounds.
  if (bounds_.size() > 65536) bounds_.clear();
  return bounds_[term] = {max_tf, min_dl};
}

void Scorer::search_base_pruned(const LiveIndex& index, const SearchRequest& req, TopK& top) {
  const SegmentView& seg = index.base().seg;
  const uint8_t* base_live = index.base_live_or_null();
  const double k1 = req.k1;
  struct Cursor {
    const uint32_t* doc;
    const uint32_t* end;
    const uint32_t* tf;
    double idf;
    double ub;
    size_t query_pos;
  };
  std::vector<Cursor> cursors;
  cursors.reserve(terms_.size());
  for (size_t i = 0; i < terms_.size(); ++i) {
    const QueryTerm& q = terms_[i];
    if (q.term >= seg.n_terms || seg.term_ptr[q.term] == seg.term_ptr[q.term + 1]) continue;
    const auto [max_tf, min_dl] = term_bounds(index, q.term);
    const double norm_min = k1 * (1 - req.b + req.b * static_cast<double>(min_dl) / norm_avgdl_);
    // The largest score any posting of the term can have, inflated a little
    // against rounding, times the largest multiplier.
    const double ub = term_score(q.idf, max_tf, norm_min, k1) * (1 + 1e-9) * req.multiplier_max;
    const int64_t s = seg.term_ptr[q.term], e = seg.term_ptr[q.term + 1];
    cursors.push_back(Cursor{seg.post_doc + s, seg.post_doc + e, seg.post_tf + s, q.idf, ub, i});
  }
  std::sort(cursors.begin(), cursors.end(), [](const Cursor& a, const Cursor& c) { return a.ub < c.ub; });
  std::vector<double> prefix(cursors.size() + 1, 0.0);  // prefix[j]: sum of the j smallest bounds
  for (size_t j = 0; j < cursors.size(); ++j) prefix[j + 1] = prefix[j] + cursors[j].ub;
  std::vector<int> at_query_pos(terms_.size(), -1);  // query position -> cursor
  for (size_t j = 0; j < cursors.size(); ++j) at_query_pos[cursors[j].query_pos] = static_cast<int>(j);
  // Cursors [0, first) are non-essential: together they cannot reach the threshold.
  size_t first = 0;
  auto update_first = [&]() {
    const double theta = top.threshold();
    while (first < cursors.size() && prefix[first + 1] < theta) ++first;
  };
  update_first();
  std::vector<uint32_t> tfs(terms_.size());
  while (first < cursors.size()) {
    uint32_t d = UINT32_MAX;
    for (size_t j = first; j < cursors.size(); ++j)
      if (cursors[j].doc < cursors[j].end && *cursors[j].doc < d) d = *cursors[j].doc;
    if (d == UINT32_MAX) break;
    const bool usable = (!base_live || base_live[d]) && (!req.allowed || req.allowed[d]);
    if (usable) {
      // The essential terms' exact contributions plus the bound of the others.
      double bound = prefix[first];
      for (size_t j = first; j < cursors.size(); ++j)
        if (cursors[j].doc < cursors[j].end && *cursors[j].doc == d)
          bound += term_score(cursors[j].idf, *cursors[j].tf, docs_[d].norm, k1) * (1 + 1e-9) * req.multiplier_max;
      if (bound >= top.threshold()) {
        for (size_t i = 0; i < terms_.size(); ++i) {
          tfs[i] = 0;
          const int j = at_query_pos[i];
          if (j < 0) continue;
          Cursor& c = cursors[static_cast<size_t>(j)];
          if (static_cast<size_t>(j) < first) c.doc = std::lower_bound(c.doc, c.end, d), c.tf = seg.post_tf + (c.doc - seg.post_doc);
          if (c.doc < c.end && *c.doc == d) tfs[i] = *c.tf;
        }
        double score = 0.0;
        uint32_t hits = 0;
        for (size_t i = 0; i < terms_.size(); ++i) {  // query order, as accumulate_base sums
          if (!tfs[i]) continue;
          score = score + term_score(terms_[i].idf, tfs[i], docs_[d].norm, k1);
          hits += tfs[i];
        }
        if (req.multiplier) score *= req.multiplier[d];
        if (top.offer(SearchHit{d, hits, 0, score}) && top.full()) update_first();
      }
    }
    for (size_t j = first; j < cursors.size(); ++j) {
      Cursor& c = cursors[j];
      if (c.doc < c.end && *c.doc == d) {
        ++c.doc;
        ++c.tf;
      }
    }
  }
}

SearchStatus Scorer::search(const LiveIndex& index, const SearchRequest& req, std::vector<SearchHit>& out) {
  out.clear();
  auto lock = index.read_lock();
  if (index.generation_unlocked() != req.generation) return SearchStatus::kStale;
  const size_t n_docs = index.n_slots_unlocked();
  if ((req.allowed && req.allowed_len != n_docs) || (req.multiplier && req.multiplier_len != n_docs))
    return SearchStatus::kBadLength;
  if (req.limit == 0 || n_docs == 0) return SearchStatus::kOk;
  const double n = index.n_live_unlocked() > 0 ? static_cast<double>(index.n_live_unlocked()) : 1.0;
  double avgdl = static_cast<double>(index.total_tokens_unlocked()) / n;
  if (!(avgdl > 0)) avgdl = 1.0;
  terms_.clear();
  for (size_t i = 0; i < req.n_term_ids; ++i) {
    const uint32_t df = index.df_unlocked(req.term_ids[i]);
    if (df == 0) continue;
    terms_.push_back(QueryTerm{req.term_ids[i], bm25_idf(n, df)});
  }
  if (terms_.empty()) return SearchStatus::kOk;
  if (docs_.size() < n_docs) {
    docs_.resize(n_docs, DocState{0.0, 0.0, 0, 0});
    // add() stores before it knows whether the document is new: one spare
    // slot for the store that follows the last new document.
    touched_.resize(n_docs + 1);
  }
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    for (auto& st : docs_) st.stamp = 0;
    epoch_ = 1;
  }
  n_touched_ = 0;
  refresh_norms(index, req.k1, req.b, avgdl);
  // Pruning pays off when several terms of different weights meet; one term,
  // an unbounded multiplier or a request for the reference path: score all.
  // Also skipped for short lists (term at a time is cheaper there) and under
  // a mask (filtered queries keep few candidates; the threshold rises late).
  bool prune = !req.exhaustive && terms_.size() >= 2 && std::isfinite(req.multiplier_max) && !req.allowed;
  if (prune) {
    const SegmentView& seg = index.base().seg;
    int64_t postings = 0;
    for (const QueryTerm& q : terms_)
      if (q.term < seg.n_terms) postings += seg.term_ptr[q.term + 1] - seg.term_ptr[q.term];
    prune = postings >= req.prune_min_postings;
  }
  if (!prune) {
    const bool dead = index.base_live_or_null() != nullptr;
    if (req.allowed) {
      dead ? accumulate_base<true, true>(index, req) : accumulate_base<true, false>(index, req);
    } else {
      dead ? accumulate_base<false, true>(index, req) : accumulate_base<false, false>(index, req);
    }
  }
  accumulate_delta(index, req);  // delta documents: few, scored term at a time
  // Top-k in one pass over the accumulated documents, then (when pruning)
  // over the base documents that can still enter it.
  TopK top(index, req.limit, out);
  for (size_t i = 0; i < n_touched_; ++i) {
    const uint32_t d = touched_[i];
    double score = docs_[d].acc;
    if (req.multiplier) score *= req.multiplier[d];
    top.offer(SearchHit{d, docs_[d].hits, 0, score});
  }
  if (prune) search_base_pruned(index, req, top);
  top.finish();
  for (auto& h : out) h.line = best_line(index, h.doc);
  return SearchStatus::kOk;
}

}  // namespace codelex
