#include "lexical/live_index.hpp"

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
  b.fwd_ptr = s.fwd_ptr.empty() ? nullptr : s.fwd_ptr.data();
  b.fwd_term = s.fwd_ptr.empty() ? nullptr : s.fwd_term.data();
  b.n_docs = s.doc_len.size();
  return b;
}

namespace {

std::unique_ptr<BuiltSegment> empty_segment() {
  auto s = std::make_unique<BuiltSegment>();
  s->term_ptr.assign(1, 0);
  s->line_ckpt.assign(1, 0);
  s->fwd_ptr.assign(1, 0);
  return s;
}

// Grows v's capacity geometrically so that one more element fits without a
// reallocation (reserve(size + 1) alone would make appends quadratic).
template <class T>
void reserve_one_more(std::vector<T>& v) {
  if (v.size() == v.capacity()) v.reserve(std::max<size_t>(8, v.capacity() * 2));
}

}  // namespace

LiveIndex::LiveIndex() {
  owned_ = empty_segment();
  base_ = base_arrays_of(*owned_);
}

LiveIndex::~LiveIndex() = default;

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
  if (n_post > line_starts_max_ || seg.line_bytes > UINT32_MAX) {
    line_starts_done_.store(true, std::memory_order_release);
    return nullptr;
  }
  if (seg.checks) {  // everything the walk reads, verified once
    seg.checks->post_tf.ensure_all();
    seg.checks->line_data.ensure_all();
  }
  std::vector<uint32_t> starts(static_cast<size_t>(n_post));
  const uint8_t* data = seg.line_data;
  const uint8_t* end = data + seg.line_bytes;
  const uint8_t* q = data;
  for (int64_t p = 0; p < n_post; ++p) {
    starts[static_cast<size_t>(p)] = static_cast<uint32_t>(q - data);
    const int64_t span = varint_span(q, end, seg.tf(p));
    if (span < 0) throw CorruptIndex("corrupt index: posting lines run past the line data");
    q += span;
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
  dead_base_docs_ = dead_base_pairs_ = 0;
  fwd_ptr_ = nullptr;
  fwd_term_ = nullptr;
  fwd_ptr_owned_.clear();
  fwd_term_owned_.clear();
  doc_len_.clear();
  field_len_.clear();
  alive_.clear();
  gen_.clear();
  mtime_.clear();
  size_.clear();
  path_arena_.clear();
  path_off_.assign(1, 0);
  delta_doc_of_.clear();
  delta_head_.clear();
  delta_lists_.clear();
  delta_lines_.clear();
  delta_docs_.clear();
  delta_postings_ = 0;
  max_gen_ = 0;
  df_.clear();
  df_ready_ = true;
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
  // Build the new tables first, then swap them in under the lock.  df is not
  // materialized: it is the base's until the first edit (ensure_df).
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
  // Only a segment built here brings a forward index it can vouch for.
  fwd_ptr_ = trusted ? base.fwd_ptr : nullptr;
  fwd_term_ = trusted ? base.fwd_term : nullptr;
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
  df_ready_ = false;
  n_live_ = base.n_docs;
  total_tokens_ = total;
  ++generation_;
  ++stats_version_;
  return nullptr;
}

void LiveIndex::ensure_df() {
  if (df_ready_) return;
  const SegmentView& seg = base_.seg;
  std::vector<uint32_t> df(seg.n_terms, 0);
  for (size_t t = 0; t < seg.n_terms; ++t) {
    const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
    df[t] = static_cast<uint32_t>(r.end - r.begin);
  }
  std::unique_lock<std::shared_mutex> lock(rw_);
  df_.swap(df);
  df_ready_ = true;
}

uint32_t LiveIndex::df_unlocked(uint32_t term) const {
  if (df_ready_) return term < df_.size() ? df_[term] : 0;
  if (term >= base_.seg.n_terms) return 0;
  const SegmentView::Range r = base_.seg.postings(term);
  return static_cast<uint32_t>(r.end - r.begin);
}

void LiveIndex::grow_df(size_t n) {
  if (n > df_.size()) df_.resize(std::max(n, df_.size() + df_.size() / 2), 0);
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
  } catch (...) {
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

void LiveIndex::ensure_forward() {
  if (fwd_ptr_) return;
  std::vector<int64_t> ptr;
  std::vector<uint32_t> terms;
  derive_forward(base_.seg, base_.n_docs, ptr, terms);
  std::unique_lock<std::shared_mutex> lock(rw_);  // counts() reads the pointers
  fwd_ptr_owned_.swap(ptr);
  fwd_term_owned_.swap(terms);
  fwd_term_ = fwd_term_owned_.data();
  fwd_ptr_ = fwd_ptr_owned_.data();
}

void LiveIndex::retire_locked(uint32_t slot) {
  // A dead slot has no current postings (its generation moved on when it died).
  if (!alive_[slot]) return;
  if (++gen_[slot] > max_gen_) max_gen_ = gen_[slot];  // every delta posting of the slot is now dead
  if (slot < base_.n_docs && base_live_[slot]) {
    const int64_t s = fwd_ptr_[slot], e = fwd_ptr_[slot + 1];  // ensure_forward() ran
    for (int64_t k = s; k < e; ++k) --df_[fwd_term_[k]];
    base_live_[slot] = 0;
    ++dead_base_docs_;
    dead_base_pairs_ += static_cast<uint64_t>(e - s);
  } else if (delta_doc_of_[slot]) {
    for (uint32_t t : delta_docs_[delta_doc_of_[slot] - 1].terms) --df_[t];
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
  if (delta_lines_.size() + doc.lines.size() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("delta line data would exceed 4 GiB: merge first");
  if (gen_[slot] == std::numeric_limits<uint32_t>::max()) throw std::length_error("slot generation exhausted: merge first");
  DeltaDoc fresh;
  fresh.terms = doc.terms;
  fresh.pos.resize(n);
  ensure_df();
  if (slot < base_.n_docs) ensure_forward();

  std::unique_lock<std::shared_mutex> lock(rw_);
  // Phase 1: everything that can allocate (and so throw), leaving the index
  // logically unchanged.
  if (n) {
    grow_df(static_cast<size_t>(doc.terms.back()) + 1);
    if (doc.terms.back() >= delta_head_.size())
      delta_head_.resize(std::max<size_t>(doc.terms.back() + 1, delta_head_.size() + delta_head_.size() / 2), 0);
  }
  for (uint32_t t : doc.terms) {
    if (!delta_head_[t]) {
      delta_lists_.emplace_back();
      delta_head_[t] = static_cast<uint32_t>(delta_lists_.size());
    }
    reserve_one_more(delta_lists_[delta_head_[t] - 1]);
  }
  if (delta_lines_.capacity() < delta_lines_.size() + doc.lines.size())
    delta_lines_.reserve(std::max(delta_lines_.size() + doc.lines.size(), delta_lines_.capacity() * 2));
  if (!delta_doc_of_[slot]) reserve_one_more(delta_docs_);

  // Phase 2: no allocation from here on.
  retire_locked(slot);
  const uint32_t line_base = static_cast<uint32_t>(delta_lines_.size());
  delta_lines_.insert(delta_lines_.end(), doc.lines.begin(), doc.lines.end());
  const uint32_t g = gen_[slot];
  for (size_t i = 0; i < n; ++i) {
    const uint32_t t = doc.terms[i];
    auto& list = delta_lists_[delta_head_[t] - 1];
    fresh.pos[i] = static_cast<uint32_t>(list.size());
    list.push_back(DeltaPosting{slot, g, doc.tf[i], line_base + doc.line_off[i]});
    ++df_[t];
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
  ensure_df();
  if (slot < base_.n_docs) ensure_forward();
  std::unique_lock<std::shared_mutex> lock(rw_);
  const bool was = alive_[slot];
  retire_locked(slot);
  if (was) ++stats_version_;
  return was;
}

bool LiveIndex::is_compact() const noexcept {
  return delta_postings_ == 0 && dead_base_docs_ == 0 && doc_len_.size() == base_.n_docs;
}

bool LiveIndex::needs_merge(double ratio, uint64_t min_postings) const noexcept {
  // Hard limits first: the delta's 32-bit line offsets and the slot generations.
  if (delta_lines_.size() > (1ull << 31) || max_gen_ > (1u << 31)) return true;
  if (ratio < 0) return false;
  const uint64_t pending = pending_postings();
  const uint64_t live = base_postings() - dead_base_pairs_ + delta_postings_;
  return pending > std::max<uint64_t>(min_postings, static_cast<uint64_t>(ratio * static_cast<double>(live)));
}

const DeltaPosting* LiveIndex::find_delta(uint32_t term, uint32_t slot) const noexcept {
  if (slot >= delta_doc_of_.size() || !delta_doc_of_[slot]) return nullptr;
  const DeltaDoc& dd = delta_docs_[delta_doc_of_[slot] - 1];
  auto it = std::lower_bound(dd.terms.begin(), dd.terms.end(), term);
  if (it == dd.terms.end() || *it != term) return nullptr;
  const DeltaPosting& dp = delta_lists_[delta_head_[term] - 1][dd.pos[it - dd.terms.begin()]];
  return dp.gen == gen_[slot] ? &dp : nullptr;
}

std::unique_ptr<MergedIndex> LiveIndex::build_merged(size_t n_terms) const {
  auto m = std::make_unique<MergedIndex>();
  const size_t n_slots = doc_len_.size();
  // (df_ grows geometrically: its size is not the vocabulary's.)
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
  const uint64_t pairs = base_postings_ - dead_base_pairs_ + delta_postings_;  // an upper bound
  out.term_ptr.assign(n_terms + 1, 0);
  out.post_doc.reserve(pairs);
  out.post_tf.reserve(pairs);
  out.line_data.reserve(seg.line_bytes + delta_lines_.size());

  struct Pending {
    uint32_t doc;  // new id
    uint32_t tf;
    const uint8_t* lines;
  };
  std::vector<Pending> delta;
  const uint8_t* base_end = seg.line_data + seg.line_bytes;
  const uint8_t* delta_end = delta_lines_.data() + delta_lines_.size();
  for (size_t t = 0; t < n_terms; ++t) {
    delta.clear();
    if (const auto* list = delta_list(static_cast<uint32_t>(t))) {
      for (const DeltaPosting& dp : *list)
        if (dp.gen == gen_[dp.doc]) delta.push_back(Pending{new_id[dp.doc], dp.tf, delta_lines_.data() + dp.line_off});
      std::sort(delta.begin(), delta.end(), [](const Pending& a, const Pending& b) { return a.doc < b.doc; });
    }
    auto emit = [&](uint32_t doc, uint32_t tf, const uint8_t* lines, const uint8_t* end) -> const uint8_t* {
      const int64_t span = varint_span(lines, end, tf);
      if (span < 0) throw std::logic_error("malformed line data");
      out.append_posting(doc, tf);
      out.line_data.insert(out.line_data.end(), lines, lines + span);
      return lines + span;
    };
    size_t j = 0;
    if (t < seg.n_terms) {
      const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
      const uint8_t* lines = r.end > r.begin ? seg.lines(r.begin) : nullptr;
      for (int64_t p = r.begin; p < r.end; ++p) {
        const uint32_t s = seg.post_doc[p];
        const uint32_t tf = seg.tf(p);
        if (!base_live_[s]) {
          const int64_t span = varint_span(lines, base_end, tf);
          if (span < 0) throw std::logic_error("malformed line data");
          lines += span;
          continue;
        }
        const uint32_t d = new_id[s];
        for (; j < delta.size() && delta[j].doc < d; ++j) emit(delta[j].doc, delta[j].tf, delta[j].lines, delta_end);
        lines = emit(d, tf, lines, base_end);
      }
    }
    for (; j < delta.size(); ++j) emit(delta[j].doc, delta[j].tf, delta[j].lines, delta_end);
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
  std::vector<uint32_t> old_head;
  std::vector<std::vector<DeltaPosting>> old_lists;
  std::vector<uint8_t> old_lines;
  std::vector<DeltaDoc> old_docs;
  std::vector<int64_t> old_fwd_ptr;
  std::vector<uint32_t> old_fwd_term;
  {
    std::unique_lock<std::shared_mutex> lock(rw_);
    old_owned = std::move(owned_);
    owned_ = std::move(owned);
    old_checks = std::move(checks_);
    base_ = b;
    reset_line_starts_locked();
    base_postings_ = static_cast<uint64_t>(b.seg.n_postings());
    fwd_ptr_ = nullptr;  // derived again when a base document next changes
    fwd_term_ = nullptr;
    old_fwd_ptr.swap(fwd_ptr_owned_);
    old_fwd_term.swap(fwd_term_owned_);
    base_live_.swap(live);
    dead_base_docs_ = dead_base_pairs_ = 0;
    doc_len_.swap(doc_len);
    field_len_.swap(field_len);
    alive_.swap(alive);
    gen_.swap(gen);
    mtime_.swap(m.mtime_ns);
    size_.swap(m.size);
    path_arena_.swap(m.path_blob);
    path_off_.swap(m.path_off);
    delta_doc_of_.swap(delta_doc_of);
    delta_head_.swap(old_head);
    delta_lists_.swap(old_lists);
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
  const size_t n_df = df_ready_ ? df_.size() : seg.n_terms;
  for (size_t t = 0; t < n_df; ++t) {
    const uint32_t df = df_unlocked(static_cast<uint32_t>(t));
    if (field(t)) {
      c.field_terms += df > 0;
      continue;
    }
    c.terms += df > 0;
    c.pairs += df;
  }
  const int64_t n_base_pairs = static_cast<int64_t>(base_postings_);
  for (size_t t = 0; t < seg.n_terms; ++t) {
    if (field(t)) continue;
    const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
    for (int64_t p = r.begin; p < r.end; ++p)
      if (dead_base_docs_ == 0 || base_live_[seg.post_doc[p]]) c.line_postings += seg.tf(p);
  }
  for (size_t t = 0; t < delta_head_.size(); ++t) {
    if (!delta_head_[t]) continue;
    const auto& list = delta_lists_[delta_head_[t] - 1];
    if (!field(t))
      for (const DeltaPosting& dp : list)
        if (dp.gen == gen_[dp.doc]) c.line_postings += dp.tf;
    c.delta_bytes += list.capacity() * sizeof(DeltaPosting);
  }
  c.delta_bytes += delta_head_.capacity() * 4 + delta_lines_.capacity();
  for (const auto& dd : delta_docs_) c.delta_bytes += (dd.terms.capacity() + dd.pos.capacity()) * 4;
  c.base_bytes = static_cast<uint64_t>(seg.n_terms + 1) * 8 + static_cast<uint64_t>(n_base_pairs) * 5 +
                 seg.n_tf_big * 12 + line_checkpoints(n_base_pairs) * 8 + seg.line_bytes + base_.n_docs * 4;
  if (fwd_ptr_) c.base_bytes += (base_.n_docs + 1) * 8 + static_cast<uint64_t>(fwd_ptr_[base_.n_docs]) * 4;
  c.table_bytes = df_.size() * 4 + doc_len_.size() * (4 + 1 + 4 + 8 + 8 + 8 + 4 + 4 * kExtraFields) +
                  base_live_.size() + path_arena_.size();
  return c;
}

}  // namespace codelex
