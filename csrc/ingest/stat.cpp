#include "ingest/stat.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#if !defined(_WIN32)
#include <cerrno>
#include <sys/stat.h>
#endif

namespace codelex {

bool batch_stat_supported() noexcept {
#if defined(_WIN32)
  return false;
#else
  return true;
#endif
}

bool stat_paths(const std::string& root, const char* blob, size_t blob_len, size_t n, int64_t* mtime, int64_t* size,
                uint8_t* kind, int threads) {
  // Validate the blob first: exactly n NUL-terminated strings.
  std::vector<size_t> begin_of;
  begin_of.reserve(n + 1);
  if (n) begin_of.push_back(0);
  for (size_t i = 0; i < blob_len; ++i)
    if (blob[i] == '\0' && i + 1 < blob_len) begin_of.push_back(i + 1);
  if (begin_of.size() != n || (n && (blob_len == 0 || blob[blob_len - 1] != '\0'))) return false;
  begin_of.push_back(blob_len);
#if defined(_WIN32)
  for (size_t i = 0; i < n; ++i) {
    mtime[i] = size[i] = -1;
    kind[i] = static_cast<uint8_t>(StatKind::kError);
  }
  (void)root, (void)threads;
  return true;
#else
  // Work in chunks handed out by an atomic counter: directory locality is kept
  // within a chunk (paths come sorted), and a slow file system spreads evenly.
  constexpr size_t kChunk = 256;
  std::atomic<size_t> next{0};
  auto work = [&]() {
    std::string path = root;
    path.push_back('/');
    const size_t base = path.size();
    for (;;) {
      const size_t start = next.fetch_add(kChunk);
      if (start >= n) return;
      const size_t end = std::min(n, start + kChunk);
      for (size_t i = start; i < end; ++i) {
        path.resize(base);
        path.append(blob + begin_of[i], begin_of[i + 1] - begin_of[i] - 1);
        struct stat st;
        if (::lstat(path.c_str(), &st) != 0) {
          mtime[i] = size[i] = -1;
          kind[i] = static_cast<uint8_t>(errno == ENOENT || errno == ENOTDIR ? StatKind::kMissing : StatKind::kError);
          continue;
        }
#if defined(__APPLE__)
        mtime[i] = static_cast<int64_t>(st.st_mtimespec.tv_sec) * 1000000000 + st.st_mtimespec.tv_nsec;
#else
        mtime[i] = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
#endif
        size[i] = static_cast<int64_t>(st.st_size);
        kind[i] = static_cast<uint8_t>(S_ISREG(st.st_mode)   ? StatKind::kFile
                                       : S_ISDIR(st.st_mode) ? StatKind::kDir
                                       : S_ISLNK(st.st_mode) ? StatKind::kSymlink
                                                             : StatKind::kOther);
      }
    }
  };
  const int t = std::max(1, std::min(threads, static_cast<int>((n + kChunk - 1) / kChunk)));
  std::vector<std::thread> pool;
  for (int k = 1; k < t; ++k) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  return true;
#endif
}

}  // namespace codelex
