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

// The scanner's rule sets, by id: the indexes of codelex.languages.DEFINITION_RULES
// (definitions.cpp checks the names against the table generated from it).
enum DefinitionRules : uint8_t {
  kGenericRules = 0,  // any language
  kGoRules = 1,       // and Go's const/var/type declarations and blocks
};
constexpr uint8_t kDefinitionRuleCount = 2;

// The rule set of a document, from its path: by the lowercased extension of
// its last segment, as the language registry says (a generated table).
uint8_t definition_rules_of(const char* path, size_t n);

// Appends the definitions of a document (UTF-8 bytes) to out, read with
// rule set `rules` (an id below kDefinitionRuleCount; others read as generic).
void scan_definitions(const char* data, size_t n, uint8_t rules, std::vector<DefinitionName>& out);

}  // namespace codelex
