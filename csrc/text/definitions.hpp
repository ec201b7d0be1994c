// A light definition scanner: the names a file defines, line by line, for
// any language (the ``defs`` field of the code ranking).  The rules are
// those of src/codelex/_reference/definitions.py, its executable
// specification; tests compare the two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace codelex {

struct DefinitionName {
  uint32_t line;   // 1-based
  uint32_t begin;  // byte offsets of the name in the document
  uint32_t end;
};

// Appends the definitions of a document (UTF-8 bytes) to out.  go selects
// the Go rules (const/var/type declarations and blocks).
void scan_definitions(const char* data, size_t n, bool go, std::vector<DefinitionName>& out);

}  // namespace codelex
