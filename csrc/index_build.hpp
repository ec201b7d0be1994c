// Bulk construction of the base segment: documents in, CSR posting arrays out.
//
// Postings are one per (term, document) with tf = the number of distinct lines
// of the document that contain the term.  The lines themselves are kept apart
// (delta + LEB128 varint bytes) so that scoring never reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tokenizer.hpp"
#include "vocabulary.hpp"

namespace codelex {

struct BuiltSegment {
  std::vector<int64_t> term_ptr;       // n_terms + 1: postings of term t are [term_ptr[t], term_ptr[t+1])
  std::vector<uint32_t> post_doc;      // ascending within a term
  std::vector<uint32_t> post_tf;       // distinct lines
  std::vector<int64_t> term_line_ptr;  // n_terms + 1: byte range of term t in line_data
  std::vector<uint32_t> post_line_off; // byte offset of a posting's lines, relative to term_line_ptr[t]
  std::vector<uint8_t> line_data;      // varint line deltas, tf per posting
  std::vector<uint32_t> doc_len;       // token occurrences per document (repeats counted)
  std::vector<int64_t> fwd_ptr;        // n_docs + 1: distinct terms of document d are fwd_term[fwd_ptr[d]...]
  std::vector<uint32_t> fwd_term;
};

// Accumulates documents, then lays them out as a segment.
class SegmentBuilder {
 public:
  explicit SegmentBuilder(Vocabulary& vocab) : vocab_(vocab), tokenizer_(vocab) {}

  // Tokenizes and adds a document; returns its id (0, 1, ... in call order).
  uint32_t add_document(const char* data, size_t n);
  size_t n_docs() const noexcept { return doc_len_.size(); }
  // Lays out the segment over all vocabulary terms and resets the builder.
  void finish(BuiltSegment& out);

 private:
  void begin_document();
  void on_token(uint32_t line, uint32_t term);
  void end_document();

  Vocabulary& vocab_;
  DocumentTokenizer tokenizer_;
  // (term, doc, line) triples, one per distinct token per line.
  std::vector<uint32_t> trip_term_, trip_doc_, trip_line_;
  std::vector<uint32_t> doc_len_;
  std::vector<int64_t> fwd_ptr_{0};
  std::vector<uint32_t> fwd_term_;
  // Stamps instead of per-line sets: line_stamp_[t] == current line serial
  // means "already seen on this line".
  std::vector<uint32_t> line_stamp_, doc_stamp_;
  uint32_t line_serial_ = 0, doc_serial_ = 0, cur_line_ = 0;
  uint32_t cur_doc_ = 0;
  uint64_t cur_len_ = 0;
};

// Appends x as an unsigned LEB128 varint.
inline void put_varint(std::vector<uint8_t>& out, uint32_t x) {
  while (x >= 0x80) {
    out.push_back(static_cast<uint8_t>(x | 0x80));
    x >>= 7;
  }
  out.push_back(static_cast<uint8_t>(x));
}

}  // namespace codelex
