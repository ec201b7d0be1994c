// Bounded top-k selection of search hits, shared by every scoring path.
//
// A heap whose front is the worst kept hit: most candidates lose to it on
// the score alone.  Ties go to the smaller path (code-point order = UTF-8
// byte order), so results never depend on the order documents were seen.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "lexical/live_index.hpp"

namespace codelex {

struct SearchHit {
  uint32_t doc;   // slot
  uint32_t hits;  // sum of tf over the matched query terms
  uint32_t line;  // best line: largest total idf of distinct query terms, earliest on ties
  double score;
  uint32_t fields = 1;  // bit f: field f matched (always the body in the classic ranking)
};

class TopK {
 public:
  // Selects into out (cleared), at most k hits; paths come from index.
  TopK(const LiveIndex& index, size_t k, std::vector<SearchHit>& out) : index_(index), k_(k), out_(out) {
    out_.clear();
    out_.reserve(std::min<size_t>(k, 1024));
  }

  bool full() const noexcept { return out_.size() >= k_; }
  // The score a hit must reach to be kept (-1 until k hits are held).
  double threshold() const noexcept { return full() ? out_.front().score : -1.0; }

  // Keeps hit if it is among the best k so far; true when kept.
  bool offer(const SearchHit& hit) {
    if (out_.size() < k_) {
      out_.push_back(hit);
      std::push_heap(out_.begin(), out_.end(), Better{index_});
      return true;
    }
    if (hit.score < out_.front().score || !Better{index_}(hit, out_.front())) return false;
    std::pop_heap(out_.begin(), out_.end(), Better{index_});
    out_.back() = hit;
    std::push_heap(out_.begin(), out_.end(), Better{index_});
    return true;
  }

  // Sorts the kept hits best first.
  void finish() { std::sort(out_.begin(), out_.end(), Better{index_}); }

 private:
  struct Better {
    const LiveIndex& index;
    bool operator()(const SearchHit& a, const SearchHit& c) const {
      if (a.score != c.score) return a.score > c.score;
      return index.path(a.doc) < index.path(c.doc);
    }
  };
  const LiveIndex& index_;
  size_t k_;
  std::vector<SearchHit>& out_;
};

}  // namespace codelex
