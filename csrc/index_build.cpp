#include "index_build.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace codelex {

void SegmentBuilder::on_token(uint32_t line, uint32_t term) {
  if (term >= line_stamp_.size()) {
    const size_t n = std::max<size_t>(vocab_.size(), term + 1);
    line_stamp_.resize(n, 0);
    doc_stamp_.resize(n, 0);
  }
  ++cur_len_;
  if (line != cur_line_) {
    cur_line_ = line;
    if (++line_serial_ == 0) {  // wrapped: forget every stamp
      std::fill(line_stamp_.begin(), line_stamp_.end(), 0);
      line_serial_ = 1;
    }
  }
  if (line_stamp_[term] == line_serial_) return;
  line_stamp_[term] = line_serial_;
  trip_term_.push_back(term);
  trip_doc_.push_back(cur_doc_);
  trip_line_.push_back(line);
  if (doc_stamp_[term] != doc_serial_) {
    doc_stamp_[term] = doc_serial_;
    fwd_term_.push_back(term);
  }
}

void SegmentBuilder::end_document() {
  if (cur_len_ > std::numeric_limits<uint32_t>::max()) throw std::length_error("document has too many tokens");
  doc_len_.push_back(static_cast<uint32_t>(cur_len_));
  std::sort(fwd_term_.begin() + fwd_ptr_.back(), fwd_term_.end());
  fwd_ptr_.push_back(static_cast<int64_t>(fwd_term_.size()));
}

void SegmentBuilder::begin_document() {
  if (doc_len_.size() >= std::numeric_limits<uint32_t>::max()) throw std::length_error("too many documents");
  cur_doc_ = static_cast<uint32_t>(doc_len_.size());
  cur_len_ = 0;
  cur_line_ = 0;
  if (++doc_serial_ == 0) {  // wrapped: forget every stamp
    std::fill(doc_stamp_.begin(), doc_stamp_.end(), 0);
    doc_serial_ = 1;
  }
}

uint32_t SegmentBuilder::add_document(const char* data, size_t n) {
  begin_document();
  tokenizer_.tokenize(data, n, [this](uint32_t line, uint32_t term) { on_token(line, term); });
  end_document();
  return cur_doc_;
}

void SegmentBuilder::finish(BuiltSegment& out) {
  const size_t n_terms = vocab_.size();
  const size_t n_trip = trip_term_.size();
  // Counting sort of the triples by term; stable, so each term's triples stay
  // in (doc, line) order.
  std::vector<int64_t> start(n_terms + 1, 0);
  for (uint32_t t : trip_term_) ++start[t + 1];
  for (size_t t = 0; t < n_terms; ++t) start[t + 1] += start[t];
  std::vector<uint32_t> sdoc(n_trip), sline(n_trip);
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n_trip; ++i) {
      const int64_t k = fill[trip_term_[i]]++;
      sdoc[k] = trip_doc_[i];
      sline[k] = trip_line_[i];
    }
  }
  std::vector<uint32_t>().swap(trip_term_);
  std::vector<uint32_t>().swap(trip_doc_);
  std::vector<uint32_t>().swap(trip_line_);

  out.term_ptr.assign(n_terms + 1, 0);
  out.term_line_ptr.assign(n_terms + 1, 0);
  out.post_doc.clear();
  out.post_tf.clear();
  out.post_line_off.clear();
  out.line_data.clear();
  out.post_doc.reserve(fwd_term_.size());
  out.post_tf.reserve(fwd_term_.size());
  out.post_line_off.reserve(fwd_term_.size());
  out.line_data.reserve(n_trip + n_trip / 4);
  for (size_t t = 0; t < n_terms; ++t) {
    const int64_t line_base = static_cast<int64_t>(out.line_data.size());
    out.term_line_ptr[t] = line_base;
    int64_t i = start[t];
    const int64_t e = start[t + 1];
    while (i < e) {
      const uint32_t d = sdoc[i];
      out.post_doc.push_back(d);
      const int64_t rel = static_cast<int64_t>(out.line_data.size()) - line_base;
      if (rel > std::numeric_limits<uint32_t>::max()) throw std::length_error("line data of one term exceeds 4 GiB");
      out.post_line_off.push_back(static_cast<uint32_t>(rel));
      uint32_t prev = 0, tf = 0;
      while (i < e && sdoc[i] == d) {
        put_varint(out.line_data, sline[i] - prev);
        prev = sline[i];
        ++tf;
        ++i;
      }
      out.post_tf.push_back(tf);
    }
    out.term_ptr[t + 1] = static_cast<int64_t>(out.post_doc.size());
  }
  out.term_line_ptr[n_terms] = static_cast<int64_t>(out.line_data.size());
  out.line_data.shrink_to_fit();
  vocab_.shrink_to_fit();
  out.doc_len.swap(doc_len_);
  out.fwd_ptr.swap(fwd_ptr_);
  out.fwd_term.swap(fwd_term_);
  doc_len_.clear();
  fwd_ptr_.assign(1, 0);
  fwd_term_.clear();
}

}  // namespace codelex
