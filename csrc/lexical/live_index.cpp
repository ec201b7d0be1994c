#include "lexical/live_index.hpp"

#include "text/vocabulary.hpp"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace codelex {

BaseArrays base_arrays_of(const BuiltSegment& s) {
  BaseArrays b;
  b.seg = view_of(s);
  b.doc_len = s.doc_len.data();
  b.field_len = s.field_len.data();
  b.n_docs = s.doc_len.size();
  return b;
}

void TermTable::reserve(uint32_t t) {
  const size_t p = t >> kPageBits;
  if (p >= pages_.size()) pages_.resize(std::max(p + 1, pages_.size() + pages_.size() / 2));
  if (!pages_[p]) pages_[p].reset(new uint32_t[size_t{1} << kPageBits]());
}

size_t TermTable::bytes() const noexcept {
  size_t n = pages_.capacity() * sizeof(pages_[0]);
  for (const auto& page : pages_)
    if (page) n += sizeof(uint32_t) << kPageBits;
  return n;
}

namespace {

std::unique_ptr<BuiltSegment> empty_segment() {
  auto s = std::make_unique<BuiltSegment>();
  s->term_ptr.assign(1, 0);
  s->line_ckpt.assign(1, 0);
  return s;
}

// Grows v's capacity geometrically so that one more element fits without a
// reallocation (reserve(size + 1) alone would make appends quadratic).
template <class T>
void reserve_one_more(std::vector<T>& v) {
  if (v.size() == v.capacity()) v.reserve(std::max<size_t>(8, v.capacity() * 2));
}

// The first element of the ascending [first, last) not less than x: a
// galloping search from first (cheap when it is near, as it is when a sorted
// list is searched for the ascending members of a much shorter one).
const uint32_t* gallop(const uint32_t* first, const uint32_t* last, uint32_t x) {
  size_t step = 1;
  const uint32_t* lo = first;
  while (lo < last && *lo < x) {
    first = lo + 1;
    lo = static_cast<size_t>(last - lo) > step ? lo + step : last;
    step *= 2;
  }
  return std::lower_bound(first, lo, x);
}

// How many of the ascending a[0, n) are also in the ascending b[0, m): the
// smaller side galloped through the larger when it is much smaller, else one
// merge of the two.
uint64_t count_common(const uint32_t* a, size_t n, const uint32_t* b, size_t m) {
  if (n == 0 || m == 0) return 0;
  const uint32_t* b_first = std::lower_bound(b, b + m, a[0]);
  const uint32_t* b_last = std::upper_bound(b_first, b + m, a[n - 1]);
  b = b_first;
  m = static_cast<size_t>(b_last - b_first);
  if (m == 0) return 0;
  if (n < m) {
    std::swap(a, b);
    std::swap(n, m);
  }
  // Now m <= n: m gallops of log(n / m) each, or one merge of n + m steps.
  uint64_t found = 0;
  const uint32_t* end = a + n;
  if (m * 4 < n) {
    for (size_t j = 0; j < m && a < end; ++j) {
      a = gallop(a, end, b[j]);
      if (a < end && *a == b[j]) ++found, ++a;
    }
    return found;
  }
  size_t j = 0;
  while (a < end && j < m) {
    if (*a < b[j]) {
      ++a;
    } else if (b[j] < *a) {
      ++j;
    } else {
      ++found, ++a, ++j;
    }
  }
  return found;
}

// A slot map entry: the path's hash (high half) and 1 + its slot (0 = empty).
uint64_t hash_path(std::string_view path) noexcept { return hash_bytes(path.data(), path.size()); }

}  // namespace

LiveIndex::LiveIndex() {
  owned_ = empty_segment();
  base_ = base_arrays_of(*owned_);
}

LiveIndex::~LiveIndex() {
  stop_warmup_.store(true, std::memory_order_release);
  if (warmup_.joinable()) warmup_.join();
}

bool LiveIndex::start_warmup(const Vocabulary* vocab) {
  if (warmup_state_.load(std::memory_order_acquire) == 1) return false;
  if (warmup_.joinable()) warmup_.join();  // a finished one
  stop_warmup_.store(false, std::memory_order_release);
  warmup_state_.store(1, std::memory_order_release);
  try {
    warmup_ = std::thread([this, vocab] {
#ifdef __linux__
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);  // yields to the edits it prepares
#endif
      bool ok = false;
      try {  // (nothing may escape a thread)
        find_slot(std::string_view());  // builds the path table
        ok = !vocab || vocab->verify_base_until(stop_warmup_);
      } catch (...) {
        ok = false;  // a corrupt chunk stays marked: the reader that touches it throws
      }
      warmup_state_.store(ok ? 2 : 3, std::memory_order_release);
    });
  } catch (...) {
    warmup_state_.store(0, std::memory_order_release);
    throw;
  }
  return true;
}

void LiveIndex::reset_line_starts_locked() {
  line_starts_ptr_.store(nullptr, std::memory_order_release);
  line_starts_done_.store(false, std::memory_order_release);
  std::vector<uint32_t>().swap(line_starts_);
}

const uint32_t* LiveIndex::base_line_starts() const {
  if (line_starts_done_.load(std::memory_order_acquire)) return line_starts_ptr_.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> guard(line_starts_mu_);
  if (line_starts_done_.load(std::memory_order_acquire)) return line_starts_ptr_.load(std::memory_order_acquire);
  const SegmentView& seg = base_.seg;
  const int64_t n_post = seg.n_postings();
  if (n_post > line_starts_max_ || seg.line_nibbles > UINT32_MAX) {
    line_starts_done_.store(true, std::memory_order_release);
    return nullptr;
  }
  if (seg.checks) {  // everything the walk reads, verified once
    seg.checks->post_tf.ensure_all();
    seg.checks->line_data.ensure_all();
  }
  std::vector<uint32_t> starts(static_cast<size_t>(n_post));
  uint64_t q = 0;
  for (int64_t p = 0; p < n_post; ++p) {
    starts[static_cast<size_t>(p)] = static_cast<uint32_t>(q);
    q = skip_line_deltas(seg.line_data, q, seg.line_nibbles, seg.tf(p));
    if (q == kNoLinePos) throw CorruptIndex("corrupt index: posting lines run past the line data");
  }
  line_starts_.swap(starts);
  line_starts_ptr_.store(line_starts_.data(), std::memory_order_release);
  line_starts_done_.store(true, std::memory_order_release);
  return line_starts_.data();
}

void LiveIndex::set_line_starts_max(int64_t n) {
  std::unique_lock<std::shared_mutex> lock(rw_);
  line_starts_max_ = n;
  reset_line_starts_locked();
}

void LiveIndex::clear_locked() {
  reset_line_starts_locked();
  owned_ = empty_segment();
  base_ = base_arrays_of(*owned_);
  checks_.reset();
  base_postings_ = 0;
  base_live_.clear();
  dead_base_docs_ = 0;
  dead_base_.clear();
  dead_order_.clear();
  df_cache_.clear();
  dead_pairs_lo_ = dead_pairs_hi_ = 0;
  doc_terms_.clear();
  doc_len_.clear();
  field_len_.clear();
  alive_.clear();
  gen_.clear();
  mtime_.clear();
  size_.clear();
  path_arena_.clear();
  path_off_.assign(1, 0);
  delta_doc_of_.clear();
  slot_map_.clear();
  delta_head_.clear();
  delta_lists_.clear();
  delta_term_.clear();
  delta_df_.clear();
  delta_lines_.clear();
  delta_docs_.clear();
  delta_postings_ = 0;
  max_gen_ = 0;
  n_live_ = total_tokens_ = 0;
  for (auto& t : field_total_) t = 0;
}

const char* LiveIndex::install(const BaseArrays& base, std::unique_ptr<BuiltSegment> owned, const SlotArrays& slots,
                               size_t n_terms, bool trusted, std::unique_ptr<SegmentChecks> checks) {
  const char* err = nullptr;
  if (base.seg.term_ptr.empty() || base.seg.line_ckpt.empty()) err = "missing term offsets";
  if (!err && checks && base.seg.checks != checks.get()) err = "segment checks do not belong to the segment";
  if (!err && !checks && base.seg.checks) err = "segment checks must be handed over";
  if (!err && (!base.doc_len && base.n_docs)) err = "missing document lengths";
  if (!err && (!base.field_len && base.n_docs)) err = "missing field lengths";
  if (!err && base.n_docs >= std::numeric_limits<uint32_t>::max()) err = "too many documents";
  // A lazily checked segment is verified chunk by chunk as it is read; any
  // other segment not built here is validated in full.
  if (!err && !trusted && !checks) err = validate_segment(base.seg, base.n_docs);
  if (!err && !slots.path_off) err = "missing path offsets";
  if (!err && slots.path_bytes && !slots.path_blob) err = "missing path data";
  if (!err && slots.path_off[0] != 0) err = "path offsets do not start at 0";
  for (size_t d = 0; !err && d < base.n_docs; ++d)
    if (slots.path_off[d + 1] < slots.path_off[d]) err = "path offsets are not monotonic";
  if (!err && slots.path_off[base.n_docs] != slots.path_bytes) err = "path offsets do not end at the path data size";
  if (!err && base.n_docs && (!slots.mtime_ns || !slots.size)) err = "missing file metadata";
  if (err) return err;  // nothing changed
  (void)n_terms;
  const uint64_t n_base_postings = static_cast<uint64_t>(base.seg.n_postings());
  // Build the new tables first, then swap them in under the lock.
  std::vector<uint32_t> doc_len(base.doc_len, base.doc_len + base.n_docs);
  uint64_t total = 0;
  for (uint32_t len : doc_len) total += len;
  std::vector<uint32_t> field_len(base.field_len, base.field_len + base.n_docs * kExtraFields);
  uint64_t field_total[kExtraFields] = {0, 0, 0};
  for (size_t i = 0; i < field_len.size(); ++i) field_total[i % kExtraFields] += field_len[i];
  std::vector<char> arena(slots.path_blob, slots.path_blob + slots.path_bytes);
  std::vector<uint64_t> path_off(slots.path_off, slots.path_off + base.n_docs + 1);
  std::vector<int64_t> mtime(slots.mtime_ns, slots.mtime_ns + base.n_docs);
  std::vector<uint64_t> size(slots.size, slots.size + base.n_docs);

  std::unique_lock<std::shared_mutex> lock(rw_);
  clear_locked();
  owned_ = std::move(owned);
  checks_ = std::move(checks);
  base_ = base;
  reset_line_starts_locked();
  base_postings_ = n_base_postings;
  base_live_.assign(base.n_docs, 1);
  doc_len_.swap(doc_len);
  field_len_.swap(field_len);
  for (int f = 0; f < kExtraFields; ++f) field_total_[f] = field_total[f];
  alive_.assign(base.n_docs, 1);
  gen_.assign(base.n_docs, 0);
  mtime_.swap(mtime);
  size_.swap(size);
  path_arena_.swap(arena);
  path_off_.swap(path_off);
  delta_doc_of_.assign(base.n_docs, 0);
  n_live_ = base.n_docs;
  total_tokens_ = total;
  ++generation_;
  ++stats_version_;
  return nullptr;
}

uint32_t LiveIndex::df_unlocked(uint32_t term) const {
  uint64_t df = 0;
  const SegmentView& seg = base_.seg;
  if (term < seg.n_terms) {
    if (dead_base_.empty()) {
      uint64_t a, b;
      seg.term_ptr.pair(term, a, b);
      df = b - a;
    } else {
      const SegmentView::Range r = seg.doc_postings(term);
      df = static_cast<uint64_t>(r.end - r.begin) - dead_postings(term, r.begin, r.end);
    }
  }
  if (const uint32_t h = delta_head_.get(term)) df += delta_df_[h - 1];
  return static_cast<uint32_t>(df);
}

uint32_t LiveIndex::dead_postings(uint32_t term, int64_t begin, int64_t end) const {
  const uint32_t n_dead = static_cast<uint32_t>(dead_order_.size());
  DeadCount c{0, 0};
  bool cached = false;
  {
    std::lock_guard<std::mutex> guard(df_cache_mu_);
    auto it = df_cache_.find(term);
    if (it != df_cache_.end()) c = it->second, cached = true;
  }
  if (cached && c.seen == n_dead) return c.dead;
  const SegmentView& seg = base_.seg;
  const size_t n = static_cast<size_t>(end - begin);
  std::vector<uint32_t> unpacked;  // a packed list's ids (counted once per term, then cached)
  const uint32_t* docs = seg.post_doc ? seg.post_doc + begin : nullptr;
  if (!docs) {
    unpacked.resize(n);
    for (size_t i = 0; i < n; ++i) unpacked[i] = seg.doc(begin + static_cast<int64_t>(i));
    docs = unpacked.data();
  }
  if (!cached) {  // the whole intersection, once
    c.dead = static_cast<uint32_t>(count_common(docs, n, dead_base_.data(), dead_base_.size()));
  } else {  // the documents removed since: a search each
    for (uint32_t k = c.seen; k < n_dead; ++k) c.dead += std::binary_search(docs, docs + n, dead_order_[k]);
  }
  c.seen = n_dead;
  std::lock_guard<std::mutex> guard(df_cache_mu_);
  if (df_cache_.size() >= (size_t{1} << 16)) df_cache_.clear();  // (a bound, a few MB; it refills as queries come)
  df_cache_[term] = c;
  return c.dead;
}

uint64_t LiveIndex::dead_base_docs() const {
  auto lock = read_lock();
  return dead_base_docs_;
}

void LiveIndex::insert_slot_map(uint32_t slot) const {
  const size_t mask = slot_map_.size() - 1;
  const std::string_view p = path(slot);
  const uint64_t h = hash_path(p) >> 32;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    uint64_t& e = slot_map_[i];
    if (e == 0 || ((e >> 32) == h && path(static_cast<uint32_t>(e) - 1) == p)) {  // a repeated path: the last slot wins
      e = (h << 32) | (uint64_t{slot} + 1);
      return;
    }
  }
}

bool LiveIndex::copy_paths(uint64_t generation, const uint32_t* slots, size_t n, std::string& blob,
                           std::vector<uint32_t>& ends) const {
  auto lock = read_lock();
  if (generation != generation_) return false;
  const size_t n_slots = doc_len_.size();
  for (size_t i = 0; i < n; ++i) {
    if (slots[i] >= n_slots) return false;
    blob.append(path(slots[i]));
    ends.push_back(static_cast<uint32_t>(blob.size()));
  }
  return true;
}

int64_t LiveIndex::find_slot(std::string_view p) const {
  auto lock = read_lock();
  std::lock_guard<std::mutex> guard(slot_map_mu_);
  const size_t n = doc_len_.size();
  if (slot_map_.empty()) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slot_map_.assign(cap, 0);
    for (size_t s = 0; s < n; ++s) insert_slot_map(static_cast<uint32_t>(s));
  }
  const size_t mask = slot_map_.size() - 1;
  const uint64_t h = hash_path(p) >> 32;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t e = slot_map_[i];
    if (e == 0) return -1;
    if ((e >> 32) == h && path(static_cast<uint32_t>(e) - 1) == p) return static_cast<uint32_t>(e) - 1;
  }
}

uint32_t LiveIndex::add_slot(const char* path, size_t n, int64_t mtime_ns, uint64_t size) {
  if (doc_len_.size() >= std::numeric_limits<uint32_t>::max() - 1) throw std::length_error("too many documents");
  std::unique_lock<std::shared_mutex> lock(rw_);
  // Every push below may reallocate, hence the exclusive lock; a failure
  // part-way is undone by the resize at the end of the catch.
  const size_t slot = doc_len_.size();
  try {
    path_arena_.insert(path_arena_.end(), path, path + n);
    path_off_.push_back(path_arena_.size());
    doc_len_.push_back(0);
    field_len_.insert(field_len_.end(), kExtraFields, 0);
    alive_.push_back(0);
    gen_.push_back(0);
    mtime_.push_back(mtime_ns);
    size_.push_back(size);
    delta_doc_of_.push_back(0);
    if (!slot_map_.empty()) {  // (no reader holds the map: they hold the read lock while they use it)
      if (2 * doc_len_.size() > slot_map_.size()) {
        slot_map_.clear();  // rehashed, larger, by the next find_slot
      } else {
        insert_slot_map(static_cast<uint32_t>(slot));
      }
    }
  } catch (...) {
    slot_map_.clear();
    path_off_.resize(slot + 1);
    path_arena_.resize(path_off_[slot]);
    doc_len_.resize(slot);
    field_len_.resize(slot * kExtraFields);
    alive_.resize(slot);
    gen_.resize(slot);
    mtime_.resize(slot);
    size_.resize(slot);
    delta_doc_of_.resize(slot);
    throw;
  }
  ++generation_;
  ++stats_version_;
  return static_cast<uint32_t>(slot);
}

void LiveIndex::reserve_retire(uint32_t slot) {
  if (alive_[slot] && slot < base_.n_docs && base_live_[slot]) {
    reserve_one_more(dead_base_);
    reserve_one_more(dead_order_);
  }
}

void LiveIndex::retire_locked(uint32_t slot) {
  // A dead slot has no current postings (its generation moved on when it died).
  if (!alive_[slot]) return;
  if (++gen_[slot] > max_gen_) max_gen_ = gen_[slot];  // every delta posting of the slot is now dead
  if (slot < base_.n_docs && base_live_[slot]) {
    // Its base postings stop counting (base_live_), df included: df_unlocked
    // intersects a term's postings with dead_base_ (reserved: no allocation).
    base_live_[slot] = 0;
    ++dead_base_docs_;
    dead_base_.insert(std::lower_bound(dead_base_.begin(), dead_base_.end(), slot), slot);
    dead_order_.push_back(slot);
    if (!doc_terms_.empty()) {
      dead_pairs_lo_ += doc_terms_[slot];
      dead_pairs_hi_ += doc_terms_[slot];
    } else {
      uint64_t tokens = doc_len_[slot];
      for (int f = 0; f < kExtraFields; ++f) tokens += field_len_[slot * kExtraFields + f];
      dead_pairs_hi_ += tokens;
    }
  } else if (delta_doc_of_[slot]) {
    for (uint32_t t : delta_docs_[delta_doc_of_[slot] - 1].terms) --delta_df_[delta_head_.get(t) - 1];
  }
  alive_[slot] = 0;
  --n_live_;
  total_tokens_ -= doc_len_[slot];
  doc_len_[slot] = 0;
  for (int f = 0; f < kExtraFields; ++f) {
    field_total_[f] -= field_len_[slot * kExtraFields + f];
    field_len_[slot * kExtraFields + f] = 0;
  }
}

void LiveIndex::put(uint32_t slot, const EncodedDocument& doc, int64_t mtime_ns, uint64_t size) {
  if (slot >= doc_len_.size()) throw std::out_of_range("slot out of range");
  const size_t n = doc.terms.size();
  // Line offsets are 32-bit nibble positions.
  if (delta_lines_.size() + doc.lines.bytes.size() > std::numeric_limits<uint32_t>::max() / 2)
    throw std::length_error("delta line data would exceed 2 GiB: merge first");
  if (gen_[slot] == std::numeric_limits<uint32_t>::max()) throw std::length_error("slot generation exhausted: merge first");
  DeltaDoc fresh;
  fresh.terms = doc.terms;
  fresh.pos.resize(n);

  std::unique_lock<std::shared_mutex> lock(rw_);
  // Phase 1: everything that can allocate (and so throw), leaving the index
  // logically unchanged (a new term's delta list starts empty).
  for (uint32_t t : doc.terms) {
    uint32_t h = delta_head_.get(t);
    if (!h) {
      delta_head_.reserve(t);
      reserve_one_more(delta_lists_);
      reserve_one_more(delta_term_);
      reserve_one_more(delta_df_);
      delta_lists_.emplace_back();
      delta_term_.push_back(t);
      delta_df_.push_back(0);
      h = static_cast<uint32_t>(delta_lists_.size());
      delta_head_.set(t, h);
    }
    reserve_one_more(delta_lists_[h - 1]);
  }
  if (delta_lines_.capacity() < delta_lines_.size() + doc.lines.bytes.size())
    delta_lines_.reserve(std::max(delta_lines_.size() + doc.lines.bytes.size(), delta_lines_.capacity() * 2));
  if (!delta_doc_of_[slot]) reserve_one_more(delta_docs_);
  reserve_retire(slot);

  // Phase 2: no allocation from here on.
  retire_locked(slot);
  const uint32_t line_base = static_cast<uint32_t>(2 * delta_lines_.size());  // a document's lines are whole bytes
  delta_lines_.insert(delta_lines_.end(), doc.lines.bytes.begin(), doc.lines.bytes.end());
  const uint32_t g = gen_[slot];
  for (size_t i = 0; i < n; ++i) {
    const uint32_t h = delta_head_.get(doc.terms[i]) - 1;
    auto& list = delta_lists_[h];
    fresh.pos[i] = static_cast<uint32_t>(list.size());
    list.push_back(DeltaPosting{slot, g, doc.tf[i], line_base + doc.line_off[i]});
    ++delta_df_[h];
  }
  delta_postings_ += n;
  if (!delta_doc_of_[slot]) {
    delta_docs_.emplace_back();
    delta_doc_of_[slot] = static_cast<uint32_t>(delta_docs_.size());
  }
  std::swap(delta_docs_[delta_doc_of_[slot] - 1], fresh);
  doc_len_[slot] = static_cast<uint32_t>(doc.length);
  for (int f = 0; f < kExtraFields; ++f) {
    field_len_[slot * kExtraFields + f] = doc.field_length[f];
    field_total_[f] += doc.field_length[f];
  }
  alive_[slot] = 1;
  ++n_live_;
  total_tokens_ += doc.length;
  mtime_[slot] = mtime_ns;
  size_[slot] = size;
  ++stats_version_;
  lock.unlock();
  // `fresh` now holds the slot's previous forward lists, freed here, outside the lock.
}

bool LiveIndex::remove(uint32_t slot) {
  if (slot >= doc_len_.size()) return false;
  std::unique_lock<std::shared_mutex> lock(rw_);
  reserve_retire(slot);
  const bool was = alive_[slot];
  retire_locked(slot);
  if (was) ++stats_version_;
  return was;
}

bool LiveIndex::is_compact() const noexcept {
  return delta_postings_ == 0 && dead_base_docs_ == 0 && doc_len_.size() == base_.n_docs;
}

void LiveIndex::count_doc_terms() {
  const SegmentView& seg = base_.seg;
  if (seg.checks) seg.checks->post_doc.ensure_all();
  std::vector<uint32_t> counts(base_.n_docs, 0);
  const int64_t n_post = seg.n_postings();
  for (int64_t p = 0; p < n_post; ++p) ++counts[seg.doc(p)];
  uint64_t dead = 0;
  for (uint32_t d : dead_base_) dead += counts[d];
  doc_terms_.swap(counts);
  dead_pairs_lo_ = dead_pairs_hi_ = dead;
}

uint64_t LiveIndex::pending_postings() {
  if (dead_pairs_lo_ != dead_pairs_hi_) count_doc_terms();
  return delta_postings_ + dead_pairs_lo_;
}

bool LiveIndex::over_threshold(double ratio, uint64_t min_postings, uint64_t dead_pairs) const noexcept {
  dead_pairs = std::min(dead_pairs, base_postings_);
  const uint64_t pending = delta_postings_ + dead_pairs;
  const uint64_t live = base_postings_ - dead_pairs + delta_postings_;
  return pending > std::max<uint64_t>(min_postings, static_cast<uint64_t>(ratio * static_cast<double>(live)));
}

bool LiveIndex::needs_merge(double ratio, uint64_t min_postings) {
  // Hard limits first: the delta's 32-bit line offsets and the slot generations.
  if (delta_lines_.size() > (1ull << 30) || max_gen_ > (1u << 31)) return true;
  if (ratio < 0) return false;
  // More removed postings mean more pending and fewer live ones: the test is
  // monotonic in them, so the bounds decide unless the threshold lies between.
  if (!over_threshold(ratio, min_postings, dead_pairs_hi_)) return false;
  if (over_threshold(ratio, min_postings, dead_pairs_lo_)) return true;
  count_doc_terms();
  return over_threshold(ratio, min_postings, dead_pairs_lo_);
}

const DeltaPosting* LiveIndex::find_delta(uint32_t term, uint32_t slot) const noexcept {
  if (slot >= delta_doc_of_.size() || !delta_doc_of_[slot]) return nullptr;
  const DeltaDoc& dd = delta_docs_[delta_doc_of_[slot] - 1];
  auto it = std::lower_bound(dd.terms.begin(), dd.terms.end(), term);
  if (it == dd.terms.end() || *it != term) return nullptr;
  const DeltaPosting& dp = delta_lists_[delta_head_.get(term) - 1][dd.pos[it - dd.terms.begin()]];
  return dp.gen == gen_[slot] ? &dp : nullptr;
}

std::unique_ptr<MergedIndex> LiveIndex::build_merged(size_t n_terms) const {
  auto m = std::make_unique<MergedIndex>();
  const size_t n_slots = doc_len_.size();
  n_terms = std::max(n_terms, base_.seg.n_terms);
  std::vector<uint32_t> new_id(n_slots, std::numeric_limits<uint32_t>::max());
  for (size_t s = 0; s < n_slots; ++s) {
    if (!alive_[s]) continue;
    new_id[s] = static_cast<uint32_t>(m->old_slot.size());
    m->old_slot.push_back(static_cast<uint32_t>(s));
  }
  const size_t n_docs = m->old_slot.size();
  BuiltSegment& out = m->seg;
  const SegmentView& seg = base_.seg;
  seg.verify_all();
  const uint64_t pairs = base_postings_ - std::min(dead_pairs_lo_, base_postings_) + delta_postings_;  // an upper bound
  out.term_ptr.assign(n_terms + 1, 0);
  out.post_doc.reserve(pairs);
  out.post_tf.reserve(pairs);
  out.lines.reserve_nibbles(seg.line_nibbles + 2 * delta_lines_.size());

  struct Pending {
    uint32_t doc;  // new id
    uint32_t tf;
    uint64_t lines;  // nibble position in the delta's lines
  };
  std::vector<Pending> delta;
  const uint64_t base_end = seg.line_nibbles;
  const uint64_t delta_end = 2 * delta_lines_.size();
  for (size_t t = 0; t < n_terms; ++t) {
    delta.clear();
    if (const auto* list = delta_list(static_cast<uint32_t>(t))) {
      for (const DeltaPosting& dp : *list)
        if (dp.gen == gen_[dp.doc]) delta.push_back(Pending{new_id[dp.doc], dp.tf, dp.line_off});
      std::sort(delta.begin(), delta.end(), [](const Pending& a, const Pending& b) { return a.doc < b.doc; });
    }
    auto emit = [&](uint32_t doc, uint32_t tf, const uint8_t* data, uint64_t lines, uint64_t end) -> uint64_t {
      const int64_t span = line_span(data, lines, end, tf);
      if (span < 0) throw std::logic_error("malformed line data");
      out.append_posting(doc, tf);
      out.lines.append(data, lines, static_cast<uint64_t>(span));
      return lines + static_cast<uint64_t>(span);
    };
    const uint8_t* delta_data = delta_lines_.data();
    size_t j = 0;
    if (t < seg.n_terms) {
      const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
      uint64_t lines = r.end > r.begin ? seg.lines(r.begin) : 0;
      for (int64_t p = r.begin; p < r.end; ++p) {
        const uint32_t s = seg.doc(p);
        const uint32_t tf = seg.tf(p);
        if (!base_live_[s]) {
          lines = skip_line_deltas(seg.line_data, lines, base_end, tf);
          if (lines == kNoLinePos) throw std::logic_error("malformed line data");
          continue;
        }
        const uint32_t d = new_id[s];
        for (; j < delta.size() && delta[j].doc < d; ++j)
          emit(delta[j].doc, delta[j].tf, delta_data, delta[j].lines, delta_end);
        lines = emit(d, tf, seg.line_data, lines, base_end);
      }
    }
    for (; j < delta.size(); ++j) emit(delta[j].doc, delta[j].tf, delta_data, delta[j].lines, delta_end);
    out.term_ptr[t + 1] = static_cast<int64_t>(out.post_doc.size());
  }
  out.close_checkpoints();

  out.doc_len.resize(n_docs);
  out.field_len.resize(n_docs * kExtraFields);
  m->path_off.assign(1, 0);
  m->mtime_ns.resize(n_docs);
  m->size.resize(n_docs);
  for (size_t d = 0; d < n_docs; ++d) {
    const uint32_t s = m->old_slot[d];
    out.doc_len[d] = doc_len_[s];
    for (int f = 0; f < kExtraFields; ++f) out.field_len[d * kExtraFields + f] = field_len_[s * kExtraFields + f];
    const std::string_view p = path(s);
    m->path_blob.insert(m->path_blob.end(), p.begin(), p.end());
    m->path_off.push_back(m->path_blob.size());
    m->mtime_ns[d] = mtime_[s];
    m->size[d] = size_[s];
  }
  return m;
}

void LiveIndex::install_merged(MergedIndex& m) {
  auto owned = std::make_unique<BuiltSegment>(std::move(m.seg));
  const BaseArrays b = base_arrays_of(*owned);
  std::vector<uint32_t> doc_len(owned->doc_len);
  std::vector<uint32_t> field_len(owned->field_len);
  std::vector<uint8_t> live(b.n_docs, 1);
  std::vector<uint8_t> alive(b.n_docs, 1);
  std::vector<uint32_t> gen(b.n_docs, 0);
  std::vector<uint32_t> delta_doc_of(b.n_docs, 0);
  // Swapped out under the lock, freed after it.
  std::unique_ptr<BuiltSegment> old_owned;
  std::unique_ptr<SegmentChecks> old_checks;
  TermTable old_head;
  std::vector<std::vector<DeltaPosting>> old_lists;
  std::vector<uint32_t> old_delta_term, old_delta_df, old_dead, old_doc_terms;
  std::vector<uint64_t> old_slot_map;
  std::unordered_map<uint32_t, DeadCount> old_df_cache;
  std::vector<uint8_t> old_lines;
  std::vector<DeltaDoc> old_docs;
  {
    std::unique_lock<std::shared_mutex> lock(rw_);
    old_owned = std::move(owned_);
    owned_ = std::move(owned);
    old_checks = std::move(checks_);
    base_ = b;
    reset_line_starts_locked();
    base_postings_ = static_cast<uint64_t>(b.seg.n_postings());
    base_live_.swap(live);
    dead_base_docs_ = 0;
    dead_base_.swap(old_dead);
    dead_order_.clear();  // (small, and its capacity serves the next base)
    df_cache_.swap(old_df_cache);
    dead_pairs_lo_ = dead_pairs_hi_ = 0;
    doc_terms_.swap(old_doc_terms);
    doc_len_.swap(doc_len);
    field_len_.swap(field_len);
    alive_.swap(alive);
    gen_.swap(gen);
    mtime_.swap(m.mtime_ns);
    size_.swap(m.size);
    path_arena_.swap(m.path_blob);
    path_off_.swap(m.path_off);
    delta_doc_of_.swap(delta_doc_of);
    slot_map_.swap(old_slot_map);  // (slots moved: rebuilt by the next find_slot)
    delta_head_.swap(old_head);
    delta_lists_.swap(old_lists);
    delta_term_.swap(old_delta_term);
    delta_df_.swap(old_delta_df);
    delta_lines_.swap(old_lines);
    delta_docs_.swap(old_docs);
    delta_postings_ = 0;
    max_gen_ = 0;
    n_live_ = b.n_docs;
    ++generation_;
    ++stats_version_;
  }
}

uint64_t LiveIndex::generation() const {
  auto lock = read_lock();
  return generation_;
}

size_t LiveIndex::n_slots() const {
  auto lock = read_lock();
  return doc_len_.size();
}

uint64_t LiveIndex::n_live() const {
  auto lock = read_lock();
  return n_live_;
}

bool LiveIndex::alive(uint32_t slot) const {
  auto lock = read_lock();
  return slot < alive_.size() && alive_[slot];
}

uint32_t LiveIndex::doc_len(uint32_t slot) const {
  auto lock = read_lock();
  return slot < doc_len_.size() ? doc_len_[slot] : 0;
}

int64_t LiveIndex::mtime_ns(uint32_t slot) const {
  auto lock = read_lock();
  return slot < mtime_.size() ? mtime_[slot] : -1;
}

uint64_t LiveIndex::size(uint32_t slot) const {
  auto lock = read_lock();
  return slot < size_.size() ? size_[slot] : 0;
}

void LiveIndex::live_slots(std::vector<uint32_t>& out) const {
  auto lock = read_lock();
  out.clear();
  out.reserve(n_live_);
  for (size_t s = 0; s < alive_.size(); ++s)
    if (alive_[s]) out.push_back(static_cast<uint32_t>(s));
}

void LiveIndex::file_table(std::vector<int64_t>& mtime, std::vector<uint64_t>& size, std::vector<uint8_t>& alive) const {
  auto lock = read_lock();
  mtime = mtime_;
  size = size_;
  alive = alive_;
}

IndexCounts LiveIndex::counts(const std::vector<uint8_t>& is_field_term) const {
  auto lock = read_lock();
  auto field = [&is_field_term](size_t t) { return t < is_field_term.size() && is_field_term[t]; };
  IndexCounts c;
  c.live_docs = n_live_;
  c.total_tokens = total_tokens_;
  const SegmentView& seg = base_.seg;
  seg.verify_all();
  // df per term: its live base postings (counted here) plus its current delta postings.
  auto tally = [&](size_t t, uint64_t df) {
    if (field(t)) {
      c.field_terms += df > 0;
    } else {
      c.terms += df > 0;
      c.pairs += df;
    }
  };
  for (size_t t = 0; t < seg.n_terms; ++t) {
    const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
    const bool body = !field(t);
    uint64_t df = 0;
    for (int64_t p = r.begin; p < r.end; ++p)
      if (dead_base_docs_ == 0 || base_live_[seg.doc(p)]) {
        ++df;
        if (body) c.line_postings += seg.tf(p);
      }
    const uint32_t h = delta_head_.get(static_cast<uint32_t>(t));
    tally(t, df + (h ? delta_df_[h - 1] : 0));
  }
  for (size_t i = 0; i < delta_lists_.size(); ++i) {
    const uint32_t t = delta_term_[i];
    if (t >= seg.n_terms) tally(t, delta_df_[i]);
    const auto& list = delta_lists_[i];
    if (!field(t))
      for (const DeltaPosting& dp : list)
        if (dp.gen == gen_[dp.doc]) c.line_postings += dp.tf;
    c.delta_bytes += list.capacity() * sizeof(DeltaPosting);
  }
  c.delta_bytes += delta_head_.bytes() + (delta_term_.capacity() + delta_df_.capacity()) * 4 +
                   delta_lists_.capacity() * sizeof(delta_lists_[0]) + delta_lines_.capacity();
  for (const auto& dd : delta_docs_) c.delta_bytes += (dd.terms.capacity() + dd.pos.capacity()) * 4;
  const int64_t n_base_pairs = static_cast<int64_t>(base_postings_);
  c.base_bytes = static_cast<uint64_t>(seg.n_terms + 1) * 8 + static_cast<uint64_t>(n_base_pairs) * 5 +
                 seg.n_tf_big * 12 + line_checkpoints(n_base_pairs) * 8 + seg.line_bytes + base_.n_docs * 4;
  size_t slot_map = 0;
  {
    std::lock_guard<std::mutex> guard(slot_map_mu_);  // (find_slot builds it under the read lock)
    slot_map = slot_map_.size();
  }
  c.table_bytes = doc_len_.size() * (4 + 1 + 4 + 8 + 8 + 8 + 4 + 4 * kExtraFields) + base_live_.size() +
                  path_arena_.size() + dead_base_.capacity() * 4 + slot_map * 8;
  return c;
}

}  // namespace codelex
