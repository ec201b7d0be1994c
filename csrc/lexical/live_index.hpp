// The live index: an immutable base segment, a small mutable delta segment
// and a per-slot document table, so that one edit costs O(that document's
// postings) and never rewrites unrelated ones (the Lucene/tantivy design:
// immutable segments, deletes as a mask, merges that fold everything into a
// new segment).
//
// Documents live in slots.  A path keeps its slot across updates; removing it
// leaves a hole until the next merge, which compacts the slots in order.
//   - A base slot's postings are current while base_live[slot] is set.
//   - Updating a slot clears that bit, bumps the slot's generation and appends
//     the new postings to the delta, stamped with the generation: a delta
//     posting is current iff its stamp equals the slot's generation.  Older
//     postings stay in place, dead, until the merge.
//   - The live document count and the total token count are running
//     counters; a term's df is its base postings, less those of removed base
//     documents (counted when df is read: the sorted list of removed base
//     documents intersected with the term's postings, cached per term and
//     brought up to date with the documents removed since), plus its current
//     delta postings (a running count).  Every statistic is exact at every
//     step, so scores equal those of a fresh build, and no edit needs a
//     removed document's old terms: no forward index, nothing derived over
//     the whole base, so the first edit after a build, a load or a merge
//     costs what later ones cost.
//
// Concurrency: one writer, many readers.  Writers (add_slot, put, remove,
// merge, install) must be serialized by the caller.  Readers (search and the
// accessors that take the read lock) may run on any thread at any time: every
// mutation of shared state happens under the exclusive lock, and the long
// part of a merge (building the new segment) runs without it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "lexical/index_build.hpp"
#include "text/vocabulary.hpp"

namespace codelex {

// Borrowed arrays of a base segment: either owned by the LiveIndex (built or
// merged here) or by the caller (for example a memory-mapped file), who then
// keeps them alive until the next install or merge returns.
struct BaseArrays {
  SegmentView seg;
  const uint32_t* doc_len = nullptr;  // n_docs
  const uint32_t* field_len = nullptr;  // n_docs * kExtraFields (dir, name, defs token counts)
  size_t n_docs = 0;
};

// The arrays of a built segment, borrowed.
BaseArrays base_arrays_of(const BuiltSegment& seg);

// Per-slot attributes supplied with a base (all n_docs long).
struct SlotArrays {
  const char* path_blob = nullptr;     // UTF-8 paths, concatenated
  size_t path_bytes = 0;
  const uint64_t* path_off = nullptr;  // n_docs + 1
  const int64_t* mtime_ns = nullptr;
  const uint64_t* size = nullptr;
};

struct DeltaPosting {
  uint32_t doc;       // slot
  uint32_t gen;       // the slot's generation when added
  uint32_t tf;
  uint32_t line_off;  // nibble position in the delta's line data
};

// A compacted index produced by LiveIndex::build_merged.
struct MergedIndex {
  BuiltSegment seg;
  std::vector<uint32_t> old_slot;  // new document id -> slot it came from
  std::vector<char> path_blob;
  std::vector<uint64_t> path_off;
  std::vector<int64_t> mtime_ns;
  std::vector<uint64_t> size;
};

// term -> uint32 (0 = none) in pages of 256 allocated as terms are first
// set: a table over a vocabulary of millions costs nothing until the delta
// holds some of its terms, and growing the vocabulary never copies it.
class TermTable {
 public:
  uint32_t get(uint32_t t) const noexcept {
    const size_t p = t >> kPageBits;
    return p < pages_.size() && pages_[p] ? pages_[p][t & kPageMask] : 0;
  }
  // Makes set(t, v) allocation-free (may throw; nothing is set).
  void reserve(uint32_t t);
  void set(uint32_t t, uint32_t v) noexcept { pages_[t >> kPageBits][t & kPageMask] = v; }
  void clear() noexcept { pages_.clear(); }
  void swap(TermTable& o) noexcept { pages_.swap(o.pages_); }
  size_t bytes() const noexcept;

 private:
  static constexpr unsigned kPageBits = 8;
  static constexpr uint32_t kPageMask = (1u << kPageBits) - 1;
  std::vector<std::unique_ptr<uint32_t[]>> pages_;
};

struct IndexCounts {
  uint64_t live_docs = 0;
  uint64_t total_tokens = 0;
  uint64_t terms = 0;          // body terms with df > 0
  uint64_t pairs = 0;          // current (body term, document) postings
  uint64_t line_postings = 0;  // current (body term, document, line) postings
  uint64_t field_terms = 0;    // field terms (dir, name, defs) with df > 0
  uint64_t base_bytes = 0;     // base arrays
  uint64_t delta_bytes = 0;    // delta postings, lines, per-term and per-document lists (capacity)
  uint64_t table_bytes = 0;    // slot table, removed base documents
};

class LiveIndex {
 public:
  LiveIndex();
  // Stops and joins the warm-up thread, if any.
  ~LiveIndex();
  LiveIndex(const LiveIndex&) = delete;
  LiveIndex& operator=(const LiveIndex&) = delete;

  // Replaces everything with a base segment.  owned (may be null) is taken
  // over and must be the storage behind base.  n_terms is the vocabulary size
  // (at least the segment's).  Returns null on success, else a static reason
  // (the index is then unchanged).  Unless trusted (built here), validates
  // every invariant that reading relies on.
  // checks (may be null) are the lazily verified regions of base.seg, taken
  // over: such a segment is verified chunk by chunk as readers touch it
  // (for a file this user wrote only: any other comes without checks, and is
  // validated in full).
  const char* install(const BaseArrays& base, std::unique_ptr<BuiltSegment> owned, const SlotArrays& slots,
                      size_t n_terms, bool trusted, std::unique_ptr<SegmentChecks> checks = nullptr);

  // Appends an empty slot for a new path; returns its id.
  uint32_t add_slot(const char* path, size_t n, int64_t mtime_ns, uint64_t size);
  // Makes doc the current content of slot (which must exist).
  void put(uint32_t slot, const EncodedDocument& doc, int64_t mtime_ns, uint64_t size);
  // Removes the slot's document; false when it was not live.
  bool remove(uint32_t slot);

  // Builds the compacted equivalent of the current documents (no lock held:
  // readers go on meanwhile; the caller must not write concurrently).
  std::unique_ptr<MergedIndex> build_merged(size_t n_terms) const;
  // Swaps a built merge in (short exclusive section).  Keeps m's path and
  // table storage; m is left empty.
  void install_merged(MergedIndex& m);

  // Postings that a merge would drop or rewrite: delta postings (dead ones
  // included) plus the dead base postings.  Writer only: may count every
  // base document's postings once (one pass over the base's documents).
  uint64_t pending_postings();
  uint64_t base_postings() const noexcept { return base_postings_; }
  // Whether pending_postings() > max(min_postings, ratio * live postings); a
  // negative ratio: hard limits only.  Writer only: decided from bounds on
  // the removed base documents' postings (their token counts) when they
  // suffice, which they do until the pending postings near the threshold.
  bool needs_merge(double ratio, uint64_t min_postings);
  // True when the base alone holds every document (nothing for a merge to do).
  bool is_compact() const noexcept;

  // --- reads (take the read lock) ---
  uint64_t generation() const;
  size_t n_slots() const;
  uint64_t n_live() const;
  bool alive(uint32_t slot) const;
  uint32_t doc_len(uint32_t slot) const;
  int64_t mtime_ns(uint32_t slot) const;
  uint64_t size(uint32_t slot) const;
  // is_field_term(t) tells the extra fields' terms from the body's.
  IndexCounts counts(const std::vector<uint8_t>& is_field_term) const;
  void live_slots(std::vector<uint32_t>& out) const;
  // Every slot's recorded mtime_ns, size and liveness, in slot order.
  void file_table(std::vector<int64_t>& mtime, std::vector<uint64_t>& size, std::vector<uint8_t>& alive) const;
  // The lazily verified regions of the base (null when it is trusted).
  const SegmentChecks* checks() const noexcept { return checks_.get(); }
  // The current base (valid until the next install or merge).
  const BaseArrays& base() const noexcept { return base_; }
  std::string_view path(uint32_t slot) const noexcept {
    return {path_arena_.data() + path_off_[slot], static_cast<size_t>(path_off_[slot + 1] - path_off_[slot])};
  }

  // Search support (see bm25.hpp): readers hold read_lock() while scoring.
  std::shared_lock<std::shared_mutex> read_lock() const { return std::shared_lock<std::shared_mutex>(rw_); }
  // Unlocked accessors, for callers that hold read_lock().
  uint64_t generation_unlocked() const noexcept { return generation_; }
  // Changes whenever a document length or the average length may have changed.
  uint64_t stats_version_unlocked() const noexcept { return stats_version_; }
  size_t n_slots_unlocked() const noexcept { return doc_len_.size(); }
  uint64_t n_live_unlocked() const noexcept { return n_live_; }
  uint64_t total_tokens_unlocked() const noexcept { return total_tokens_; }
  // Token occurrences of an extra field over the live documents (f: 0 dir, 1 name, 2 defs).
  uint64_t field_total_unlocked(int f) const noexcept { return field_total_[f]; }
  const uint32_t* field_len_data() const noexcept { return field_len_.data(); }
  // The term's live documents: its base postings less those of removed base
  // documents, plus its current delta postings.  O(1) while no base document
  // is removed; else an intersection of the term's postings with the removed
  // ones.  (May throw CorruptIndex: the postings are read from the base.)
  uint32_t df_unlocked(uint32_t term) const;
  // The slot of a path (a removed document's slot still names its path), or
  // -1.  The first call after an install or a merge hashes every path.
  int64_t find_slot(std::string_view path) const;
  // Appends the paths of slots[0..n) to blob, each one's end offset to ends,
  // while the slot layout is still `generation` (false, nothing appended,
  // once it is not): a search's hits named without a table of every path.
  bool copy_paths(uint64_t generation, const uint32_t* slots, size_t n, std::string& blob,
                  std::vector<uint32_t>& ends) const;
  // Base documents removed since the base was installed (tests).
  uint64_t dead_base_docs() const;

  // Readies the index for edits off the caller's thread: one thread builds
  // the path table find_slot() uses and verifies every chunk of vocab's
  // sorted base (the dictionary an edit's tokens are looked up in; a first
  // edit would otherwise verify, and fault in, the chunks its lookups touch),
  // checking between chunks whether to stop.  Nothing on the edit path waits
  // for it: readers and writers verify what they touch themselves (a chunk
  // verified twice at once gets the same answer), and the path table is
  // built by whichever needs it first (a few ms for 100,000 paths).  vocab must outlive the thread (the destructor
  // joins it).  A no-op while one runs; returns false then.
  bool start_warmup(const Vocabulary* vocab);
  // 0: never started, 1: running, 2: done (3: stopped early, or a chunk did not match).
  int warmup_state() const noexcept { return warmup_state_.load(std::memory_order_acquire); }
  const uint32_t* doc_len_data() const noexcept { return doc_len_.data(); }
  const uint32_t* gen_data() const noexcept { return gen_.data(); }
  // null when every base document is live (the common, merged state)
  const uint8_t* base_live_or_null() const noexcept { return dead_base_docs_ ? base_live_.data() : nullptr; }
  const std::vector<DeltaPosting>* delta_list(uint32_t term) const noexcept {
    const uint32_t h = delta_head_.get(term);
    return h ? &delta_lists_[h - 1] : nullptr;
  }
  const uint8_t* delta_lines() const noexcept { return delta_lines_.data(); }
  size_t delta_line_bytes() const noexcept { return delta_lines_.size(); }
  // The current delta posting of (term, slot), or null.
  const DeltaPosting* find_delta(uint32_t term, uint32_t slot) const noexcept;
  bool is_base_doc(uint32_t slot) const noexcept { return slot < base_.n_docs && base_live_[slot]; }
  // The byte offset in the base's line data of every base posting's lines,
  // derived on first use for a base of at most kLineStartsMax postings (a
  // small index then finds a posting's lines in one load instead of a walk
  // from its checkpoint); null for larger bases, whose memory stays
  // proportional to what queries touch.  May throw CorruptIndex.
  const uint32_t* base_line_starts() const;
  // The largest base that gets line starts (kLineStartsMax; tests lower it).
  void set_line_starts_max(int64_t n);

 private:
  struct DeltaDoc {
    std::vector<uint32_t> terms;  // ascending
    std::vector<uint32_t> pos;    // index of the posting in its term's delta list
  };

  void clear_locked();
  // Makes retire_locked(slot) allocation-free (may throw; nothing changes).
  void reserve_retire(uint32_t slot);
  void retire_locked(uint32_t slot);
  void reset_line_starts_locked();
  // Counts every base document's postings (writer only), making the removed
  // ones' count exact.
  void count_doc_terms();
  // needs_merge's test for a given count of removed base postings.
  bool over_threshold(double ratio, uint64_t min_postings, uint64_t dead_pairs) const noexcept;
  void insert_slot_map(uint32_t slot) const;

  mutable std::shared_mutex rw_;

  BaseArrays base_;
  std::unique_ptr<BuiltSegment> owned_;
  std::unique_ptr<SegmentChecks> checks_;
  uint64_t base_postings_ = 0;
  std::vector<uint8_t> base_live_;  // n_base
  uint64_t dead_base_docs_ = 0;
  mutable std::mutex line_starts_mu_;  // serializes the derivation of line_starts_
  mutable std::vector<uint32_t> line_starts_;
  mutable std::atomic<const uint32_t*> line_starts_ptr_{nullptr};
  mutable std::atomic<bool> line_starts_done_{false};  // derived, or not to be (a large base)
  int64_t line_starts_max_ = kLineStartsMax;
  std::vector<uint32_t> dead_base_;  // removed base documents, ascending (dead_base_docs_ of them)
  std::vector<uint32_t> dead_order_;  // the same, in the order they were removed
  // term -> its postings among dead_order_'s first `seen` documents (readers
  // fill it under df_cache_mu_; emptied whenever the base changes).
  struct DeadCount {
    uint32_t seen, dead;
  };
  mutable std::mutex df_cache_mu_;
  mutable std::unordered_map<uint32_t, DeadCount> df_cache_;
  uint32_t dead_postings(uint32_t term, int64_t begin, int64_t end) const;
  // Postings of the removed base documents: exact once doc_terms_ is counted;
  // before, between 0 and the sum of their token counts (an upper bound: every
  // posting comes from a token).
  uint64_t dead_pairs_lo_ = 0, dead_pairs_hi_ = 0;
  std::vector<uint32_t> doc_terms_;  // per base document, its postings (writer only; empty until counted)

  // slot table
  std::vector<uint32_t> doc_len_;
  std::vector<uint32_t> field_len_;  // n_slots * kExtraFields
  std::vector<uint8_t> alive_;
  std::vector<uint32_t> gen_;
  std::vector<int64_t> mtime_;
  std::vector<uint64_t> size_;
  std::vector<char> path_arena_;
  std::vector<uint64_t> path_off_{0};
  std::vector<uint32_t> delta_doc_of_;  // slot -> 1 + index into delta_docs_, 0 = none
  // path -> slot: open addressing over (hash32 << 32) | (1 + slot) (0 =
  // empty), a power of two long; empty until find_slot() first needs it
  // (then built under slot_map_mu_).
  mutable std::mutex slot_map_mu_;
  mutable std::vector<uint64_t> slot_map_;

  // delta segment
  TermTable delta_head_;  // term -> 1 + index into delta_lists_, 0 = none
  std::vector<std::vector<DeltaPosting>> delta_lists_;
  std::vector<uint32_t> delta_term_;  // per delta list: its term
  std::vector<uint32_t> delta_df_;    // per delta list: its current postings
  std::vector<uint8_t> delta_lines_;
  std::vector<DeltaDoc> delta_docs_;
  uint64_t delta_postings_ = 0;
  uint32_t max_gen_ = 0;

  // running statistics
  uint64_t n_live_ = 0;
  uint64_t total_tokens_ = 0;
  uint64_t field_total_[kExtraFields] = {0, 0, 0};
  uint64_t generation_ = 0;
  uint64_t stats_version_ = 0;

  std::thread warmup_;
  std::atomic<bool> stop_warmup_{false};
  std::atomic<int> warmup_state_{0};
};

}  // namespace codelex
