#include "storage/checked.hpp"

#include <algorithm>
#include <cstring>

namespace codelex {

namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL, kP2 = 0xC2B2AE3D27D4EB4FULL, kP3 = 0x165667B19E3779F9ULL;
inline uint64_t rotl(uint64_t x, int r) noexcept { return (x << r) | (x >> (64 - r)); }
inline uint64_t load64(const uint8_t* p) noexcept {
  uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
inline uint64_t round(uint64_t acc, uint64_t w) noexcept { return rotl(acc + w * kP2, 31) * kP1; }
inline uint64_t avalanche(uint64_t h) noexcept {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}
}  // namespace

uint64_t chunk_digest(const uint8_t* p, size_t n) noexcept {
  // Four independent lanes keep the multiplier pipelines busy (several GB/s).
  uint64_t a = kP1 + kP2, b = kP2, c = 0, d = 0 - kP1;
  const uint8_t* q = p;
  for (; n - (q - p) >= 32; q += 32) {
    a = round(a, load64(q));
    b = round(b, load64(q + 8));
    c = round(c, load64(q + 16));
    d = round(d, load64(q + 24));
  }
  uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + static_cast<uint64_t>(n);
  for (; n - (q - p) >= 8; q += 8) h = rotl(h ^ round(0, load64(q)), 27) * kP1 + kP3;
  uint64_t tail = 0;
  const size_t rest = n - (q - p);
  if (rest) {
    std::memcpy(&tail, q, rest);
    h = rotl(h ^ round(0, tail ^ (static_cast<uint64_t>(rest) << 56)), 27) * kP1 + kP3;
  }
  return avalanche(h);
}

void chunk_digests(const uint8_t* p, size_t n, uint64_t* out) noexcept {
  for (size_t c = 0, k = chunk_count(n); c < k; ++c) {
    const size_t begin = c * kCheckChunk;
    out[c] = chunk_digest(p + begin, std::min(kCheckChunk, n - begin));
  }
}

void CheckedRegion::reset(const void* data, size_t bytes, const uint64_t* digests, const char* name) {
  data_ = static_cast<const uint8_t*>(data);
  bytes_ = bytes;
  digests_ = digests;
  name_ = name;
  n_chunks_ = chunk_count(bytes);
  state_.reset(digests && n_chunks_ ? new std::atomic<uint8_t>[n_chunks_] : nullptr);
  for (size_t c = 0; state_ && c < n_chunks_; ++c) state_[c].store(kUnknown, std::memory_order_relaxed);
  if (!state_) digests_ = nullptr;
}

uint8_t CheckedRegion::check(size_t c) const noexcept {
  // Two readers may verify the same chunk at once: both compute the same answer.
  uint8_t s = state_[c].load(std::memory_order_acquire);
  if (s == kUnknown) {
    const size_t begin = c * kCheckChunk;
    s = chunk_digest(data_ + begin, std::min(kCheckChunk, bytes_ - begin)) == digests_[c] ? kGood : kBad;
    state_[c].store(s, std::memory_order_release);
  }
  return s;
}

bool CheckedRegion::verify_until(const std::atomic<bool>& stop) const noexcept {
  for (size_t c = 0; digests_ && c < n_chunks_; ++c) {
    if (stop.load(std::memory_order_acquire)) return false;
    if (check(c) != kGood) return false;
  }
  return true;
}

void CheckedRegion::verify(size_t c) const {
  const uint8_t s = check(c);
  if (s == kBad)
    throw CorruptIndex(std::string("corrupt index: checksum mismatch in ") + name_ + " (bytes " +
                       std::to_string(c * kCheckChunk) + "+" + std::to_string(kCheckChunk) + "); rebuild it");
}

size_t CheckedRegion::verified_chunks() const noexcept {
  size_t k = 0;
  for (size_t c = 0; state_ && c < n_chunks_; ++c) k += state_[c].load(std::memory_order_relaxed) == kGood;
  return k;
}

}  // namespace codelex
