// Term dictionary: interns token byte strings to dense uint32 ids.
//
// Open addressing with linear probing over a power-of-two slot table; the
// terms live in one byte arena with an offsets array, which is also the
// persisted form (see index_format in the Python package).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace codelex {

uint64_t hash_bytes(const char* s, size_t n) noexcept;

class Vocabulary {
 public:
  Vocabulary();

  // Returns the id of the term, adding it when new.
  uint32_t intern(const char* s, size_t n);
  // Returns the id of the term, or -1 when absent.
  int64_t find(const char* s, size_t n) const noexcept;

  size_t size() const noexcept { return offsets_.size() - 1; }
  std::string_view term(uint32_t id) const noexcept {
    return {arena_.data() + offsets_[id], static_cast<size_t>(offsets_[id + 1] - offsets_[id])};
  }
  const std::vector<char>& arena() const noexcept { return arena_; }
  const std::vector<uint64_t>& offsets() const noexcept { return offsets_; }
  size_t memory_bytes() const noexcept;

  // Replaces the contents with n terms stored as blob[offsets[i]:offsets[i+1]].
  // Returns false (leaving the vocabulary empty) when the offsets are not
  // monotonic, exceed the blob, or a term is duplicated.
  bool assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n);
  void clear();
  // Releases spare capacity (after a bulk build).
  void shrink_to_fit();
  // Interns every term of other; remap[i] is the id here of other's term i.
  void intern_all(const Vocabulary& other, std::vector<uint32_t>& remap);

 private:
  void rehash(size_t slots);
  std::vector<char> arena_;
  std::vector<uint64_t> offsets_;
  bool equals(uint32_t id, const char* s, size_t n) const noexcept;
  // Linear probe for the term with hash h: returns its slot and sets id, or
  // returns the empty slot where it belongs and sets id = -1.
  size_t probe(const char* s, size_t n, uint64_t h, int64_t& id) const noexcept;
  // Each slot packs (hash32 << 32) | (term id + 1); 0 = empty.  Keeping the
  // hash in the slot avoids a second cache miss per probe.
  std::vector<uint64_t> slots_;
  size_t count_ = 0;
  size_t mask_ = 0;
};

}  // namespace codelex
