#include "bm25.hpp"

#include <algorithm>

namespace codelex {

int64_t find_posting(const SegmentView& seg, uint32_t term, uint32_t doc) noexcept {
  if (term >= seg.n_terms) return -1;
  const uint32_t* first = seg.post_doc + seg.term_ptr[term];
  const uint32_t* last = seg.post_doc + seg.term_ptr[term + 1];
  const uint32_t* it = std::lower_bound(first, last, doc);
  if (it == last || *it != doc) return -1;
  return it - seg.post_doc;
}

template <bool kMasked>
void Scorer::accumulate(const SegmentView& seg, const SearchRequest& req) {
  const double k1 = req.k1;
  const double b = req.b;
  const double avgdl = req.avgdl;
  for (size_t i = 0; i < req.n_terms; ++i) {
    const uint32_t t = req.terms[i].term;
    if (t >= seg.n_terms) continue;
    const double idf = req.terms[i].idf;
    const int64_t e = seg.term_ptr[t + 1];
    for (int64_t p = seg.term_ptr[t]; p < e; ++p) {
      const uint32_t d = seg.post_doc[p];
      if (kMasked && !req.allowed[d]) continue;
      const double tf = seg.post_tf[p];
      const double dl = req.doc_len[d];
      // Same expression, same evaluation order as the reference (and the
      // original), so scores agree to the last bit without FMA contraction.
      const double s = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl));
      if (hits_[d] == 0) touched_.push_back(d);
      acc_[d] += s;
      hits_[d] += seg.post_tf[p];
    }
  }
}

// Streams the matched terms' line lists in ascending line order (a k-way
// merge of varint cursors): the first line carrying every matched term has
// the maximal weight, so the scan usually stops early.
uint32_t Scorer::best_line(const SegmentView& seg, const SearchRequest& req, uint32_t doc) {
  cursors_.clear();
  double total = 0.0;
  for (size_t i = 0; i < req.n_terms; ++i) {
    const uint32_t t = req.terms[i].term;
    const int64_t p = find_posting(seg, t, doc);
    if (p < 0) continue;
    LineCursor c;
    c.pos = seg.line_data + seg.term_line_ptr[t] + seg.post_line_off[p];
    c.end = seg.line_data + seg.line_bytes;
    c.left = seg.post_tf[p];
    c.line = 0;
    c.idf = req.terms[i].idf;
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

void Scorer::search(const SegmentView& seg, const SearchRequest& req, std::vector<SearchHit>& out) {
  out.clear();
  if (req.limit == 0 || req.n_terms == 0 || req.n_docs == 0) return;
  if (acc_.size() < req.n_docs) {
    acc_.assign(req.n_docs, 0.0);
    hits_.assign(req.n_docs, 0);
  }
  touched_.clear();
  if (req.allowed) {
    accumulate<true>(seg, req);
  } else {
    accumulate<false>(seg, req);
  }
  out.reserve(touched_.size());
  for (uint32_t d : touched_) {
    double s = acc_[d];
    if (req.multiplier) s *= req.multiplier[d];
    out.push_back(SearchHit{d, hits_[d], 0, s});
    acc_[d] = 0.0;  // reset only what was touched
    hits_[d] = 0;
  }
  const uint32_t* rank = req.path_rank;
  auto better = [rank](const SearchHit& a, const SearchHit& c) {
    if (a.score != c.score) return a.score > c.score;
    return rank[a.doc] < rank[c.doc];
  };
  if (out.size() > req.limit) {
    std::nth_element(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(req.limit), out.end(), better);
    out.resize(req.limit);
  }
  std::sort(out.begin(), out.end(), better);
  for (auto& h : out) h.line = best_line(seg, req, h.doc);
}

}  // namespace codelex

namespace codelex {
const char* validate_segment(const SegmentView& seg, size_t n_docs) noexcept {
  if (!seg.term_ptr || !seg.term_line_ptr) return "missing term offsets";
  if (seg.term_ptr[0] != 0 || seg.term_line_ptr[0] != 0) return "term offsets do not start at 0";
  const int64_t n_post = seg.term_ptr[seg.n_terms];
  if (seg.term_line_ptr[seg.n_terms] != static_cast<int64_t>(seg.line_bytes)) return "line offsets do not end at the line data size";
  for (size_t t = 0; t < seg.n_terms; ++t) {
    const int64_t s = seg.term_ptr[t], e = seg.term_ptr[t + 1];
    if (e < s || e > n_post) return "posting offsets are not monotonic";
    const int64_t ls = seg.term_line_ptr[t], le = seg.term_line_ptr[t + 1];
    if (le < ls) return "line offsets are not monotonic";
    for (int64_t p = s; p < e; ++p) {
      if (seg.post_doc[p] >= n_docs) return "posting document id out of range";
      if (p > s && seg.post_doc[p] <= seg.post_doc[p - 1]) return "posting document ids not ascending";
      if (seg.post_tf[p] == 0) return "posting with zero tf";
      if (ls + static_cast<int64_t>(seg.post_line_off[p]) + static_cast<int64_t>(seg.post_tf[p]) > le)
        return "posting line offset outside its term's line data";
    }
  }
  return nullptr;
}
}  // namespace codelex
