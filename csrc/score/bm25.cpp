#include "score/bm25.hpp"

#include <algorithm>
#include <type_traits>

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
    const SegmentView::Range r = seg.postings(q.term);
    seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
      if (kDeadBase && !base_live[d]) return;
      if (kMasked && !req.allowed[d]) return;
      const uint32_t tf = seg.tf(p);
      add(d, term_score(q.idf, tf, docs_[d].norm, k1), tf);
    });
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
// merge of varint cursors) and stops once the terms still ahead cannot
// outweigh the best line so far (at the latest, at the first line carrying
// every matched term).
uint32_t Scorer::best_line(const LiveIndex& index, uint32_t doc, const QueryTerm* terms, size_t n_terms) {
  cursors_.clear();
  const bool in_base = index.is_base_doc(doc);
  const SegmentView& seg = index.base().seg;
  const uint32_t* starts = in_base ? index.base_line_starts() : nullptr;
  for (size_t i = 0; i < n_terms; ++i) {
    const QueryTerm& q = terms[i];
    LineCursor c;
    if (in_base) {
      const int64_t p = find_base_posting(seg, q.term, doc);
      if (p < 0) continue;
      c.data = seg.line_data;
      c.pos = starts ? starts[p] : seg.lines(p);
      c.end = seg.line_nibbles;
      c.left = seg.tf(p);
    } else {
      const DeltaPosting* dp = index.find_delta(q.term, doc);
      if (!dp) continue;
      c.data = index.delta_lines();
      c.pos = dp->line_off;
      c.end = 2 * index.delta_line_bytes();
      c.left = dp->tf;
    }
    c.line = 0;
    c.idf = q.idf;
    if (!c.advance()) continue;
    cursors_.push_back(c);
  }
  if (cursors_.empty()) return 1;
  uint32_t best = 1;
  double best_w = -1.0;
  for (;;) {
    uint32_t m = UINT32_MAX;
    bool any = false;
    // No line from here on outweighs the terms still active, summed in the
    // same order as w (a rounded sum of positive terms only grows with more
    // terms), so the best so far stands once it reaches them: this stops the
    // scan after the last definition line instead of at the end of the body.
    double rest = 0.0;
    for (const auto& c : cursors_) {
      if (c.active) {
        rest += c.idf;
        if (c.line < m) m = c.line;
        any = true;
      }
    }
    if (!any || best_w >= rest) break;
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
    }
  }
  return best;
}

std::pair<uint32_t, uint32_t> Scorer::term_bounds(const LiveIndex& index, uint32_t term) {
  return field_term_bounds(index, term, kBody);  // the body's length is the document's
}

void Scorer::search_base_pruned(const LiveIndex& index, const SearchRequest& req, TopK& top) {
  const SegmentView& seg = index.base().seg;
  const uint8_t* base_live = index.base_live_or_null();
  const double k1 = req.k1;
  struct Cursor {
    DocIter doc;
    DocIter end;
    double idf;
    double ub;
    size_t query_pos;
  };
  std::vector<Cursor> cursors;
  cursors.reserve(terms_.size());
  for (size_t i = 0; i < terms_.size(); ++i) {
    const QueryTerm& q = terms_[i];
    if (q.term >= seg.n_terms) continue;
    const SegmentView::Range r = seg.postings(q.term);
    if (r.begin == r.end) continue;
    const auto [max_tf, min_dl] = term_bounds(index, q.term);
    const double norm_min = k1 * (1 - req.b + req.b * static_cast<double>(min_dl) / norm_avgdl_);
    // The largest score any posting of the term can have, inflated a little
    // against rounding, times the largest multiplier.
    const double ub = term_score(q.idf, max_tf, norm_min, k1) * (1 + 1e-9) * req.multiplier_max;
    cursors.push_back(Cursor{seg.docs(r.begin), seg.docs(r.end), q.idf, ub, i});
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
          bound += term_score(cursors[j].idf, seg.tf(cursors[j].doc.p), docs_[d].norm, k1) * (1 + 1e-9) *
                   req.multiplier_max;
      if (bound >= top.threshold()) {
        for (size_t i = 0; i < terms_.size(); ++i) {
          tfs[i] = 0;
          const int j = at_query_pos[i];
          if (j < 0) continue;
          Cursor& c = cursors[static_cast<size_t>(j)];
          if (static_cast<size_t>(j) < first) c.doc = seg.docs(seg.lower_bound(c.doc.p, c.end.p, d));
          if (c.doc < c.end && *c.doc == d) tfs[i] = seg.tf(c.doc.p);
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
      if (c.doc < c.end && *c.doc == d) ++c.doc;
    }
  }
}

void Scorer::clear_range_cache() {
  if (range_cache_.size() != kRangeSlots) range_cache_.assign(kRangeSlots, CachedRange{kNoTerm, {0, 0}});
  for (uint32_t i : range_used_) range_cache_[i].term = kNoTerm;
  range_used_.clear();
}

int64_t Scorer::find_base_posting(const SegmentView& seg, uint32_t term, uint32_t doc) const {
  if (term >= seg.n_terms) return -1;
  if (range_cache_.empty()) range_cache_.assign(kRangeSlots, CachedRange{kNoTerm, {0, 0}});
  SegmentView::Range r{0, 0};
  size_t i = (term * 0x9E3779B1u) >> 24;  // kRangeSlots = 256
  for (;;) {
    CachedRange& c = range_cache_[i];
    if (c.term == term) {
      r = c.r;
      break;
    }
    if (c.term == kNoTerm) {
      r = seg.doc_postings(term);
      if (range_used_.size() < kRangeSlots / 2) {
        c = CachedRange{term, r};
        range_used_.push_back(static_cast<uint32_t>(i));
      }
      break;
    }
    i = (i + 1) & (kRangeSlots - 1);
  }
  const int64_t it = seg.lower_bound(r.begin, r.end, doc);
  return it == r.end || seg.doc(it) != doc ? -1 : it;
}

SearchStatus Scorer::search(const LiveIndex& index, const SearchRequest& req, std::vector<SearchHit>& out) {
  out.clear();
  auto lock = index.read_lock();
  clear_range_cache();
  if (index.generation_unlocked() != req.generation) return SearchStatus::kStale;
  const size_t n_docs = index.n_slots_unlocked();
  if ((req.allowed && req.allowed_len != n_docs) || (req.multiplier && req.multiplier_len != n_docs))
    return SearchStatus::kBadLength;
  if (req.limit == 0 || n_docs == 0) return SearchStatus::kOk;
  if (req.fields) return search_fields(index, req, out);
  const GlobalStats* g = req.global;
  const uint64_t live = g ? g->n_docs : index.n_live_unlocked();
  const double n = live > 0 ? static_cast<double>(live) : 1.0;
  double avgdl = static_cast<double>(g ? g->total_tokens : index.total_tokens_unlocked()) / n;
  if (!(avgdl > 0)) avgdl = 1.0;
  terms_.clear();
  for (size_t i = 0; i < req.n_term_ids; ++i) {
    const uint32_t df = index.df_unlocked(req.term_ids[i]);
    if (df == 0) continue;  // (also under global statistics: no live posting here)
    terms_.push_back(QueryTerm{req.term_ids[i], bm25_idf(n, g ? static_cast<double>(g->df[i]) : df)});
  }
  if (terms_.empty()) return SearchStatus::kOk;
  begin_query(n_docs);
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
      if (q.term < seg.n_terms) {
        const SegmentView::Range r = seg.postings(q.term);
        postings += r.end - r.begin;
      }
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
  for (auto& h : out) h.line = best_line(index, h.doc, terms_.data(), terms_.size());
  return SearchStatus::kOk;
}

void Scorer::refresh_field_norms(const LiveIndex& index, const SearchRequest& req) {
  const FieldParams& p = req.field_params;
  const size_t n = index.n_slots_unlocked();
  // The averages first: global statistics change without this index changing,
  // so the factors (and the window bounds made with them) are keyed on them.
  const GlobalStats* g = req.global;
  const uint64_t n_live = g ? g->n_docs : index.n_live_unlocked();
  const double live = n_live > 0 ? static_cast<double>(n_live) : 1.0;
  double avg[kFields];
  avg[0] = static_cast<double>(g ? g->total_tokens : index.total_tokens_unlocked()) / live;
  for (int f = 1; f < kFields; ++f)
    avg[f] = static_cast<double>(g ? g->field_totals[f - 1] : index.field_total_unlocked(f - 1)) / live;
  for (int f = 0; f < kFields; ++f)
    if (!(avg[f] > 0)) avg[f] = 1.0;  // an empty field: every length is 0 anyway
  bool same = field_norm_version_ == index.stats_version_unlocked() && field_norm_n_ == n && docs_.size() >= n;
  for (int f = 0; f < kFields; ++f)
    same = same && field_norm_params_.b[f] == p.b[f] && field_norm_params_.w[f] == p.w[f] &&
           field_norm_avg_[f] == avg[f];
  if (same) return;
  for (int f = 0; f < kFields; ++f) field_avg_[f] = field_norm_avg_[f] = avg[f];
  field_factor_.resize(n * kExtraFields);
  const uint32_t* doc_len = index.doc_len_data();
  const uint32_t* field_len = index.field_len_data();
  for (size_t d = 0; d < n; ++d) {
    docs_[d].body_factor = p.w[0] / (1 - p.b[0] + p.b[0] * static_cast<double>(doc_len[d]) / avg[0]);
    for (int f = 1; f < kFields; ++f)
      field_factor_[d * kExtraFields + f - 1] =
          p.w[f] / (1 - p.b[f] + p.b[f] * static_cast<double>(field_len[d * kExtraFields + f - 1]) / avg[f]);
  }
  field_norm_version_ = index.stats_version_unlocked();
  field_norm_n_ = n;
  field_norm_params_ = p;
  ++field_norm_epoch_;
}

void Scorer::mark(uint32_t d, uint8_t mask, size_t all) {
  FieldMarks& m = marks_[d];
  if (m.stamp != epoch_) m = FieldMarks{epoch_, 0, 0};
  if ((mask >> kDefs) & 1u && ++m.n_defs == all) defs_full_.push_back(d);
  if ((mask >> kName) & 1u && ++m.n_name == all) name_full_.push_back(d);
}

// One term over the base, in three passes: the dir/name/defs lists (short
// next to the body's) sum their contributions into scratch; the body list
// then runs as in the classic loop, adding each document's scratch sum (read
// in document order); the documents of those lists without the body match
// come last.  tf~ = body part + ((dir + name) + defs), as the reference sums.
namespace {
// The part of a posting range whose documents lie in [lo, hi).
inline SegmentView::Range clip(const SegmentView& seg, SegmentView::Range r, uint32_t lo, uint32_t hi) {
  if (lo == 0 && hi == UINT32_MAX) return r;
  const int64_t a = seg.lower_bound(r.begin, r.end, lo);
  return SegmentView::Range{a, seg.lower_bound(a, r.end, hi)};
}
}  // namespace

SegmentView::Range Scorer::clip_to(const SegmentView& seg, uint32_t term, uint32_t lo, uint32_t hi) const {
  if (lo == 0 && hi == UINT32_MAX) return seg.postings(term);
  const int shift = window_shift_;
  const uint32_t mask = (uint32_t{1} << shift) - 1;
  const auto it = std::lower_bound(clip_lists_.begin(), clip_lists_.end(), term,
                                   [](const ClipList& c, uint32_t t) { return c.term < t; });
  if (it == clip_lists_.end() || it->term != term || (lo & mask) || (hi != UINT32_MAX && (hi & mask)))
    return clip(seg, seg.postings(term), lo, hi);
  const SegmentView::Range r = it->r;
  if (it->starts) {
    const size_t n_win = window_starts_n_;
    const size_t w0 = std::min<size_t>(lo >> shift, n_win);
    const size_t w1 = hi == UINT32_MAX ? n_win : std::min<size_t>(hi >> shift, n_win);
    return SegmentView::Range{r.begin + it->starts[w0], r.begin + it->starts[std::max(w0, w1)]};
  }
  const uint32_t* docs = clip_docs_.data() + it->docs;
  const uint32_t* end = docs + (r.end - r.begin);
  const uint32_t* a = std::lower_bound(docs, end, lo);
  const uint32_t* b = hi == UINT32_MAX ? end : std::lower_bound(a, end, hi);
  return SegmentView::Range{r.begin + (a - docs), r.begin + (b - docs)};
}

void Scorer::prepare_clip_lists(const LiveIndex& index, const SearchRequest& req) {
  const SegmentView& seg = index.base().seg;
  clip_lists_.clear();
  clip_docs_.clear();
  const size_t n_win = ((index.base().n_docs - 1) >> window_shift_) + 1;
  window_starts_n_ = n_win;
  for (const PrunedTerm& t : pruned_terms_) {
    for (size_t m = 0; m <= t.n_variants; ++m) {
      const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
      for (int f = 0; f < kFields; ++f) {
        const uint32_t id = ft.ids[f];
        if (id == kNoTerm || id >= seg.n_terms) continue;
        const SegmentView::Range r = seg.postings(id);
        if (r.begin == r.end) continue;
        ClipList c{id, r, nullptr, clip_docs_.size()};
        auto it = window_starts_.find((static_cast<uint64_t>(id) << 8) | static_cast<uint64_t>(window_shift_));
        if (it != window_starts_.end() && it->second.size() == n_win + 1) {
          c.starts = it->second.data();
        } else {
          seg.for_each_doc(r.begin, r.end, [&](int64_t, uint32_t d) { clip_docs_.push_back(d); });
        }
        clip_lists_.push_back(c);
      }
    }
  }
  std::sort(clip_lists_.begin(), clip_lists_.end(), [](const ClipList& a, const ClipList& b) { return a.term < b.term; });
  clip_lists_.erase(std::unique(clip_lists_.begin(), clip_lists_.end(),
                                [](const ClipList& a, const ClipList& b) { return a.term == b.term; }),
                    clip_lists_.end());
}

template <bool kMasked, bool kDeadBase>
void Scorer::accumulate_field_term_base(const LiveIndex& index, const SearchRequest& req, const FieldTerm& ft,
                                        double idf, uint32_t lo, uint32_t hi) {
  const SegmentView& seg = index.base().seg;
  const uint8_t* base_live = index.base_live_or_null();
  const double k1 = req.k1;
  const double scale = ft.weight * idf;
  // Two stamps per term: `open` (a scratch sum waiting) and `open - 1` (consumed).
  extra_epoch_ += 2;
  if (extra_epoch_ < 2) {  // wrapped: forget every stamp
    for (auto& e : extra_) e.stamp = 0;
    extra_epoch_ = 2;
  }
  const uint32_t open = extra_epoch_;
  size_t n_extra = 0;  // documents with a scratch sum; the body pass counts those it consumes
  for (int f = 1; f < kFields; ++f) {
    const uint32_t t = ft.ids[f];
    if (t == kNoTerm || t >= seg.n_terms) continue;
    const double* factor = field_factor_.data() + (f - 1);
    const SegmentView::Range r = clip_to(seg, t, lo, hi);
    seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
      if (kDeadBase && !base_live[d]) return;
      if (kMasked && !req.allowed[d]) return;
      ExtraAcc& e = extra_[d];
      const double c = seg.tf(p) * factor[d * kExtraFields];
      n_extra += e.stamp != open;
      e.tilde = e.stamp == open ? e.tilde + c : c;  // field order: all dir, then name, then defs lists
      e.stamp = open;
    });
  }
  const uint32_t t = ft.ids[kBody];
  if (t != kNoTerm && t < seg.n_terms) {
    const SegmentView::Range r = clip_to(seg, t, lo, hi);
    seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
      if (kDeadBase && !base_live[d]) return;
      if (kMasked && !req.allowed[d]) return;
      const uint32_t tf = seg.tf(p);
      double tilde = tf * docs_[d].body_factor;
      if (n_extra) {  // read in document order; selects, not branches (x + 0.0 == x)
        ExtraAcc& x = extra_[d];
        const bool here = x.stamp == open;
        tilde = tilde + (here ? x.tilde : 0.0);
        x.stamp = here ? open - 1 : x.stamp;
        n_extra -= here;
      }
      if (tilde > 0) add(d, scale * tilde * (k1 + 1) / (k1 + tilde), tf);
    });
  }
  if (n_extra == 0) return;  // every scratch sum met its body posting (definitions are in the body, mostly)
  for (int f = 1; f < kFields; ++f) {  // documents matched outside the body only
    const uint32_t u = ft.ids[f];
    if (u == kNoTerm || u >= seg.n_terms) continue;
    const SegmentView::Range r = clip_to(seg, u, lo, hi);
    seg.for_each_doc(r.begin, r.end, [&](int64_t, uint32_t d) {
      ExtraAcc& x = extra_[d];
      if (x.stamp != open) return;  // consumed, masked or dead
      x.stamp = open - 1;
      const double tilde = 0.0 + x.tilde;
      if (tilde > 0) add(d, scale * tilde * (k1 + 1) / (k1 + tilde), 0);
    });
  }
}

// The live, allowed base documents that hold every query token in `field`
// (defs or name): the intersection of those tokens' lists, from the smallest.
// Empty when some query token is unknown or absent from the field.
void Scorer::base_all_tokens(const LiveIndex& index, const SearchRequest& req, int field, std::vector<uint32_t>& out) {
  out.clear();
  if (n_known_query_tokens_ != req.n_query_tokens || req.n_query_tokens == 0) return;
  const SegmentView& seg = index.base().seg;
  std::vector<std::pair<DocIter, DocIter>>& lists = intersect_lists_;
  lists.clear();
  for (const PrunedTerm& t : pruned_terms_) {
    if (!t.ft.query_token) continue;
    const uint32_t id = t.ft.ids[field];
    if (id == kNoTerm || id >= seg.n_terms) return;
    const SegmentView::Range r = seg.postings(id);
    if (r.begin == r.end) return;
    lists.emplace_back(seg.docs(r.begin), seg.docs(r.end));
  }
  std::sort(lists.begin(), lists.end(),
            [](const auto& a, const auto& b) { return a.second - a.first < b.second - b.first; });
  const uint8_t* base_live = index.base_live_or_null();
  seg.for_each_doc(lists[0].first.p, lists[0].second.p, [&](int64_t, uint32_t d) {
    if ((!base_live || base_live[d]) && (!req.allowed || req.allowed[d])) out.push_back(d);
  });
  for (size_t i = 1; i < lists.size() && !out.empty(); ++i) {
    DocIter p = lists[i].first;
    const DocIter e = lists[i].second;
    size_t kept = 0;
    for (uint32_t d : out) {
      // The candidates ascend: each search starts where the last ended.
      p = seg.post_doc ? gallop(p, e, d) : seg.docs(seg.lower_bound(p.p, e.p, d));
      if (p == e) break;
      if (*p == d) out[kept++] = d;
    }
    out.resize(kept);
  }
}

uint32_t Scorer::hit_fields(const LiveIndex& index, const SearchRequest& req, uint32_t doc) const {
  uint32_t fields = 0;
  const bool in_base = index.is_base_doc(doc);
  const SegmentView& seg = index.base().seg;
  for (const PrunedTerm& t : pruned_terms_) {
    for (size_t m = 0; m <= t.n_variants; ++m) {
      const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
      for (int f = 0; f < kFields; ++f) {
        const uint32_t id = ft.ids[f];
        if (id == kNoTerm || (fields >> f & 1u)) continue;
        const bool found = in_base ? find_base_posting(seg, id, doc) >= 0 : index.find_delta(id, doc) != nullptr;
        if (found) fields |= 1u << f;
      }
    }
  }
  return fields;
}

// One term over the delta: its lists hold the documents re-put since the
// base was built, in no useful order, so the field sums go through scratch.
void Scorer::begin_term(size_t n_docs) {
  if (delta_acc_.size() < n_docs) {
    delta_acc_.resize(n_docs, DeltaAcc{0.0, 0.0, 0, 0, 0});
    delta_touched_.resize(n_docs + 1);
  }
  if (++term_epoch_ == 0) {  // wrapped: forget every stamp
    for (auto& st : delta_acc_) st.stamp = 0;
    term_epoch_ = 1;
  }
}

void Scorer::accumulate_field_term_delta(const LiveIndex& index, const SearchRequest& req, const FieldTerm& ft,
                                         double idf, size_t all) {
  const std::vector<DeltaPosting>* lists[kFields];
  bool any = false;
  for (int f = 0; f < kFields; ++f) {
    lists[f] = ft.ids[f] == kNoTerm ? nullptr : index.delta_list(ft.ids[f]);
    any |= lists[f] != nullptr;
  }
  if (!any) return;
  begin_term(index.n_slots_unlocked());
  const uint32_t* gen = index.gen_data();
  size_t n = 0;
  for (int f = 0; f < kFields; ++f) {
    if (!lists[f]) continue;
    const size_t offset = f == kBody ? 0 : static_cast<size_t>(f - 1);
    for (const DeltaPosting& dp : *lists[f]) {
      const uint32_t d = dp.doc;
      if (dp.gen != gen[d]) continue;  // superseded or removed
      if (req.allowed && !req.allowed[d]) continue;
      DeltaAcc& st = delta_acc_[d];
      if (st.stamp != term_epoch_) {
        st = DeltaAcc{0.0, 0.0, term_epoch_, 0, 0};
        delta_touched_[n++] = d;
      }
      if (f == kBody) {
        st.body = dp.tf * docs_[d].body_factor;
      } else {
        st.extra += dp.tf * field_factor_[d * kExtraFields + offset];
      }
      st.mask |= static_cast<uint8_t>(1u << f);
      if (f == kBody) st.hits += dp.tf;
    }
  }
  const double k1 = req.k1;
  const double scale = ft.weight * idf;
  for (size_t j = 0; j < n; ++j) {
    const uint32_t d = delta_touched_[j];
    const DeltaAcc& st = delta_acc_[d];
    if (ft.query_token && (st.mask & (1u << kDefs | 1u << kName))) mark(d, st.mask, all);
    const double tilde = st.body + st.extra;
    if (tilde > 0) add(d, scale * tilde * (k1 + 1) / (k1 + tilde), st.hits);
  }
}

void Scorer::prepare_field_terms(const LiveIndex& index, const SearchRequest& req) {
  const GlobalStats* g = req.global;
  const uint64_t live = g ? g->n_docs : index.n_live_unlocked();
  const double n = live > 0 ? static_cast<double>(live) : 1.0;
  line_terms_.clear();
  def_line_terms_.clear();
  pruned_terms_.clear();
  n_known_query_tokens_ = 0;
  auto df_of = [&](const FieldTerm& ft) {
    uint32_t df = 0;
    for (int f = 0; f < kFields; ++f)
      if (ft.ids[f] != kNoTerm) df = std::max(df, index.df_unlocked(ft.ids[f]));
    return df;
  };
  // The idf's df under global statistics: the largest of the term's fields' there.
  auto global_df_of = [&](size_t i) {
    uint64_t df = 0;
    for (int f = 0; f < kFields; ++f) df = std::max(df, g->df[i * kFields + f]);
    return df;
  };
  for (size_t i = 0; i < req.n_field_terms;) {
    const FieldTerm& ft = req.field_terms[i];
    size_t end = i + 1;
    while (end < req.n_field_terms && !req.field_terms[end].query_token) ++end;
    if (!ft.query_token) end = i + 1;  // a variant without its token stands alone
    // Local dfs decide what this index scores (a term without live postings
    // here adds nothing); the idf comes from the statistics scored with.
    const uint32_t own_df = df_of(ft);
    uint32_t df = own_df;
    for (size_t j = i + 1; j < end; ++j) df = std::max(df, df_of(req.field_terms[j]));
    if (df > 0) {
      double idf;
      if (g) {
        uint64_t gdf = global_df_of(i);
        for (size_t j = i + 1; j < end; ++j) gdf = std::max(gdf, global_df_of(j));
        idf = bm25_idf(n, static_cast<double>(gdf));
      } else {
        idf = bm25_idf(n, df);
      }
      if (ft.query_token && own_df > 0) {  // the best line weighs the query's own tokens, body then definitions
        if (ft.ids[kBody] != kNoTerm) line_terms_.push_back(QueryTerm{ft.ids[kBody], idf});
        if (ft.ids[kDefs] != kNoTerm) def_line_terms_.push_back(QueryTerm{ft.ids[kDefs], idf});
        ++n_known_query_tokens_;
      }
      pruned_terms_.push_back(PrunedTerm{ft, idf, i + 1, end - i - 1});
    }
    i = end;
  }
  n_body_line_terms_ = line_terms_.size();
  line_terms_.insert(line_terms_.end(), def_line_terms_.begin(), def_line_terms_.end());
}

void Scorer::accumulate_group(const LiveIndex& index, const SearchRequest& req, const PrunedTerm& t, bool base,
                              bool delta, size_t all, uint32_t lo, uint32_t hi) {
  begin_term(index.n_slots_unlocked());
  const SegmentView& seg = index.base().seg;
  const uint8_t* base_live = index.base_live_or_null();
  const uint32_t* gen = index.gen_data();
  size_t n = 0;
  // Members in order (the token, then its variants), each member's fields in
  // order: the reference's summation order.
  for (size_t m = 0; m <= t.n_variants; ++m) {
    const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
    const double weight = ft.weight;
    for (int f = 0; f < kFields; ++f) {
      const uint32_t id = ft.ids[f];
      if (id == kNoTerm) continue;
      const uint8_t own = m == 0 ? static_cast<uint8_t>(1u << f) : 0;  // the boosts count the token itself
      // One list; kBody a constant, so the loop carries no per-posting test of the field.
      auto list = [&](auto body_tag) {
        constexpr bool kBody = decltype(body_tag)::value;
        const double* factor = field_factor_.data() + (kBody ? 0 : f - 1);
        auto post = [&](uint32_t d, uint32_t tf) {
          DeltaAcc& st = delta_acc_[d];
          if (st.stamp != term_epoch_) {
            st = DeltaAcc{0.0, 0.0, term_epoch_, 0, 0};
            delta_touched_[n++] = d;
          }
          if constexpr (kBody) {
            st.body += weight * (tf * docs_[d].body_factor);
            st.hits += tf;
          } else {
            st.extra += weight * (tf * factor[d * kExtraFields]);
          }
          st.mask |= own;
        };
        if (base && id < seg.n_terms) {
          const SegmentView::Range r = clip_to(seg, id, lo, hi);
          if (!base_live && !req.allowed) {
            seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) { post(d, seg.tf(p)); });
          } else {
            seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
              if (base_live && !base_live[d]) return;
              if (req.allowed && !req.allowed[d]) return;
              post(d, seg.tf(p));
            });
          }
        }
        if (const std::vector<DeltaPosting>* dl = delta ? index.delta_list(id) : nullptr) {
          for (const DeltaPosting& dp : *dl) {
            if (dp.gen != gen[dp.doc]) continue;  // superseded or removed
            if (req.allowed && !req.allowed[dp.doc]) continue;
            post(dp.doc, dp.tf);
          }
        }
      };
      if (f == kBody)
        list(std::true_type{});
      else
        list(std::false_type{});
    }
  }
  const double k1 = req.k1;
  const double scale = t.ft.weight * t.idf;
  for (size_t j = 0; j < n; ++j) {
    const uint32_t d = delta_touched_[j];
    const DeltaAcc& st = delta_acc_[d];
    // Base documents' boosts come from the list intersections; delta ones from these counts.
    if (!index.is_base_doc(d) && t.ft.query_token && (st.mask & (1u << kDefs | 1u << kName))) mark(d, st.mask, all);
    const double tilde = st.body + st.extra;
    if (tilde > 0) add(d, scale * tilde * (k1 + 1) / (k1 + tilde), st.hits);
  }
}

void Scorer::accumulate_fields(const LiveIndex& index, const SearchRequest& req, bool base) {
  const size_t all = req.n_query_tokens;
  const bool dead = index.base_live_or_null() != nullptr;
  for (const PrunedTerm& t : pruned_terms_) {
    if (t.n_variants) {
      accumulate_group(index, req, t, base, true, all);
      continue;
    }
    if (base) {
      if (req.allowed) {
        dead ? accumulate_field_term_base<true, true>(index, req, t.ft, t.idf)
             : accumulate_field_term_base<true, false>(index, req, t.ft, t.idf);
      } else {
        dead ? accumulate_field_term_base<false, true>(index, req, t.ft, t.idf)
             : accumulate_field_term_base<false, false>(index, req, t.ft, t.idf);
      }
    }
    accumulate_field_term_delta(index, req, t.ft, t.idf, all);
  }
  if (!base) return;
  // The base documents' boosts: those holding every query token in the field.
  const FieldParams& p = req.field_params;
  const int fields[2] = {kDefs, kName};
  std::vector<uint32_t>* full[2] = {&defs_full_, &name_full_};
  for (int i = 0; i < 2; ++i) {
    if ((i == 0 ? p.def_boost : p.name_boost) == 1.0) continue;
    base_all_tokens(index, req, fields[i], base_full_);  // live and allowed
    full[i]->insert(full[i]->end(), base_full_.begin(), base_full_.end());
  }
}

void Scorer::begin_query(size_t n_docs) {
  if (docs_.size() < n_docs) {
    docs_.resize(n_docs, DocState{0.0, 0.0, 0, 0, 0.0});
    // add() stores before it knows whether the document is new: one spare
    // slot for the store that follows the last new document.
    touched_.resize(n_docs + 1);
  }
  if (++epoch_ == 0) {  // wrapped: forget every stamp
    for (auto& st : docs_) st.stamp = 0;
    for (auto& m : marks_) m.stamp = 0;
    epoch_ = 1;
  }
  n_touched_ = 0;
}

std::pair<uint32_t, uint32_t> Scorer::field_term_bounds(const LiveIndex& index, uint32_t term, int field) {
  const SegmentView& seg = index.base().seg;
  if (field_bounds_base_ != seg.term_ptr.identity() || field_bounds_generation_ != index.generation_unlocked()) {
    field_bounds_.clear();
    field_bounds_base_ = seg.term_ptr.identity();
    field_bounds_generation_ = index.generation_unlocked();
  }
  auto it = field_bounds_.find(term);
  if (it != field_bounds_.end()) return it->second;
  uint32_t max_tf = 0, min_len = UINT32_MAX;
  const uint32_t* lens = field == kBody ? index.doc_len_data() : index.field_len_data();
  const size_t stride = field == kBody ? 1 : kExtraFields;
  const size_t offset = field == kBody ? 0 : static_cast<size_t>(field - 1);
  const SegmentView::Range r = seg.postings(term);
  seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
    max_tf = std::max(max_tf, seg.tf(p));
    min_len = std::min(min_len, lens[d * stride + offset]);
  });
  // A document that later left the base only lowers the true maxima: still bounds.
  if (field_bounds_.size() > 65536) field_bounds_.clear();
  return field_bounds_[term] = {max_tf, min_len};
}

// One cursor per known query term over the base (the union of its field
// lists, its variants' included), with the bound of its contribution, in
// ascending order of bound; pruned_prefix_[j] is the sum of the j smallest
// bounds and pruned_at_term_[i] term i's place in that order.
void Scorer::open_field_cursors(const LiveIndex& index, const SearchRequest& req) {
  const SegmentView& seg = index.base().seg;
  const double k1 = req.k1;
  const FieldParams& p = req.field_params;
  std::vector<FieldCursor>& cursors = field_cursors_;
  cursors.clear();
  const size_t run_room = pruned_terms_.size() * kMaxSubs * kForBlock;
  if (!seg.post_doc && cursor_runs_.size() < run_room) cursor_runs_.resize(run_room);
  for (size_t i = 0; i < pruned_terms_.size(); ++i) {
    const PrunedTerm& t = pruned_terms_[i];
    FieldCursor c;
    c.seg = &seg;
    c.grouped = t.n_variants > 0;
    double tilde_max = 0.0;
    for (size_t m = 0; m <= t.n_variants; ++m) {
      const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
      const double weight = c.grouped ? ft.weight : 1.0;
      for (int f = 0; f < kFields; ++f) {
        const uint32_t id = ft.ids[f];
        if (id == kNoTerm || id >= seg.n_terms) continue;
        const SegmentView::Range r = seg.postings(id);
        if (r.begin == r.end) continue;
        const auto [max_tf, min_len] = field_term_bounds(index, id, f);
        tilde_max += weight * (max_tf * (p.w[f] / (1 - p.b[f] + p.b[f] * static_cast<double>(min_len) / field_avg_[f])));
        c.sub[c.n++] = FieldCursor::Sub{r.begin, r.end, 0, nullptr, 0, 0, f, weight, m == 0};
      }
    }
    c.scale = t.ft.weight * t.idf;
    c.ub = tilde_max > 0 ? c.scale * tilde_max * (k1 + 1) / (k1 + tilde_max) : 0.0;
    c.term = i;
    c.query_token = t.ft.query_token;
    if (!seg.post_doc) c.assign_runs(cursor_runs_.data() + i * kMaxSubs * kForBlock);
    for (int k = 0; k < c.n; ++k) c.load(c.sub[k]);
    c.settle();
    cursors.push_back(c);
  }
  std::sort(cursors.begin(), cursors.end(), [](const FieldCursor& a, const FieldCursor& b) { return a.ub < b.ub; });
  const size_t nc = cursors.size();
  pruned_prefix_.assign(nc + 1, 0.0);
  for (size_t j = 0; j < nc; ++j) pruned_prefix_[j + 1] = pruned_prefix_[j] + cursors[j].ub;
  pruned_at_term_.assign(pruned_terms_.size(), -1);
  for (size_t j = 0; j < nc; ++j) pruned_at_term_[cursors[j].term] = static_cast<int>(j);
}

// d's exact score with every cursor of cs at or past d (the non-essential
// ones, those before `from`, are moved there first), summed in query order
// as the term-at-a-time path sums; offered to top.
bool Scorer::score_exactly(std::vector<FieldCursor>& cs, size_t from, uint32_t d, const SearchRequest& req,
                           TopK& top) {
  const FieldParams& p = req.field_params;
  const double bf = docs_[d].body_factor;
  double score = 0.0;
  uint32_t hits = 0;
  size_t n_defs = 0, n_name = 0;
  for (size_t i = 0; i < pruned_terms_.size(); ++i) {
    const int j = pruned_at_term_[i];
    if (j < 0) continue;
    FieldCursor& c = cs[static_cast<size_t>(j)];
    if (static_cast<size_t>(j) < from) c.seek(d);
    if (c.cur != d) continue;
    if (c.at != d) c.eval(d, field_factor_.data(), bf, req.k1);
    if (c.query_token) {
      n_defs += c.mask >> kDefs & 1u;
      n_name += c.mask >> kName & 1u;
    }
    if (c.scored) {
      score = score + c.contrib;
      hits += c.hits;
    }
  }
  if (!(score > 0)) return false;
  if (p.def_boost != 1.0 && n_defs == req.n_query_tokens) score *= p.def_boost;
  if (p.name_boost != 1.0 && n_name == req.n_query_tokens) score *= p.name_boost;
  if (req.multiplier) score *= req.multiplier[d];
  return top.offer(SearchHit{d, hits, 0, score});
}

// The documents that can earn a boost above 1 hold every query token in
// their definitions (or file name), so they are in every query token's list:
// while one query token's cursor stays essential, the essential cursors reach
// them, and only their bounds need the boost.  Scored first and exactly, they
// start the k-th score high (they tend to be the best documents), and the main
// loop passes over them (scored_first_).  When they are many, only some are,
// and the others' bounds carry their boosts: true when some are left so.
bool Scorer::score_boosted_first(const LiveIndex& index, const SearchRequest& req, TopK& top) {
  const SegmentView& seg = index.base().seg;
  const FieldParams& p = req.field_params;
  boosted_defs_.clear();
  boosted_name_.clear();
  if (p.def_boost > 1.0) base_all_tokens(index, req, kDefs, boosted_defs_);
  if (p.name_boost > 1.0) base_all_tokens(index, req, kName, boosted_name_);
  scored_first_.clear();
  std::set_union(boosted_defs_.begin(), boosted_defs_.end(), boosted_name_.begin(), boosted_name_.end(),
                 std::back_inserter(scored_first_));
  const bool all_first = scored_first_.size() <= kScoredFirstAll;
  if (!all_first) scored_first_.resize(kScoredFirstSome);
  if (!scored_first_.empty()) {
    first_cursors_ = field_cursors_;
    if (!seg.post_doc) {  // the copies decode into runs of their own
      if (first_cursor_runs_.size() < cursor_runs_.size()) first_cursor_runs_.resize(cursor_runs_.size());
      for (size_t j = 0; j < first_cursors_.size(); ++j)
        first_cursors_[j].assign_runs(first_cursor_runs_.data() + j * kMaxSubs * kForBlock);
    }
    for (uint32_t d : scored_first_) score_exactly(first_cursors_, first_cursors_.size(), d, req, top);
  }
  if (all_first) {
    boosted_defs_.clear();
    boosted_name_.clear();
  }
  return !boosted_defs_.empty() || !boosted_name_.empty();
}

// MaxScore over the base for the code ranking, document at a time: each
// query term is one cursor over the union of its four field lists.  A
// document is scored exactly (terms in query order, fields in field order,
// as the term-at-a-time passes sum) only when its essential terms' exact
// contributions plus the other terms' bounds, times the largest multiplier
// and the boosts it can earn, reach the k-th score.
void Scorer::search_fields_pruned(const LiveIndex& index, const SearchRequest& req, TopK& top) {
  const uint8_t* base_live = index.base_live_or_null();
  const FieldParams& p = req.field_params;
  const double slack = (1 + 1e-9) * req.multiplier_max;
  open_field_cursors(index, req);
  std::vector<FieldCursor>& cursors = field_cursors_;
  const std::vector<double>& prefix = pruned_prefix_;
  const size_t nc = cursors.size();
  const bool any_boosted = score_boosted_first(index, req, top);
  size_t last_query_cursor = 0;  // in bound order
  for (size_t j = 0; j < nc; ++j)
    if (cursors[j].query_token) last_query_cursor = j;
  size_t first = 0;
  auto update_first = [&]() {
    const double theta = top.threshold();
    while (first < nc && prefix[first + 1] * slack < theta && (!any_boosted || first < last_query_cursor)) ++first;
  };
  update_first();
  constexpr uint32_t kEnd = UINT32_MAX;
  const uint32_t* next_defs = boosted_defs_.data();
  const uint32_t* const defs_end = next_defs + boosted_defs_.size();
  const uint32_t* next_name = boosted_name_.data();
  const uint32_t* const name_end = next_name + boosted_name_.size();
  const uint32_t* next_done = scored_first_.data();
  const uint32_t* const done_end = next_done + scored_first_.size();
  const double* ff = field_factor_.data();
  while (first < nc) {
    uint32_t d = kEnd;
    for (size_t j = first; j < nc; ++j) d = std::min(d, cursors[j].cur);
    if (d == kEnd) break;
    while (next_done < done_end && *next_done < d) ++next_done;
    const bool done = next_done < done_end && *next_done == d;
    const bool usable = !done && (!base_live || base_live[d]) && (!req.allowed || req.allowed[d]);
    if (usable) {
      // The essential terms' exact contributions plus the others' bounds.
      const double bf = docs_[d].body_factor;
      double bound = prefix[first];
      for (size_t j = first; j < nc; ++j) {
        FieldCursor& c = cursors[j];
        if (c.cur != d) continue;
        c.eval(d, ff, bf, req.k1);
        bound += c.contrib;
      }
      double boost = 1.0;
      if (any_boosted) {
        while (next_defs < defs_end && *next_defs < d) ++next_defs;
        while (next_name < name_end && *next_name < d) ++next_name;
        if (next_defs < defs_end && *next_defs == d) boost *= p.def_boost;
        if (next_name < name_end && *next_name == d) boost *= p.name_boost;
      }
      if (bound * slack * boost >= top.threshold() && score_exactly(cursors, first, d, req, top) && top.full())
        update_first();
    }
    for (size_t j = first; j < nc; ++j)
      if (cursors[j].cur == d) cursors[j].step(d);
  }
}

const std::vector<double>& Scorer::window_bounds(const LiveIndex& index, uint32_t term, int field, int shift) {
  const SegmentView& seg = index.base().seg;
  if (field_bounds_base_ != seg.term_ptr.identity() || field_bounds_generation_ != index.generation_unlocked()) {
    field_bounds_.clear();
    window_cache_.clear();
    window_starts_.clear();
    field_bounds_base_ = seg.term_ptr.identity();
    field_bounds_generation_ = index.generation_unlocked();
  }
  if (window_cache_epoch_ != field_norm_epoch_) {  // the factors changed: every bound with them
    window_cache_.clear();
    window_cache_epoch_ = field_norm_epoch_;
  }
  const SegmentView::Range r = seg.postings(term);
  window_scratch_.clear();
  if (r.begin == r.end) return window_scratch_;
  // Long lists are cached (their pass is what the windows save); short ones cost little to redo.
  const bool cache = r.end - r.begin >= 1024;
  const uint64_t key = (static_cast<uint64_t>(term) << 8) | static_cast<uint64_t>(shift);
  if (cache) {
    auto it = window_cache_.find(key);
    if (it != window_cache_.end()) return it->second;
    if (window_cache_.size() >= 4096) {
      window_cache_.clear();
      window_starts_.clear();
    }
  }
  std::vector<double>& out = cache ? window_cache_[key] : window_scratch_;
  const size_t n_win = ((index.base().n_docs - 1) >> shift) + 1;
  out.assign(n_win, 0.0);
  if (cache) {
    // Where each window's postings begin (relative to the list's), so that
    // scoring a window finds its part of the list in O(1): the norms do not
    // enter, so a cached entry outlives their changes.
    if (window_starts_.size() >= 8192) window_starts_.clear();  // (norm changes keep them: bound them apart)
    std::vector<uint32_t>& starts = window_starts_[key];
    if (starts.size() != n_win + 1) {
      starts.assign(n_win + 1, 0);
      size_t next = 0;
      seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
        for (const size_t w = d >> shift; next <= w; ++next) starts[next] = static_cast<uint32_t>(p - r.begin);
      });
      for (; next <= n_win; ++next) starts[next] = static_cast<uint32_t>(r.end - r.begin);
    }
  }
  if (field == kBody) {
    seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
      double& m = out[d >> shift];
      m = std::max(m, seg.tf(p) * docs_[d].body_factor);
    });
  } else {
    const double* factor = field_factor_.data() + (field - 1);
    seg.for_each_doc(r.begin, r.end, [&](int64_t p, uint32_t d) {
      double& m = out[d >> shift];
      m = std::max(m, seg.tf(p) * factor[d * kExtraFields]);
    });
  }
  return out;
}

void Scorer::search_fields_windows(const LiveIndex& index, const SearchRequest& req, TopK& top) {
  const SegmentView& seg = index.base().seg;
  const size_t n_base = index.base().n_docs;
  if (n_base == 0) return;
  // 64 documents per window (measured best on the Linux tree among 16..256),
  // or more so that there are at most 4,096 windows to sort.
  int shift = 6;
  while ((n_base >> shift) > 4096) ++shift;
  window_shift_ = shift;
  const size_t n_win = ((n_base - 1) >> shift) + 1;
  const FieldParams& p = req.field_params;
  const double k1 = req.k1;
  const size_t all = req.n_query_tokens;
  // Each window's bound: per term, the sum over its lists of their largest
  // contribution there (>= any document's tf~), saturated, summed.
  window_total_.assign(n_win, 0.0);
  for (const PrunedTerm& t : pruned_terms_) {
    window_tilde_.assign(n_win, 0.0);
    bool any = false;
    for (size_t m = 0; m <= t.n_variants; ++m) {
      const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
      const double weight = t.n_variants ? ft.weight : 1.0;
      for (int f = 0; f < kFields; ++f) {
        const uint32_t id = ft.ids[f];
        if (id == kNoTerm || id >= seg.n_terms) continue;
        const std::vector<double>& wb = window_bounds(index, id, f, shift);
        if (wb.empty()) continue;
        any = true;
        for (size_t w = 0; w < n_win; ++w) window_tilde_[w] += weight * wb[w];
      }
    }
    if (!any) continue;
    const double scale = t.ft.weight * t.idf;
    for (size_t w = 0; w < n_win; ++w) {
      const double tm = window_tilde_[w];
      if (tm > 0) window_total_[w] += scale * tm * (k1 + 1) / (k1 + tm);
    }
  }
  prepare_clip_lists(index, req);
  // A filter's windows without an allowed document can hold no hit: bound them away (a selective
  // filter, lang: or file:, would otherwise have most windows scored for nothing).
  if (req.allowed) {
    const size_t win = size_t{1} << shift;
    for (size_t w = 0; w < n_win; ++w) {
      if (window_total_[w] <= 0) continue;
      const uint8_t* a = req.allowed + w * win;
      const size_t len = std::min(win, n_base - w * win);
      if (std::find_if(a, a + len, [](uint8_t x) { return x != 0; }) == a + len) window_total_[w] = 0;
    }
  }
  // The base documents that earn a boost (every query token in defs / name),
  // ascending: a window holding none of them needs no boost in its bound.
  boosted_defs_.clear();
  boosted_name_.clear();
  if (p.def_boost != 1.0) base_all_tokens(index, req, kDefs, boosted_defs_);
  if (p.name_boost != 1.0) base_all_tokens(index, req, kName, boosted_name_);
  const double slack = (1 + 1e-9) * req.multiplier_max;
  auto boost_windows = [&](const std::vector<uint32_t>& docs, double boost) {
    if (!(boost > 1.0)) return;
    uint32_t last = UINT32_MAX;
    for (uint32_t d : docs) {
      const uint32_t w = d >> shift;
      if (w != last) window_total_[w] *= boost;
      last = w;
    }
  };
  boost_windows(boosted_defs_, p.def_boost);
  boost_windows(boosted_name_, p.name_boost);
  window_order_.clear();
  for (size_t w = 0; w < n_win; ++w)
    if (window_total_[w] > 0) window_order_.push_back(static_cast<uint32_t>(w));
  // Best bound first, taken from a heap: most queries stop after a few of
  // the ~1,000 windows, so a full sort would be most of their cost.
  const auto later = [this](uint32_t a, uint32_t b) {
    return window_total_[a] != window_total_[b] ? window_total_[a] < window_total_[b] : a > b;
  };
  std::make_heap(window_order_.begin(), window_order_.end(), later);
  const bool dead = index.base_live_or_null() != nullptr;
  while (!window_order_.empty()) {
    std::pop_heap(window_order_.begin(), window_order_.end(), later);
    const uint32_t w = window_order_.back();
    window_order_.pop_back();
    if (top.full() && window_total_[w] * slack < top.threshold()) break;  // no later window can reach it
    const uint32_t lo = w << shift;
    const uint32_t hi = static_cast<uint32_t>(std::min<uint64_t>(static_cast<uint64_t>(w + 1) << shift, UINT32_MAX));
    const size_t start = n_touched_;
    for (const PrunedTerm& t : pruned_terms_) {
      if (t.n_variants) {
        accumulate_group(index, req, t, true, false, all, lo, hi);
      } else if (req.allowed) {
        dead ? accumulate_field_term_base<true, true>(index, req, t.ft, t.idf, lo, hi)
             : accumulate_field_term_base<true, false>(index, req, t.ft, t.idf, lo, hi);
      } else {
        dead ? accumulate_field_term_base<false, true>(index, req, t.ft, t.idf, lo, hi)
             : accumulate_field_term_base<false, false>(index, req, t.ft, t.idf, lo, hi);
      }
    }
    for (size_t i = start; i < n_touched_; ++i) {  // the reference's order: x def_boost, x name_boost, x multiplier
      const uint32_t d = touched_[i];
      double score = docs_[d].acc;
      if (p.def_boost != 1.0 && std::binary_search(boosted_defs_.begin(), boosted_defs_.end(), d)) score *= p.def_boost;
      if (p.name_boost != 1.0 && std::binary_search(boosted_name_.begin(), boosted_name_.end(), d))
        score *= p.name_boost;
      if (req.multiplier) score *= req.multiplier[d];
      top.offer(SearchHit{d, docs_[d].hits, 0, score});
    }
  }
}

SearchStatus Scorer::search_fields(const LiveIndex& index, const SearchRequest& req, std::vector<SearchHit>& out) {
  const size_t n_docs = index.n_slots_unlocked();
  begin_query(n_docs);
  if (marks_.size() < n_docs) marks_.resize(n_docs, FieldMarks{0, 0, 0});
  if (extra_.size() < n_docs) extra_.resize(n_docs, ExtraAcc{0.0, 0});
  defs_full_.clear();
  name_full_.clear();
  refresh_field_norms(index, req);
  prepare_field_terms(index, req);
  // Pruning as in the classic ranking: several terms, a bounded multiplier,
  // no mask, long enough lists; and no term rarer than the k wanted (the
  // k-th score then comes from documents without it, which the other terms'
  // bounds reach: nothing would be pruned, and document at a time costs
  // more here than term at a time).
  const bool bounded = !req.exhaustive && std::isfinite(req.multiplier_max);
  bool prune = bounded && pruned_terms_.size() >= 2 && !req.allowed;
  // A cursor holds at most kMaxSubs lists: a larger stem group goes term at a time.
  for (const PrunedTerm& t : pruned_terms_)
    prune = prune && (t.n_variants + 1) * kFields <= static_cast<size_t>(kMaxSubs);
  bool windows = false;
  if (bounded) {
    const SegmentView& seg = index.base().seg;
    int64_t postings = 0, min_postings = INT64_MAX;
    for (const PrunedTerm& t : pruned_terms_) {
      int64_t term_postings = 0;
      for (size_t m = 0; m <= t.n_variants; ++m) {
        const FieldTerm& ft = m == 0 ? t.ft : req.field_terms[t.first_variant + m - 1];
        for (int f = 0; f < kFields; ++f)
          if (ft.ids[f] != kNoTerm && ft.ids[f] < seg.n_terms) {
            const SegmentView::Range r = seg.postings(ft.ids[f]);
            term_postings = std::max(term_postings, r.end - r.begin);
          }
      }
      if (term_postings < static_cast<int64_t>(req.limit)) prune = false;
      postings += term_postings;
      min_postings = std::min(min_postings, term_postings);
    }
    const bool long_lists = postings >= req.prune_min_postings;
    prune = prune && long_lists;
    // Document at a time gains where the threshold soon passes the common
    // terms' bounds: terms of middling frequency.  With a very rare term
    // (its few documents are scored in their windows, the rest of the
    // windows are bounded away) or only very common ones (no term's bound
    // falls below the threshold, so every document is visited), the windows
    // are the cheaper walk: up to 10x on the Linux tree's slowest queries.
    const double rarest = static_cast<double>(min_postings) / static_cast<double>(std::max<size_t>(1, n_docs));
    if (rarest < kWindowsRareShare || rarest > kWindowsCommonShare) prune = false;
    // Otherwise (one term, a term rarer than k, a mask, a large stem group):
    // block-max over document windows, when the lists are long.
    windows = !prune && long_lists;
  }
  accumulate_fields(index, req, !(prune || windows));  // when pruning, the delta only (term at a time)
  // The boosts, in the reference's order: x def_boost, then x name_boost, then the multiplier.
  const FieldParams& p = req.field_params;
  if (p.def_boost != 1.0)
    for (uint32_t d : defs_full_)
      if (docs_[d].stamp == epoch_) docs_[d].acc *= p.def_boost;
  if (p.name_boost != 1.0)
    for (uint32_t d : name_full_)
      if (docs_[d].stamp == epoch_) docs_[d].acc *= p.name_boost;
  TopK top(index, req.limit, out);
  if (req.multiplier) {
    for (size_t i = 0; i < n_touched_; ++i) {
      const uint32_t d = touched_[i];
      top.offer(SearchHit{d, docs_[d].hits, 0, docs_[d].acc * req.multiplier[d]});
    }
  } else {
    for (size_t i = 0; i < n_touched_; ++i) {
      const uint32_t d = touched_[i];
      top.offer(SearchHit{d, docs_[d].hits, 0, docs_[d].acc});
    }
  }
  if (prune) search_fields_pruned(index, req, top);
  if (windows) search_fields_windows(index, req, top);
  top.finish();
  for (auto& h : out) {
    h.fields = hit_fields(index, req, h.doc);
    // A document whose definitions the query missed has no definition line to weigh.
    const size_t n_terms = (h.fields >> kDefs) & 1u ? line_terms_.size() : n_body_line_terms_;
    h.line = best_line(index, h.doc, line_terms_.data(), n_terms);
  }
  return SearchStatus::kOk;
}

void local_stats(const LiveIndex& index, const uint32_t* terms, size_t n, GlobalStats& out, uint64_t* dfs) {
  auto lock = index.read_lock();
  out.n_docs = index.n_live_unlocked();
  out.total_tokens = index.total_tokens_unlocked();
  for (int f = 0; f < kExtraFields; ++f) out.field_totals[f] = index.field_total_unlocked(f);
  for (size_t i = 0; i < n; ++i) dfs[i] = terms[i] == kNoTerm ? 0 : index.df_unlocked(terms[i]);
}

}  // namespace codelex
