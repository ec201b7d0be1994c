// Term dictionary: interns token byte strings to dense uint32 ids.
//
// Two parts.  The base (optional) is a sorted dictionary borrowed from a
// mapped index, front-coded in blocks of kTermBlock terms (term_blocks.hpp)
// and searched in place: ids 0..base_size()-1 in byte order, nothing built or
// copied when it is installed.  A lookup narrows to one block by the heads
// and the blocks' first terms (stored whole), then decodes at most that
// block.  The overlay holds every term added since (ids from base_size() on)
// in a byte arena with offsets, found through open addressing with linear
// probing over a power-of-two slot table; base terms that edits intern are
// cached in the same table, so that re-interning them costs one probe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/checked.hpp"
#include "storage/offsets.hpp"
#include "text/term_blocks.hpp"

namespace codelex {

uint64_t hash_bytes(const char* s, size_t n) noexcept;

// Terms per head of a sorted base (a whole number of blocks).
constexpr size_t kHeadEvery = 64;
static_assert(kHeadEvery % kTermBlock == 0, "a head starts a block");
// A term's first 8 bytes, big-endian, zero-padded: ordered as the terms are.
inline uint64_t term_head(const char* s, size_t n) noexcept {
  uint64_t h = 0;
  for (size_t j = 0; j < 8; ++j) h = (h << 8) | (j < n ? static_cast<unsigned char>(s[j]) : 0u);
  return h;
}

// The term filter of a sorted base: a blocked Bloom filter (one 64-byte
// block per term, kFilterProbes bits set in it, about kFilterBitsPerTerm bits
// a term), so that a term absent from the base (most field terms of a query)
// is refused in one cache line instead of a bisection of the dictionary.
// Saved with the index: its bits depend on hash_bytes, which must not change
// without a format version.
constexpr size_t kFilterBlockWords = 8;
constexpr size_t kFilterBitsPerTerm = 8;
constexpr int kFilterProbes = 5;
inline size_t filter_blocks(size_t n_terms) noexcept {
  return std::max<size_t>(1, (n_terms * kFilterBitsPerTerm + 511) / 512);
}
inline size_t filter_block(uint64_t h, size_t n_blocks) noexcept {
  return static_cast<size_t>(((h >> 32) * static_cast<uint64_t>(n_blocks)) >> 32);
}
inline uint64_t filter_bits_seed(uint64_t h) noexcept { return (h & 0xFFFFFFFFu) * 0x9E3779B97F4A7C15ULL; }
// Fills words (filter_blocks(n) * kFilterBlockWords, zeroed) with the hashes of n terms.
void filter_add(uint64_t* words, size_t n_blocks, uint64_t h) noexcept;
bool filter_may_contain(const uint64_t* words, size_t n_blocks, uint64_t h) noexcept;

// An overlay term for sorting: a big-endian key of its first 8 bytes (term_head), the term, its id.
struct OverlayKey {
  uint64_t head;
  std::string_view term;
  uint32_t id;
  bool operator<(const OverlayKey& o) const noexcept { return head != o.head ? head < o.head : term < o.term; }
  bool same_term(const OverlayKey& o) const noexcept { return head == o.head && term == o.term; }
};

class Vocabulary {
 public:
  Vocabulary();

  // Returns the id of the term, adding it when new.
  uint32_t intern(const char* s, size_t n);
  // Returns the id of the term, or -1 when absent (no writes: readers may call it concurrently).
  int64_t find(const char* s, size_t n) const;
  // find(), remembering a base term it had to bisect for in the hash table, so
  // that the next lookup of it is one probe.  A writer: callers serialize it
  // with intern (the binding holds the vocabulary's lock for both).
  int64_t lookup(const char* s, size_t n);

  size_t size() const noexcept { return base_n_ + offsets_.size() - 1; }
  size_t base_size() const noexcept { return base_n_; }
  // The bytes of term id (< size()): a view of the overlay's arena, or of
  // scratch, which a base term is decoded into (a front-coded term has no
  // bytes of its own).  Valid until scratch or the vocabulary changes.  May
  // throw CorruptIndex for a base term whose block is corrupt.  Walks over
  // many terms use a TermReader, which decodes a run of ids incrementally.
  std::string_view term(uint32_t id, std::string& scratch) const {
    if (id < base_n_) {
      decode_base(id, scratch);
      return scratch;
    }
    id -= static_cast<uint32_t>(base_n_);
    return {arena_.data() + offsets_[id], static_cast<size_t>(offsets_[id + 1] - offsets_[id])};
  }
  size_t memory_bytes() const noexcept;
  // Total bytes of every term (reads every base block's term headers).
  size_t term_bytes() const;

  // Replaces the contents with n terms stored as blob[offsets[i]:offsets[i+1]]
  // (copied into the overlay).  Returns false (leaving the vocabulary empty)
  // when the offsets are not monotonic, exceed the blob, or a term is duplicated.
  bool assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n);
  // Replaces the contents with a sorted base of n front-coded terms
  // (term_blocks.hpp), borrowed (the caller keeps the arrays alive while this
  // vocabulary lives): blocks_len bytes of blocks and their term_blocks(n) + 1
  // offsets, packed (storage/offsets.hpp: offset_base and offset_rel).  With
  // digests (per kCheckChunk of each array) every chunk is verified when
  // first read, and every block is still decoded with bounds checks (a
  // malformed one throws CorruptIndex); without, the structure is validated
  // here in full: offsets monotonic inside the blocks, every block decoding
  // exactly to its end, terms strictly ascending.  Returns null, or a static
  // reason (the vocabulary is then empty).
  // heads (may be null) holds term_head() of every kHeadEvery-th term: a
  // bisection over it narrows each lookup to a few blocks first.
  // filter (may be null) is the base's term filter, filter_blocks(n) blocks,
  // verified lazily with filter_digests when the others are.
  const char* assign_sorted(const char* blocks, size_t blocks_len, const uint64_t* offset_base,
                            const uint32_t* offset_rel, size_t n, const uint64_t* blocks_digests,
                            const uint64_t* offset_digests, const uint64_t* heads = nullptr,
                            const uint64_t* filter = nullptr, const uint64_t* filter_digests = nullptr);
  // Verifies every chunk of the base now (throws CorruptIndex on a mismatch).
  void verify_base() const {
    base_blob_check_.ensure_all();
    base_off_check_.ensure_all();
    base_filter_check_.ensure_all();
  }
  // verify_base(), chunk by chunk until stop is set (see
  // CheckedRegion::verify_until); false when stopped or a chunk mismatched.
  // Readers may look terms up meanwhile.
  bool verify_base_until(const std::atomic<bool>& stop) const noexcept {
    return base_filter_check_.verify_until(stop) && base_off_check_.verify_until(stop) &&
           base_blob_check_.verify_until(stop);
  }
  // The ids of every term in byte order (identity when the overlay is empty):
  // the overlay's terms sorted, merged into the base, which is read block by
  // block (only the first terms of most blocks; no base term is copied).
  void sorted_order(std::vector<uint32_t>& order) const;
  // The overlay's terms as keys, in byte order.
  void sorted_overlay(std::vector<OverlayKey>& keys) const;
  // Base ids [first, last) of the terms that start with prefix.
  void base_prefix_range(const char* s, size_t n, size_t& first, size_t& last) const;
  // Appends to ids, in byte order, the base ids of the terms that start with
  // prefix and are words: ASCII lower-case letters only, min_len to max_len
  // long.  Runs of other terms are stepped over by bisection (every term
  // that shares a non-word prefix is skipped at once), so a prefix shared by
  // many identifiers (config_*) costs a few lookups, not a read of each.
  void base_words(const char* prefix, size_t n, size_t min_len, size_t max_len, std::vector<uint32_t>& ids) const;
  void clear();
  // Releases spare capacity (after a bulk build), keeping headroom for the
  // terms that edits add (an eighth of the terms, a 32nd of the table).
  void shrink_to_fit();
  // Interns every term of other; remap[i] is the id here of other's term i.
  void intern_all(const Vocabulary& other, std::vector<uint32_t>& remap);
  // intern_all, then other is emptied (a join into a vocabulary that holds
  // terms already; a fresh build's join is absorb_sorted).
  void absorb(Vocabulary& other, std::vector<uint32_t>& remap);
  // For an empty vocabulary: every term of others (overlays without a base), interned in byte order (a k-way
  // merge of their sorted orders, each sorted on a thread of its own), so that ids ascend with the terms and a
  // save needs no renumbering; remaps[k][i] is the id here of others[k]'s term i.  The others are emptied.
  void absorb_sorted(const std::vector<Vocabulary*>& others, std::vector<std::vector<uint32_t>>& remaps);

 private:
  friend class TermReader;
  void rehash(size_t slots);
  // Sizes the table for the overlay's terms and inserts every one (the base has none in the table); with
  // check_duplicates, false at a term met twice (the table is then partial), else the terms are known distinct.
  bool index_overlay(bool check_duplicates);
  // Base id of the term (whose hash_bytes is h), or -1.
  int64_t base_find(const char* s, size_t n, uint64_t h) const;
  // First base id whose term is not less than s; equal says whether it is s.
  size_t base_lower_bound(const char* s, size_t n, bool& equal) const;
  size_t base_lower_bound(const char* s, size_t n) const {
    bool equal;
    return base_lower_bound(s, n, equal);
  }
  size_t block_terms(size_t b) const noexcept { return std::min(kTermBlock, base_n_ - b * kTermBlock); }
  // A reader of block b's bytes, checked against the blocks' bounds and
  // digests (throws CorruptIndex).
  TermBlockReader open_block(size_t b) const;
  // Block b's first term, in place.
  std::string_view block_first(size_t b) const;
  // Position in block b of its first term not less than s (block_terms(b)
  // when none); equal says whether that term is s.
  size_t block_seek(size_t b, const char* s, size_t n, bool& equal) const;
  bool base_equals(uint32_t id, const char* s, size_t n) const;
  void decode_base(uint32_t id, std::string& out) const;
  [[noreturn]] static void malformed_block(size_t b);
  const char* base_blocks_ = nullptr;
  size_t base_blocks_len_ = 0;
  PackedOffsets base_off_;  // block offsets: term_blocks(base_n_) + 1
  const uint64_t* base_heads_ = nullptr;  // (n + kHeadEvery - 1) / kHeadEvery, or null
  size_t base_n_ = 0;
  size_t base_nb_ = 0;  // blocks
  const uint64_t* base_filter_ = nullptr;  // filter_blocks(base_n_) blocks, or null
  size_t base_filter_blocks_ = 0;
  CheckedRegion base_blob_check_, base_off_check_, base_filter_check_;
  std::vector<char> arena_;
  std::vector<uint64_t> offsets_;
  bool equals(uint32_t id, const char* s, size_t n) const;
  // Linear probe for the term with hash h: returns its slot and sets id, or
  // returns the empty slot where it belongs and sets id = -1.
  size_t probe(const char* s, size_t n, uint64_t h, int64_t& id) const;
  // Each slot packs (hash32 << 32) | (term id + 1); 0 = empty.  Keeping the
  // hash in the slot avoids a second cache miss per probe.
  std::vector<uint64_t> slots_;
  size_t count_ = 0;
  size_t mask_ = 0;
  // Whether the overlay's terms were added in byte order (sorted_order is then the identity without a base).
  bool overlay_ascending_ = true;
};

// Reads terms by id, decoding runs of increasing base ids incrementally (a
// term from the one before it) instead of each from its block's start: what
// walks over many terms use.  Borrows the vocabulary, which must not change
// while the reader is used.
class TermReader {
 public:
  explicit TermReader(const Vocabulary* v = nullptr) noexcept : v_(v) {}
  // The bytes of term id (< size()), valid until the next call.  May throw
  // CorruptIndex for a base term whose block is corrupt.
  std::string_view get(uint32_t id);

 private:
  const Vocabulary* v_;
  std::string cur_;
  size_t next_ = 0;        // the base id the reader decodes next (when block_ is open)
  size_t block_ = SIZE_MAX;  // the open block, or SIZE_MAX
  TermBlockReader reader_{nullptr, nullptr};
};

}  // namespace codelex
