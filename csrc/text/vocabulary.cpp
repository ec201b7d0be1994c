#include "text/vocabulary.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace codelex {

namespace {
inline uint64_t mix(uint64_t x) noexcept {
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  x *= 0xd6e8feb86659fd93ULL;
  x ^= x >> 32;
  return x;
}
}  // namespace

// Word-at-a-time multiplicative hash: tokens are short, so a byte loop (FNV)
// would dominate interning.
uint64_t hash_bytes(const char* s, size_t n) noexcept {
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ n;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, s, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
    h ^= h >> 29;
    s += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, s, n);
    h = (h ^ w) * 0xff51afd7ed558ccdULL;
  }
  return mix(h);
}

void filter_add(uint64_t* words, size_t n_blocks, uint64_t h) noexcept {
  uint64_t* block = words + filter_block(h, n_blocks) * kFilterBlockWords;
  uint64_t g = filter_bits_seed(h);
  for (int j = 0; j < kFilterProbes; ++j, g >>= 9) block[(g >> 6) & 7] |= uint64_t{1} << (g & 63);
}

bool filter_may_contain(const uint64_t* words, size_t n_blocks, uint64_t h) noexcept {
  const uint64_t* block = words + filter_block(h, n_blocks) * kFilterBlockWords;
  uint64_t g = filter_bits_seed(h);
  for (int j = 0; j < kFilterProbes; ++j, g >>= 9)
    if (!(block[(g >> 6) & 7] & (uint64_t{1} << (g & 63)))) return false;
  return true;
}

Vocabulary::Vocabulary() { clear(); }

void Vocabulary::clear() {
  base_blob_ = nullptr;
  base_off_ = PackedOffsets{};
  base_heads_ = nullptr;
  base_filter_ = nullptr;
  base_filter_blocks_ = 0;
  base_n_ = 0;
  base_blob_check_.reset(nullptr, 0, nullptr, "term data");
  base_off_check_.reset(nullptr, 0, nullptr, "term offsets");
  base_filter_check_.reset(nullptr, 0, nullptr, "term filter");
  arena_.clear();
  offsets_.assign(1, 0);
  slots_.assign(1024, 0);
  mask_ = slots_.size() - 1;
  count_ = 0;
}

size_t Vocabulary::memory_bytes() const noexcept {
  return arena_.capacity() + offsets_.capacity() * sizeof(uint64_t) + slots_.capacity() * sizeof(uint64_t);
}

namespace {

// Reallocates v to capacity cap unless its capacity is already between cap
// and 1.5 cap (capacity never touched is address space, not memory).
template <class T>
void fit_capacity(std::vector<T>& v, size_t cap) {
  if (v.capacity() >= cap && v.capacity() <= cap + cap / 2) return;
  std::vector<T> fitted;
  fitted.reserve(cap);
  fitted.assign(v.begin(), v.end());
  v.swap(fitted);
}

}  // namespace

void Vocabulary::shrink_to_fit() {
  // Headroom for the terms edits add: without it the first new term after a
  // bulk build would copy the whole arena and offsets (hundreds of MB, a
  // tenth of a second, on a large tree) and the table would rehash soon.
  fit_capacity(arena_, arena_.size() + arena_.size() / 8 + 4096);
  fit_capacity(offsets_, offsets_.size() + offsets_.size() / 8 + 512);
  if ((count_ + count_ / 32 + 512) * 2 > slots_.size()) rehash(slots_.size() * 2);
}

void Vocabulary::rehash(size_t nslots) {
  std::vector<uint64_t> old;
  old.swap(slots_);
  slots_.assign(nslots, 0);
  mask_ = nslots - 1;
  for (uint64_t s : old) {
    if (!s) continue;
    size_t i = (s >> 32) & mask_;
    while (slots_[i]) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

inline bool Vocabulary::equals(uint32_t id, const char* s, size_t n) const {
  const std::string_view t = term(id);
  return t.size() == n && (n == 0 || std::memcmp(t.data(), s, n) == 0);  // (memcmp of null, 0 is UB)
}

size_t Vocabulary::term_bytes() const {
  size_t n = arena_.size();
  if (base_n_) n += base_off_[base_n_];
  return n;
}

namespace {
// Byte order of two terms (memcmp, then length).
inline int compare_terms(std::string_view a, const char* s, size_t n) noexcept {
  const size_t m = std::min(a.size(), n);
  const int c = m ? std::memcmp(a.data(), s, m) : 0;  // (an empty term's data may be null: UB for memcmp)
  if (c) return c;
  return a.size() < n ? -1 : (a.size() > n ? 1 : 0);
}
}  // namespace

size_t Vocabulary::base_lower_bound(const char* s, size_t n) const {
  size_t lo = 0, hi = base_n_;
  if (base_heads_) {
    // Blocks whose head is below the key's hold only smaller terms, but the
    // last of them may end with larger ones; blocks whose head is above it
    // start after it.  The answer lies between.
    const size_t nb = (base_n_ + kHeadEvery - 1) / kHeadEvery;
    const uint64_t key = term_head(s, n);
    const uint64_t* first = std::lower_bound(base_heads_, base_heads_ + nb, key);
    const uint64_t* last = std::upper_bound(first, base_heads_ + nb, key);
    const size_t j = static_cast<size_t>(first - base_heads_), k = static_cast<size_t>(last - base_heads_);
    lo = (j ? j - 1 : 0) * kHeadEvery;
    hi = std::min(base_n_, k * kHeadEvery);
  }
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (compare_terms(term(static_cast<uint32_t>(mid)), s, n) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t Vocabulary::base_find(const char* s, size_t n, uint64_t h) const {
  if (!base_n_) return -1;
  if (base_filter_) {
    const size_t b = filter_block(h, base_filter_blocks_) * kFilterBlockWords * sizeof(uint64_t);
    base_filter_check_.ensure(b, b + kFilterBlockWords * sizeof(uint64_t));
    if (!filter_may_contain(base_filter_, base_filter_blocks_, h)) return -1;
  }
  const size_t i = base_lower_bound(s, n);
  if (i < base_n_ && compare_terms(term(static_cast<uint32_t>(i)), s, n) == 0) return static_cast<int64_t>(i);
  return -1;
}

void Vocabulary::base_prefix_range(const char* s, size_t n, size_t& first, size_t& last) const {
  first = base_lower_bound(s, n);
  size_t lo = first, hi = base_n_;
  // The terms with the prefix are contiguous: the first that lacks it ends them.
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const std::string_view t = term(static_cast<uint32_t>(mid));
    if (t.size() >= n && (n == 0 || std::memcmp(t.data(), s, n) == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  last = lo;
}

void Vocabulary::base_words(const char* prefix, size_t n, size_t min_len, size_t max_len,
                            std::vector<uint32_t>& ids) const {
  size_t i, last;
  base_prefix_range(prefix, n, i, last);
  std::string skip;
  while (i < last) {
    const std::string_view t = term(static_cast<uint32_t>(i));
    // The first byte that keeps t from being a word: a non-letter, or the
    // byte past max_len.  Every term that shares t's bytes up to and
    // including it is no word either (or is t itself).
    size_t j = 0;
    while (j < t.size() && j < max_len && t[j] >= 'a' && t[j] <= 'z') ++j;
    if (j == t.size()) {
      if (t.size() >= min_len) ids.push_back(static_cast<uint32_t>(i));
      ++i;
      continue;
    }
    // Skip to the first term above every term with prefix t[0..j]: t[0..j]
    // with its last byte raised (a 0xFF byte cannot be raised: step once).
    if (j < n) break;  // inside the prefix itself: no term of the range is a word
    const unsigned char c = static_cast<unsigned char>(t[j]);
    if (c == 0xFF) {
      ++i;
      continue;
    }
    skip.assign(t.data(), j);
    skip.push_back(static_cast<char>(c + 1));
    i = std::max(i + 1, std::min(last, base_lower_bound(skip.data(), skip.size())));
  }
}

const char* Vocabulary::assign_sorted(const char* blob, size_t blob_len, const uint64_t* offset_base,
                                      const uint32_t* offset_rel, size_t n, const uint64_t* blob_digests,
                                      const uint64_t* offset_digests, const uint64_t* heads,
                                      const uint64_t* filter, const uint64_t* filter_digests) {
  clear();
  if (n == 0) return nullptr;
  if (!offset_base || !offset_rel || (blob_len && !blob)) return "missing term data";
  const PackedOffsets off{nullptr, offset_base, offset_rel, nullptr};
  if (!blob_digests || !offset_digests) {
    if (!packed_offsets_valid(offset_base, offset_rel, n + 1)) return "term offsets are not monotonic";
    if (off[0] != 0) return "term offsets do not start at 0";
    if (off[n] != blob_len) return "term offsets do not end at the term data size";
    for (size_t i = 1; i < n; ++i) {
      const std::string_view prev(blob + off[i - 1], off[i] - off[i - 1]);
      if (compare_terms(prev, blob + off[i], off[i + 1] - off[i]) >= 0) return "terms are not sorted";
    }
    for (size_t b = 0; heads && b * kHeadEvery < n; ++b) {
      const size_t i = b * kHeadEvery;
      if (heads[b] != term_head(blob + off[i], off[i + 1] - off[i])) return "term heads do not match the terms";
    }
    // A filter that refused a term would hide it: every term must pass.
    for (size_t i = 0; filter && i < n; ++i)
      if (!filter_may_contain(filter, filter_blocks(n), hash_bytes(blob + off[i], off[i + 1] - off[i])))
        return "the term filter does not hold every term";
  } else if (offset_base[n >> kOffsetBlockShift] + offset_rel[n] != blob_len) {
    // (the last entry is compared, not used: its chunk is verified on first use)
    return "term offsets do not end at the term data size";
  }
  base_blob_ = blob;
  base_off_ = off;
  base_off_.rel_check = &base_off_check_;
  base_heads_ = heads;
  base_filter_ = filter;
  base_filter_blocks_ = filter ? filter_blocks(n) : 0;
  base_n_ = n;
  base_filter_check_.reset(filter, base_filter_blocks_ * kFilterBlockWords * sizeof(uint64_t),
                           blob_digests && offset_digests ? filter_digests : nullptr, "term filter");
  base_blob_check_.reset(blob, blob_len, blob_digests, "term data");
  base_off_check_.reset(offset_rel, (n + 1) * sizeof(uint32_t), offset_digests, "term offsets");
  return nullptr;
}

void Vocabulary::sorted_order(std::vector<uint32_t>& order) const {
  const size_t n = size();
  order.resize(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
  if (offsets_.size() == 1) return;  // the base alone is sorted
  // Sorted by a big-endian key of the first 8 bytes, then the whole term on
  // ties: most comparisons never touch the term bytes.
  struct Key {
    uint64_t head;
    std::string_view term;
    uint32_t id;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view t = term(static_cast<uint32_t>(i));
    uint64_t head = 0;
    for (size_t j = 0; j < 8; ++j) head = (head << 8) | (j < t.size() ? static_cast<unsigned char>(t[j]) : 0u);
    keys[i] = Key{head, t, static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.head != b.head) return a.head < b.head;
    return a.term < b.term;
  });
  for (size_t i = 0; i < n; ++i) order[i] = keys[i].id;
}

size_t Vocabulary::probe(const char* s, size_t n, uint64_t h, int64_t& id) const {
  size_t i = h & mask_;
  while (uint64_t slot = slots_[i]) {
    if ((slot >> 32) == h && equals(static_cast<uint32_t>(slot) - 1, s, n)) {
      id = static_cast<uint32_t>(slot) - 1;
      return i;
    }
    i = (i + 1) & mask_;
  }
  id = -1;
  return i;  // the empty slot where the term would go
}

int64_t Vocabulary::find(const char* s, size_t n) const {
  int64_t id;
  const uint64_t h = hash_bytes(s, n);
  probe(s, n, h >> 32, id);
  return id >= 0 ? id : base_find(s, n, h);
}

int64_t Vocabulary::lookup(const char* s, size_t n) {
  const uint64_t full = hash_bytes(s, n), h = full >> 32;
  int64_t found;
  const size_t i = probe(s, n, h, found);
  if (found >= 0) return found;
  found = base_find(s, n, full);
  if (found >= 0) {
    ++count_;
    slots_[i] = (h << 32) | (static_cast<uint64_t>(found) + 1);
    if (count_ * 2 > slots_.size()) rehash(slots_.size() * 2);  // load <= 0.5
  }
  return found;
}

uint32_t Vocabulary::intern(const char* s, size_t n) {
  const uint64_t full = hash_bytes(s, n), h = full >> 32;
  int64_t found;
  const size_t i = probe(s, n, h, found);
  if (found >= 0) return static_cast<uint32_t>(found);
  uint32_t id;
  const int64_t in_base = base_find(s, n, full);
  if (in_base >= 0) {  // cache the base term in the table
    id = static_cast<uint32_t>(in_base);
  } else {
    if (size() >= 0xFFFFFFFEu) throw std::length_error("vocabulary is full");
    id = static_cast<uint32_t>(size());
    arena_.insert(arena_.end(), s, s + n);
    offsets_.push_back(arena_.size());
  }
  ++count_;
  slots_[i] = (h << 32) | (static_cast<uint64_t>(id) + 1);
  if (count_ * 2 > slots_.size()) rehash(slots_.size() * 2);  // load <= 0.5
  return id;
}

bool Vocabulary::assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n) {
  clear();
  if (n == 0) return offsets == nullptr || offsets[0] == 0;
  if (offsets[0] != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i] || offsets[i + 1] > blob_len) return false;
  }
  size_t nslots = 1024;
  while (nslots < 2 * n) nslots *= 2;
  slots_.assign(nslots, 0);
  mask_ = nslots - 1;
  arena_.assign(blob, blob + offsets[n]);
  offsets_.assign(offsets, offsets + n + 1);
  count_ = n;
  // Hash everything first, then insert with the slot of a later term
  // prefetched: the table is larger than the caches, so the inserts are
  // bound by memory latency, which prefetching overlaps.
  std::vector<uint32_t> hashes(n);
  for (size_t id = 0; id < n; ++id)
    hashes[id] = static_cast<uint32_t>(hash_bytes(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]) >> 32);
  constexpr size_t kAhead = 16;
  for (size_t id = 0; id < n; ++id) {
#if defined(__GNUC__) || defined(__clang__)
    if (id + kAhead < n) __builtin_prefetch(&slots_[hashes[id + kAhead] & mask_], 1);
#endif
    const char* s = arena_.data() + offsets_[id];
    const size_t len = offsets_[id + 1] - offsets_[id];
    const uint64_t h = hashes[id];
    int64_t found;
    const size_t i = probe(s, len, h, found);
    if (found >= 0) {
      clear();  // duplicate term
      return false;
    }
    slots_[i] = (h << 32) | (static_cast<uint64_t>(id) + 1);
  }
  return true;
}

void Vocabulary::absorb(Vocabulary& other, std::vector<uint32_t>& remap) {
  if (size() == 0 && other.base_n_ == 0) {  // take the storage over: the same ids, no probing
    remap.resize(other.size());
    for (size_t i = 0; i < remap.size(); ++i) remap[i] = static_cast<uint32_t>(i);
    arena_.swap(other.arena_);
    offsets_.swap(other.offsets_);
    slots_.swap(other.slots_);
    std::swap(count_, other.count_);
    std::swap(mask_, other.mask_);
    other.clear();
    return;
  }
  intern_all(other, remap);
  other.clear();
}

void Vocabulary::intern_all(const Vocabulary& other, std::vector<uint32_t>& remap) {
  const size_t n = other.size();
  remap.resize(n);
  size_t want = slots_.size();
  while (want < 2 * (count_ + n)) want *= 2;  // one rehash instead of many
  if (want != slots_.size()) rehash(want);
  arena_.reserve(arena_.size() + other.arena_.size());
  offsets_.reserve(offsets_.size() + n);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view t = other.term(static_cast<uint32_t>(i));
    remap[i] = intern(t.data(), t.size());
  }
}

}  // namespace codelex
