// Batch lstat: the (mtime_ns, size, kind) of many paths under one root, on
// a few threads, so that checking a large tree for changes costs about one
// system call per file and no interpreter work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace codelex {

// What lstat said about a path.
enum class StatKind : uint8_t { kMissing = 0, kFile = 1, kDir = 2, kSymlink = 3, kOther = 4, kError = 5 };

// True where batch lstat is implemented (POSIX); elsewhere the caller stats itself.
bool batch_stat_supported() noexcept;

// For each of the n root-relative paths in blob (n NUL-terminated strings,
// '/'-separated, blob_len bytes in all): mtime[i] (ns since the epoch),
// size[i] and kind[i].  Runs on `threads` threads (at least 1).  Paths are
// joined to root with '/'.  Returns false (nothing written) when blob does
// not hold exactly n strings.
bool stat_paths(const std::string& root, const char* blob, size_t blob_len, size_t n, int64_t* mtime, int64_t* size,
                uint8_t* kind, int threads);

}  // namespace codelex
