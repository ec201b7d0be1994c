#include "vocabulary.hpp"

#include <cstring>

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
  uint64_t h = 0x9E3779B97F4A7C15ULL ^ (n * 0xff51afd7ed558ccdULL);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, s, 8);
    h = (h ^ mix(w)) * 0x9E3779B97F4A7C15ULL;
    s += 8;
    n -= 8;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, s, n);
    h = (h ^ mix(w ^ n)) * 0x9E3779B97F4A7C15ULL;
  }
  return mix(h);
}

Vocabulary::Vocabulary() { clear(); }

void Vocabulary::clear() {
  arena_.clear();
  offsets_.assign(1, 0);
  hashes_.clear();
  slots_.assign(1024, 0);
  mask_ = slots_.size() - 1;
}

size_t Vocabulary::memory_bytes() const noexcept {
  return arena_.capacity() + offsets_.capacity() * sizeof(uint64_t) + hashes_.capacity() * sizeof(uint32_t) +
         slots_.capacity() * sizeof(uint32_t);
}

void Vocabulary::rehash(size_t nslots) {
  slots_.assign(nslots, 0);
  mask_ = nslots - 1;
  for (uint32_t id = 0; id < hashes_.size(); ++id) {
    size_t i = hashes_[id] & mask_;
    while (slots_[i]) i = (i + 1) & mask_;
    slots_[i] = id + 1;
  }
}

int64_t Vocabulary::find(const char* s, size_t n) const noexcept {
  const uint32_t h = static_cast<uint32_t>(hash_bytes(s, n));
  size_t i = h & mask_;
  while (uint32_t slot = slots_[i]) {
    const uint32_t id = slot - 1;
    if (hashes_[id] == h) {
      const uint64_t off = offsets_[id];
      if (offsets_[id + 1] - off == n && std::memcmp(arena_.data() + off, s, n) == 0) return id;
    }
    i = (i + 1) & mask_;
  }
  return -1;
}

uint32_t Vocabulary::intern(const char* s, size_t n) {
  const uint32_t h = static_cast<uint32_t>(hash_bytes(s, n));
  size_t i = h & mask_;
  while (uint32_t slot = slots_[i]) {
    const uint32_t id = slot - 1;
    if (hashes_[id] == h) {
      const uint64_t off = offsets_[id];
      if (offsets_[id + 1] - off == n && std::memcmp(arena_.data() + off, s, n) == 0) return id;
    }
    i = (i + 1) & mask_;
  }
  const uint32_t id = static_cast<uint32_t>(hashes_.size());
  arena_.insert(arena_.end(), s, s + n);
  offsets_.push_back(arena_.size());
  hashes_.push_back(h);
  slots_[i] = id + 1;
  if (hashes_.size() * 2 > slots_.size()) rehash(slots_.size() * 2);  // load <= 0.5
  return id;
}

bool Vocabulary::assign(const char* blob, size_t blob_len, const uint64_t* offsets, size_t n) {
  clear();
  if (n == 0) return offsets == nullptr || offsets[0] == 0;
  if (offsets[0] != 0) return false;
  for (size_t i = 0; i < n; ++i) {
    if (offsets[i + 1] < offsets[i] || offsets[i + 1] > blob_len) {
      clear();
      return false;
    }
  }
  arena_.assign(blob, blob + offsets[n]);
  offsets_.assign(offsets, offsets + n + 1);
  hashes_.resize(n);
  for (size_t id = 0; id < n; ++id) {
    hashes_[id] = static_cast<uint32_t>(hash_bytes(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]));
  }
  size_t nslots = 1024;
  while (nslots < 2 * n) nslots *= 2;
  rehash(nslots);
  // Reject duplicates: find() must return the id itself for every term.
  for (size_t id = 0; id < n; ++id) {
    const std::string_view t = term(static_cast<uint32_t>(id));
    if (find(t.data(), t.size()) != static_cast<int64_t>(id)) {
      clear();
      return false;
    }
  }
  return true;
}

}  // namespace codelex
