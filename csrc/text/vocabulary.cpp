#include "text/vocabulary.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <thread>

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
  base_blocks_ = nullptr;
  base_blocks_len_ = 0;
  base_off_ = PackedOffsets{};
  base_heads_ = nullptr;
  base_filter_ = nullptr;
  base_filter_blocks_ = 0;
  base_n_ = 0;
  base_nb_ = 0;
  base_blob_check_.reset(nullptr, 0, nullptr, "term blocks");
  base_off_check_.reset(nullptr, 0, nullptr, "term block offsets");
  base_filter_check_.reset(nullptr, 0, nullptr, "term filter");
  arena_.clear();
  offsets_.assign(1, 0);
  overlay_ascending_ = true;
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
  if (id < base_n_) return base_equals(id, s, n);
  id -= static_cast<uint32_t>(base_n_);
  const size_t len = offsets_[id + 1] - offsets_[id];
  return len == n && (n == 0 || std::memcmp(arena_.data() + offsets_[id], s, n) == 0);  // (memcmp of null, 0 is UB)
}

size_t Vocabulary::term_bytes() const {
  size_t total = arena_.size();
  // The lengths only: each term's header, its suffix skipped.
  for (size_t b = 0; b < base_nb_; ++b) {
    TermBlockReader r = open_block(b);
    const char* t;
    size_t len, shared;
    if (!r.first(t, len)) malformed_block(b);
    total += len;
    for (size_t j = 1, count = block_terms(b); j < count; ++j) {
      if (!r.next(len, shared, t, len)) malformed_block(b);
      len += shared;
      total += len;
    }
  }
  return total;
}

namespace {
// Byte order of two terms (memcmp, then length).
inline int compare_terms(std::string_view a, const char* s, size_t n) noexcept {
  const size_t m = std::min(a.size(), n);
  const int c = m ? std::memcmp(a.data(), s, m) : 0;  // (an empty term's data may be null: UB for memcmp)
  if (c) return c;
  return a.size() < n ? -1 : (a.size() > n ? 1 : 0);
}
// Length of the common prefix of a[0..n) and b[0..n).
inline size_t common_prefix(const char* a, const char* b, size_t n) noexcept {
  size_t q = 0;
  while (q < n && a[q] == b[q]) ++q;
  return q;
}
}  // namespace

void Vocabulary::malformed_block(size_t b) {
  throw CorruptIndex("corrupt index: term dictionary block " + std::to_string(b) + " is malformed");
}

TermBlockReader Vocabulary::open_block(size_t b) const {
  uint64_t first, last;
  base_off_.pair(b, first, last);
  // Checked even in a verified chunk: a block must never steer a read out of the blocks.
  if (first > last || last > base_blocks_len_) malformed_block(b);
  base_blob_check_.ensure(first, last);
  return TermBlockReader(base_blocks_ + first, base_blocks_ + last);
}

std::string_view Vocabulary::block_first(size_t b) const {
  TermBlockReader r = open_block(b);
  const char* t;
  size_t len;
  if (!r.first(t, len)) malformed_block(b);
  return {t, len};
}

// Walks the block tracking m, the common prefix of the current term with s,
// from the previous term's: no term is copied.  A term that keeps more of its
// predecessor than m shares m bytes with s and differs from it where its
// predecessor did, so it compares as that one did (below s, or the walk would
// have stopped).
size_t Vocabulary::block_seek(size_t b, const char* s, size_t n, bool& equal) const {
  TermBlockReader r = open_block(b);
  const size_t count = block_terms(b);
  const char* u;
  size_t k, len = 0, m = 0, shared = 0;
  equal = false;
  for (size_t j = 0; j < count; ++j) {
    if (j == 0 ? !r.first(u, k) : !r.next(len, shared, u, k)) malformed_block(b);
    len = shared + k;
    if (shared > m) continue;
    m = shared + common_prefix(u, s + shared, std::min(k, n - shared));
    int c;
    if (m == len || m == n)
      c = len < n ? -1 : (len > n ? 1 : 0);
    else
      c = static_cast<unsigned char>(u[m - shared]) < static_cast<unsigned char>(s[m]) ? -1 : 1;
    if (c >= 0) {
      equal = c == 0;
      return j;
    }
  }
  return count;
}

bool Vocabulary::base_equals(uint32_t id, const char* s, size_t n) const {
  const size_t b = id / kTermBlock, target = id % kTermBlock;
  TermBlockReader r = open_block(b);
  const char* u;
  size_t k, len = 0, m = 0, shared = 0;
  for (size_t j = 0; j <= target; ++j) {
    if (j == 0 ? !r.first(u, k) : !r.next(len, shared, u, k)) malformed_block(b);
    len = shared + k;
    if (shared <= m) m = shared + common_prefix(u, s + shared, std::min(k, n - shared));
  }
  return m == n && len == n;
}

void Vocabulary::decode_base(uint32_t id, std::string& out) const {
  const size_t b = id / kTermBlock, target = id % kTermBlock;
  TermBlockReader r = open_block(b);
  const char* u;
  size_t k, shared;
  if (!r.first(u, k)) malformed_block(b);
  out.assign(u, k);
  for (size_t j = 1; j <= target; ++j) {
    if (!r.next(out.size(), shared, u, k)) malformed_block(b);
    out.resize(shared);
    out.append(u, k);
  }
}

std::string_view TermReader::get(uint32_t id) {
  const Vocabulary& v = *v_;
  if (id >= v.base_n_) {
    const size_t i = id - v.base_n_;
    return {v.arena_.data() + v.offsets_[i], static_cast<size_t>(v.offsets_[i + 1] - v.offsets_[i])};
  }
  const size_t b = id / kTermBlock;
  if (b == block_ && id + 1 == next_) return cur_;  // the same term again
  if (b != block_ || id < next_) {  // another block, or behind: from the block's start
    block_ = SIZE_MAX;
    reader_ = v.open_block(b);
    const char* u;
    size_t k;
    if (!reader_.first(u, k)) Vocabulary::malformed_block(b);
    cur_.assign(u, k);
    block_ = b;
    next_ = b * kTermBlock + 1;
  }
  while (next_ <= id) {
    const char* u;
    size_t k, shared;
    if (!reader_.next(cur_.size(), shared, u, k)) {
      block_ = SIZE_MAX;
      Vocabulary::malformed_block(b);
    }
    cur_.resize(shared);
    cur_.append(u, k);
    ++next_;
  }
  return cur_;
}

size_t Vocabulary::base_lower_bound(const char* s, size_t n, bool& equal) const {
  equal = false;
  if (!base_n_) return 0;
  size_t lo = 0, hi = base_nb_;  // blocks
  if (base_heads_) {
    // Blocks whose head is below the key's hold only smaller terms, but the
    // last of them may end with larger ones; blocks whose head is above it
    // start after it.  The answer lies between.
    const size_t nh = (base_n_ + kHeadEvery - 1) / kHeadEvery;
    const uint64_t key = term_head(s, n);
    const uint64_t* first = std::lower_bound(base_heads_, base_heads_ + nh, key);
    const uint64_t* last = std::upper_bound(first, base_heads_ + nh, key);
    const size_t j = static_cast<size_t>(first - base_heads_), k = static_cast<size_t>(last - base_heads_);
    constexpr size_t per_head = kHeadEvery / kTermBlock;
    lo = (j ? j - 1 : 0) * per_head;
    hi = std::min(base_nb_, k * per_head);
  }
  // The first block in [lo, hi) whose first term is above s: the answer is
  // in the block before it (or starts the range).
  const size_t start = lo;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (compare_terms(block_first(mid), s, n) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == start) return start * kTermBlock;
  const size_t b = lo - 1;
  return b * kTermBlock + block_seek(b, s, n, equal);
}

int64_t Vocabulary::base_find(const char* s, size_t n, uint64_t h) const {
  if (!base_n_) return -1;
  if (base_filter_) {
    const size_t b = filter_block(h, base_filter_blocks_) * kFilterBlockWords * sizeof(uint64_t);
    base_filter_check_.ensure(b, b + kFilterBlockWords * sizeof(uint64_t));
    if (!filter_may_contain(base_filter_, base_filter_blocks_, h)) return -1;
  }
  bool equal;
  const size_t i = base_lower_bound(s, n, equal);
  return equal ? static_cast<int64_t>(i) : -1;
}

void Vocabulary::base_prefix_range(const char* s, size_t n, size_t& first, size_t& last) const {
  first = base_lower_bound(s, n);
  // The terms with the prefix end before the least string above all of
  // them: the prefix with its trailing 0xFF bytes dropped and its last byte
  // raised (none when every byte is 0xFF: they run to the end).
  size_t k = n;
  while (k && static_cast<unsigned char>(s[k - 1]) == 0xFF) --k;
  if (!k) {
    last = base_n_;
    return;
  }
  std::string above(s, k);
  above.back() = static_cast<char>(static_cast<unsigned char>(above.back()) + 1);
  last = std::max(first, base_lower_bound(above.data(), above.size()));
}

void Vocabulary::base_words(const char* prefix, size_t n, size_t min_len, size_t max_len,
                            std::vector<uint32_t>& ids) const {
  size_t i, last;
  base_prefix_range(prefix, n, i, last);
  std::string skip;
  TermReader reader(this);
  while (i < last) {
    const std::string_view t = reader.get(static_cast<uint32_t>(i));
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

const char* Vocabulary::assign_sorted(const char* blocks, size_t blocks_len, const uint64_t* offset_base,
                                      const uint32_t* offset_rel, size_t n, const uint64_t* blocks_digests,
                                      const uint64_t* offset_digests, const uint64_t* heads,
                                      const uint64_t* filter, const uint64_t* filter_digests) {
  clear();
  if (n == 0) return blocks_len ? "term blocks hold bytes but no terms" : nullptr;
  if (!offset_base || !offset_rel || (blocks_len && !blocks)) return "missing term data";
  const size_t nb = term_blocks(n);
  const PackedOffsets off{nullptr, offset_base, offset_rel, nullptr};
  const bool lazy = blocks_digests && offset_digests;
  if (!lazy) {
    if (!packed_offsets_valid(offset_base, offset_rel, nb + 1)) return "term block offsets are not monotonic";
    if (off[0] != 0) return "term block offsets do not start at 0";
    if (off[nb] != blocks_len) return "term block offsets do not end at the term data size";
    // Every block decodes to exactly its terms and its end, each term above
    // the one before (across blocks too); heads and filter agree with them.
    std::string cur;  // the term just decoded
    const size_t n_filter = filter_blocks(n);
    for (size_t b = 0; b < nb; ++b) {
      TermBlockReader r(blocks + off[b], blocks + off[b + 1]);
      const size_t count = std::min(kTermBlock, n - b * kTermBlock);
      for (size_t j = 0; j < count; ++j) {
        const char* u;
        size_t k, shared;
        if (j == 0) {
          if (!r.first(u, k)) return "a term block is malformed";
          if (b && compare_terms(cur, u, k) >= 0) return "terms are not sorted";
          cur.assign(u, k);
        } else {
          if (!r.next(cur.size(), shared, u, k)) return "a term block is malformed";
          // Above the previous term, checked where they part: the suffix must
          // start with a byte above the one it replaces (as front_code writes
          // it: the longest shared prefix), or extend the previous term.
          if (k == 0 || (shared < cur.size() &&
                         static_cast<unsigned char>(u[0]) <= static_cast<unsigned char>(cur[shared])))
            return "terms are not sorted";
          cur.resize(shared);
          cur.append(u, k);
        }
        const size_t i = b * kTermBlock + j;
        if (heads && i % kHeadEvery == 0 && heads[i / kHeadEvery] != term_head(cur.data(), cur.size()))
          return "term heads do not match the terms";
        // A filter that refused a term would hide it: every term must pass.
        if (filter && !filter_may_contain(filter, n_filter, hash_bytes(cur.data(), cur.size())))
          return "the term filter does not hold every term";
      }
      if (!r.at_end()) return "a term block holds more than its terms";
    }
  } else if (offset_base[nb >> kOffsetBlockShift] + offset_rel[nb] != blocks_len) {
    // (the last entry is compared, not used: its chunk is verified on first use)
    return "term block offsets do not end at the term data size";
  }
  base_blocks_ = blocks;
  base_blocks_len_ = blocks_len;
  base_off_ = off;
  base_off_.rel_check = &base_off_check_;
  base_heads_ = heads;
  base_filter_ = filter;
  base_filter_blocks_ = filter ? filter_blocks(n) : 0;
  base_n_ = n;
  base_nb_ = nb;
  base_filter_check_.reset(filter, base_filter_blocks_ * kFilterBlockWords * sizeof(uint64_t),
                           lazy ? filter_digests : nullptr, "term filter");
  base_blob_check_.reset(blocks, blocks_len, blocks_digests, "term blocks");
  base_off_check_.reset(offset_rel, (nb + 1) * sizeof(uint32_t), offset_digests, "term block offsets");
  return nullptr;
}

void Vocabulary::sorted_overlay(std::vector<OverlayKey>& keys) const {
  // Sorted by a big-endian key of the first 8 bytes, then the whole term on
  // ties: most comparisons never touch the bytes.
  const size_t added = offsets_.size() - 1;
  keys.resize(added);
  for (size_t i = 0; i < added; ++i) {
    const std::string_view t(arena_.data() + offsets_[i], offsets_[i + 1] - offsets_[i]);
    keys[i] = OverlayKey{term_head(t.data(), t.size()), t, static_cast<uint32_t>(base_n_ + i)};
  }
  std::sort(keys.begin(), keys.end());
}

void Vocabulary::sorted_order(std::vector<uint32_t>& order) const {
  const size_t n = size(), added = offsets_.size() - 1;
  order.resize(n);
  if (added == 0 || (base_n_ == 0 && overlay_ascending_)) {  // the base alone, or the overlay alone, is sorted
    for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(i);
    return;
  }
  std::vector<OverlayKey> keys;
  sorted_overlay(keys);
  // Merge: each added term goes before the first base term above it (none
  // equals it: a base term is never added to the overlay).  The base is
  // walked by blocks, a block passed over on its first term alone, and only
  // the block where an added term lands is decoded.
  size_t out = 0, pos = 0, b = 0;
  for (const OverlayKey& key : keys) {
    const char* s = key.term.data();
    const size_t len = key.term.size();
    size_t at = pos;
    if (base_nb_) {
      while (b + 1 < base_nb_ && compare_terms(block_first(b + 1), s, len) < 0) ++b;
      bool equal;
      at = std::max(pos, b * kTermBlock + block_seek(b, s, len, equal));
    }
    for (; pos < at; ++pos) order[out++] = static_cast<uint32_t>(pos);
    order[out++] = key.id;
  }
  for (; pos < base_n_; ++pos) order[out++] = static_cast<uint32_t>(pos);
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
    if (overlay_ascending_ && offsets_.size() > 1) {
      const size_t last = offsets_.size() - 2;
      const std::string_view prev(arena_.data() + offsets_[last], offsets_[last + 1] - offsets_[last]);
      overlay_ascending_ = prev < std::string_view(s, n);
    }
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
  arena_.assign(blob, blob + offsets[n]);
  offsets_.assign(offsets, offsets + n + 1);
  overlay_ascending_ = n <= 1;  // (not checked: sorted_order sorts)
  if (!index_overlay(true)) {
    clear();  // a duplicate term
    return false;
  }
  return true;
}

bool Vocabulary::index_overlay(bool check_duplicates) {
  const size_t n = offsets_.size() - 1;
  size_t nslots = 1024;
  while (nslots < 2 * n) nslots *= 2;
  slots_.assign(nslots, 0);
  mask_ = nslots - 1;
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
    const uint64_t h = hashes[id];
    size_t i;
    if (check_duplicates) {
      int64_t found;
      i = probe(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id], h, found);
      if (found >= 0) return false;
    } else {  // known distinct: the first free slot
      i = h & mask_;
      while (slots_[i]) i = (i + 1) & mask_;
    }
    slots_[i] = (h << 32) | (static_cast<uint64_t>(id) + 1);
  }
  return true;
}

void Vocabulary::absorb(Vocabulary& other, std::vector<uint32_t>& remap) {
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
  TermReader reader(&other);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view t = reader.get(static_cast<uint32_t>(i));
    remap[i] = intern(t.data(), t.size());
  }
}

void Vocabulary::absorb_sorted(const std::vector<Vocabulary*>& others, std::vector<std::vector<uint32_t>>& remaps) {
  if (size() != 0) throw std::logic_error("absorb_sorted needs an empty vocabulary");
  const size_t k = others.size();
  for (const Vocabulary* o : others)
    if (o->base_n_ != 0) throw std::logic_error("absorb_sorted takes overlays only");
  std::vector<std::vector<OverlayKey>> keys(k);
  {
    std::vector<std::exception_ptr> errors(k);
    auto sort_one = [&](size_t i) noexcept {
      try {
        others[i]->sorted_overlay(keys[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    };
    std::vector<std::thread> sorts;
    struct Joiner {  // every started thread is joined, whatever throws here
      std::vector<std::thread>& threads;
      ~Joiner() {
        for (auto& t : threads)
          if (t.joinable()) t.join();
      }
    } joiner{sorts};
    sorts.reserve(k);
    for (size_t i = 1; i < k; ++i) {
      try {
        sorts.emplace_back(sort_one, i);
      } catch (...) {  // no thread to spare: sorted here instead
        sort_one(i);
      }
    }
    if (k) sort_one(0);
    for (auto& t : sorts) t.join();
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }
  remaps.assign(k, {});
  size_t total = 0, bytes = 0;
  for (size_t i = 0; i < k; ++i) {
    remaps[i].resize(others[i]->size());
    total += others[i]->size();
    bytes += others[i]->arena_.size();
  }
  // Built aside and taken over only whole: a failure (no memory) leaves this vocabulary empty.
  std::vector<char> arena;
  std::vector<uint64_t> offsets(1, 0);
  arena.reserve(bytes);  // an upper bound (shared terms count once), reserved, not touched
  offsets.reserve(total + 1);
  // The merge appends each distinct term once, in byte order, comparing the keys' heads first.
  std::vector<size_t> pos(k, 0);
  for (;;) {
    const OverlayKey* least = nullptr;
    for (size_t i = 0; i < k; ++i)
      if (pos[i] < keys[i].size() && (!least || keys[i][pos[i]] < *least)) least = &keys[i][pos[i]];
    if (!least) break;
    if (offsets.size() - 1 >= 0xFFFFFFFEu) throw std::length_error("vocabulary is full");
    const uint32_t id = static_cast<uint32_t>(offsets.size() - 1);
    const OverlayKey at = *least;  // (the cursors move below)
    arena.insert(arena.end(), at.term.begin(), at.term.end());
    offsets.push_back(arena.size());
    for (size_t i = 0; i < k; ++i) {
      if (pos[i] < keys[i].size() && keys[i][pos[i]].same_term(at)) {
        remaps[i][keys[i][pos[i]].id] = id;
        ++pos[i];
      }
    }
  }
  arena_.swap(arena);
  offsets_.swap(offsets);
  overlay_ascending_ = true;
  try {
    index_overlay(false);  // every term distinct
  } catch (...) {
    clear();
    throw;
  }
  for (Vocabulary* o : others) o->clear();
}

}  // namespace codelex
