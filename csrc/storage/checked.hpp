// Byte regions of a mapped index that are verified lazily: each 64 KiB chunk
// against its stored digest the first time a reader touches it.
//
// Opening an index then costs no pass over its arrays, and a flipped byte is
// still always caught before it is used: every read of a checked region goes
// through ensure(), which throws CorruptIndex for a chunk that does not match
// (and for every later touch of it).  A region without digests is trusted (it
// was built in this process, or validated structurally when it was loaded).
// Digests are unkeyed: they say a chunk is what the file's writer wrote, so
// the loader passes them only for a file this user wrote (its header's MAC,
// codelex.persist.trust); anyone else's file is validated structurally.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace codelex {

constexpr size_t kCheckChunk = size_t{1} << 16;

// The digest of a chunk: a 64-bit, four-lane multiplicative hash of its bytes
// (any change of one or a few bytes changes it; not cryptographic).
uint64_t chunk_digest(const uint8_t* p, size_t n) noexcept;
// Number of digests for n bytes.
inline size_t chunk_count(size_t n) noexcept { return (n + kCheckChunk - 1) / kCheckChunk; }
// Digests of every kCheckChunk-byte chunk of [p, p + n) (the last may be short).
void chunk_digests(const uint8_t* p, size_t n, uint64_t* out) noexcept;

// Thrown when a checked chunk does not match its digest.  The message starts
// with "corrupt index:" (the binding turns it into IndexFormatError).
struct CorruptIndex : std::runtime_error {
  explicit CorruptIndex(const std::string& what) : std::runtime_error(what) {}
};

class CheckedRegion {
 public:
  CheckedRegion() = default;
  CheckedRegion(const CheckedRegion&) = delete;
  CheckedRegion& operator=(const CheckedRegion&) = delete;

  // Checks [data, data + bytes) against digests (chunk_count(bytes) of them,
  // borrowed; null = trusted).  name appears in errors.
  void reset(const void* data, size_t bytes, const uint64_t* digests, const char* name);
  // Throws CorruptIndex unless every chunk overlapping [begin, end) matches.
  void ensure(size_t begin, size_t end) const {
    if (!digests_ || begin >= end) return;
    for (size_t c = begin / kCheckChunk, last = (end - 1) / kCheckChunk; c <= last && c < n_chunks_; ++c)
      if (state_[c].load(std::memory_order_acquire) != kGood) verify(c);
  }
  void ensure_all() const { ensure(0, bytes_); }
  // Verifies the chunks not verified yet, in order, until stop is set; false
  // when stopped or a chunk does not match (never throws: the mismatch is
  // recorded, and thrown to whichever reader touches the chunk).
  bool verify_until(const std::atomic<bool>& stop) const noexcept;
  // Chunks verified so far, and in all.
  size_t verified_chunks() const noexcept;
  size_t chunks() const noexcept { return digests_ ? n_chunks_ : 0; }

 private:
  static constexpr uint8_t kUnknown = 0, kGood = 1, kBad = 2;
  void verify(size_t chunk) const;
  // Verifies chunk c if not done yet; its state (kGood or kBad).
  uint8_t check(size_t c) const noexcept;
  const uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
  const uint64_t* digests_ = nullptr;
  size_t n_chunks_ = 0;
  std::unique_ptr<std::atomic<uint8_t>[]> state_;
  const char* name_ = "";
};

}  // namespace codelex
