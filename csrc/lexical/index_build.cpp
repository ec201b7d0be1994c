#include "lexical/index_build.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace codelex {

void SegmentBuilder::on_token(uint32_t line, uint32_t term) {
  ++cur_len_;
  if (!lines_.first_on_line(line, term)) return;
  trip_term_.push_back(term);
  trip_doc_.push_back(cur_doc_);
  trip_line_.push_back(line);
}

void SegmentBuilder::on_field_token(int field, uint32_t line, uint32_t term) {
  ++cur_field_len_[field - 1];
  if (!lines_.first_on_line(line, term)) return;
  trip_term_.push_back(term);
  trip_doc_.push_back(cur_doc_);
  trip_line_.push_back(line);
}

void SegmentBuilder::end_document() {
  if (cur_len_ > std::numeric_limits<uint32_t>::max()) throw std::length_error("document has too many tokens");
  doc_len_.push_back(static_cast<uint32_t>(cur_len_));
  for (int f = 0; f < kExtraFields; ++f) {
    if (cur_field_len_[f] > std::numeric_limits<uint32_t>::max()) throw std::length_error("field has too many tokens");
    field_len_.push_back(static_cast<uint32_t>(cur_field_len_[f]));
  }
}

void SegmentBuilder::begin_document() {
  if (doc_len_.size() >= std::numeric_limits<uint32_t>::max()) throw std::length_error("too many documents");
  cur_doc_ = static_cast<uint32_t>(doc_len_.size());
  cur_len_ = 0;
  for (auto& x : cur_field_len_) x = 0;
  lines_.reset();
}

uint32_t SegmentBuilder::add_document(const char* data, size_t n, const char* path, size_t path_n,
                                      const DefinitionList* defs) {
  begin_document();
  tokenizer_.tokenize(data, n, [this](uint32_t line, uint32_t term) { on_token(line, term); });
  tokenizer_.tokenize_fields(path, path_n, data, n, defs,
                             [this](int field, uint32_t line, uint32_t term) { on_field_token(field, line, term); });
  end_document();
  return cur_doc_;
}

void SegmentBuilder::finish(BatchSegment& out) {
  const size_t n_trip = trip_term_.size();
  // The batch's distinct terms, ascending, and a dense index for each.
  out.terms.clear();
  for (uint32_t t : trip_term_) {
    if (t >= term_slot_.size()) term_slot_.resize(std::max<size_t>(t + 1, term_slot_.size() * 2), 0);
    if (!term_slot_[t]) {
      term_slot_[t] = 1;
      out.terms.push_back(t);
    }
  }
  std::sort(out.terms.begin(), out.terms.end());
  const size_t n_terms = out.terms.size();
  for (size_t i = 0; i < n_terms; ++i) term_slot_[out.terms[i]] = static_cast<uint32_t>(i + 1);
  // Counting sort of the triples by term; stable, so each term's triples stay
  // in (doc, line) order.
  std::vector<int64_t> start(n_terms + 1, 0);
  for (uint32_t t : trip_term_) ++start[term_slot_[t]];
  for (size_t i = 0; i < n_terms; ++i) start[i + 1] += start[i];
  std::vector<uint32_t> sdoc(n_trip), sline(n_trip);
  {
    std::vector<int64_t> fill(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n_trip; ++i) {
      const int64_t k = fill[term_slot_[trip_term_[i]] - 1]++;
      sdoc[k] = trip_doc_[i];
      sline[k] = trip_line_[i];
    }
  }
  for (uint32_t t : out.terms) term_slot_[t] = 0;
  trip_term_.clear();  // capacity kept for the next batch
  trip_doc_.clear();
  trip_line_.clear();

  out.term_ptr.assign(n_terms + 1, 0);
  out.term_line_ptr.assign(n_terms + 1, 0);
  out.post_doc.clear();
  out.post_tf.clear();
  out.tf_big.clear();
  out.lines.clear();
  out.lines.reserve_nibbles(n_trip + n_trip / 2);
  for (size_t i = 0; i < n_terms; ++i) {
    if (out.lines.nibbles > UINT32_MAX) throw std::length_error("too many lines in one batch");
    out.term_line_ptr[i] = static_cast<uint32_t>(out.lines.nibbles);
    int64_t k = start[i];
    const int64_t e = start[i + 1];
    while (k < e) {
      const uint32_t d = sdoc[k];
      out.post_doc.push_back(d);
      uint32_t prev = 0, tf = 0;
      while (k < e && sdoc[k] == d) {
        out.lines.put(sline[k] - prev);
        prev = sline[k];
        ++tf;
        ++k;
      }
      if (tf >= kTfEscape) {
        if (out.post_doc.size() > UINT32_MAX) throw std::length_error("too many postings in one batch");
        out.tf_big.emplace_back(static_cast<uint32_t>(out.post_doc.size() - 1), tf);
        out.post_tf.push_back(static_cast<uint8_t>(kTfEscape));
      } else {
        out.post_tf.push_back(static_cast<uint8_t>(tf));
      }
    }
    if (out.post_doc.size() > UINT32_MAX) throw std::length_error("too many postings in one batch");
    out.term_ptr[i + 1] = static_cast<uint32_t>(out.post_doc.size());
  }
  if (out.lines.nibbles > UINT32_MAX) throw std::length_error("too many lines in one batch");
  out.term_line_ptr[n_terms] = static_cast<uint32_t>(out.lines.nibbles);
  out.doc_len.swap(doc_len_);
  doc_len_.clear();
  out.field_len.swap(field_len_);
  field_len_.clear();
}

void concat_batches(std::vector<BatchSegment>& batches, const std::vector<const std::vector<uint32_t>*>& remaps,
                   size_t n_terms, BuiltSegment& out) {
  if (remaps.size() != batches.size()) throw std::invalid_argument("one remap per batch");
  auto global = [&remaps](size_t c, uint32_t t) -> uint32_t {
    const std::vector<uint32_t>* remap = remaps[c];
    if (!remap) return t;
    if (t >= remap->size()) throw std::out_of_range("batch term outside its vocabulary");
    return (*remap)[t];
  };
  for (size_t c = 0; c < batches.size(); ++c)
    for (uint32_t t : batches[c].terms) n_terms = std::max<size_t>(n_terms, static_cast<size_t>(global(c, t)) + 1);
  // Sizes per term over all batches, then each batch's blocks scattered into
  // place: batches in document order, so each term's postings stay ascending.
  out.term_ptr.assign(n_terms + 1, 0);
  std::vector<int64_t> term_line_ptr(n_terms + 1, 0);
  size_t n_docs = 0;
  for (size_t c = 0; c < batches.size(); ++c) {
    const BatchSegment& bt = batches[c];
    for (size_t i = 0; i < bt.terms.size(); ++i) {
      const uint32_t g = global(c, bt.terms[i]);
      out.term_ptr[g + 1] += static_cast<int64_t>(bt.term_ptr[i + 1]) - bt.term_ptr[i];
      term_line_ptr[g + 1] += static_cast<int64_t>(bt.term_line_ptr[i + 1]) - bt.term_line_ptr[i];
    }
    n_docs += bt.doc_len.size();
  }
  if (n_docs > std::numeric_limits<uint32_t>::max()) throw std::length_error("too many documents");
  for (size_t t = 0; t < n_terms; ++t) {
    out.term_ptr[t + 1] += out.term_ptr[t];
    term_line_ptr[t + 1] += term_line_ptr[t];
  }
  const int64_t n_post = out.term_ptr[n_terms];
  out.post_doc.resize(static_cast<size_t>(n_post));
  out.post_tf.resize(static_cast<size_t>(n_post));
  out.tf_big_pos.clear();
  out.tf_big_val.clear();
  out.line_ckpt.assign(line_checkpoints(n_post), 0);
  out.lines.clear();
  out.lines.nibbles = static_cast<uint64_t>(term_line_ptr[n_terms]);
  out.lines.bytes.assign(static_cast<size_t>((out.lines.nibbles + 1) / 2), 0);  // zeroed: runs are OR-ed in
  out.line_ckpt.back() = out.lines.nibbles;
  out.doc_len.clear();
  out.doc_len.reserve(n_docs);
  out.field_len.clear();
  out.field_len.reserve(n_docs * kExtraFields);
  // The offsets themselves serve as fill cursors (no copies: they hold one
  // entry per term, millions on a large tree); term_ptr is shifted back after.
  std::vector<int64_t>& fill_post = out.term_ptr;
  std::vector<int64_t>& fill_line = term_line_ptr;
  std::vector<std::pair<uint64_t, uint32_t>> big;
  uint32_t doc_base = 0;
  for (size_t ci = 0; ci < batches.size(); ++ci) {
    BatchSegment& c = batches[ci];
    size_t next_big = 0;  // the batch's escaped tfs, met in posting order
    const uint8_t* const line_data = c.lines.bytes.data();
    const uint64_t line_end = c.lines.nibbles;
    for (size_t i = 0; i < c.terms.size(); ++i) {
      const uint32_t t = global(ci, c.terms[i]);
      const int64_t s = c.term_ptr[i], e = c.term_ptr[i + 1];
      const int64_t p0 = fill_post[t];
      const int64_t ls = c.term_line_ptr[i], le = c.term_line_ptr[i + 1];
      // Absolute position in the output's line data of this block's first line nibble.
      const int64_t line0 = fill_line[t] - ls;
      // The lines are walked to each posting that takes a checkpoint only, the deltas before it skipped
      // in one run (16 units a word), not posting by posting.
      uint64_t lines = static_cast<uint64_t>(ls);
      uint64_t behind = 0;  // deltas of the postings since `lines`
      for (int64_t p = s; p < e; ++p) {
        const int64_t q = p0 + (p - s);
        out.post_doc[q] = c.post_doc[p] + doc_base;
        uint32_t tf = c.post_tf[p];
        out.post_tf[q] = static_cast<uint8_t>(tf);
        if (tf == kTfEscape) {
          if (next_big >= c.tf_big.size() || c.tf_big[next_big].first != p)
            throw std::logic_error("batch tf overflow pairs out of step");
          tf = c.tf_big[next_big++].second;
          big.emplace_back(static_cast<uint64_t>(q), tf);
        }
        if (q % kLineCheckpoint == 0) {
          if (behind) lines = skip_line_deltas(line_data, lines, line_end, behind);  // (a batch's own: well-formed)
          if (lines == kNoLinePos) throw std::logic_error("malformed batch line data");
          behind = 0;
          out.line_ckpt[q / kLineCheckpoint] = static_cast<uint64_t>(line0 + static_cast<int64_t>(lines));
        }
        behind += tf;
      }
      fill_post[t] += e - s;
      copy_line_nibbles(out.lines.bytes.data(), static_cast<uint64_t>(fill_line[t]), line_data,
                        static_cast<uint64_t>(ls), static_cast<uint64_t>(le - ls));
      fill_line[t] += le - ls;
    }
    out.doc_len.insert(out.doc_len.end(), c.doc_len.begin(), c.doc_len.end());
    out.field_len.insert(out.field_len.end(), c.field_len.begin(), c.field_len.end());
    doc_base += static_cast<uint32_t>(c.doc_len.size());
    c = BatchSegment();  // free the batch now
  }
  // Each cursor now holds its term's end, which is the next term's start.
  for (size_t t = n_terms; t > 0; --t) out.term_ptr[t] = out.term_ptr[t - 1];
  out.term_ptr[0] = 0;
  std::vector<int64_t>().swap(term_line_ptr);
  std::sort(big.begin(), big.end());
  out.tf_big_pos.reserve(big.size());
  out.tf_big_val.reserve(big.size());
  for (const auto& [pos, val] : big) {
    out.tf_big_pos.push_back(pos);
    out.tf_big_val.push_back(val);
  }
}

SegmentView view_of(const BuiltSegment& s) {
  SegmentView v;
  // (int64 and uint64 may alias; built offsets are never negative)
  v.term_ptr.plain = reinterpret_cast<const uint64_t*>(s.term_ptr.data());
  v.n_terms = s.term_ptr.size() - 1;
  v.post_doc = s.post_doc.data();
  v.post_tf = s.post_tf.data();
  v.tf_big_pos = s.tf_big_pos.data();
  v.tf_big_val = s.tf_big_val.data();
  v.n_tf_big = s.tf_big_pos.size();
  v.line_ckpt.plain = s.line_ckpt.data();
  v.line_data = s.lines.bytes.data();
  v.line_bytes = s.lines.bytes.size();
  v.line_nibbles = s.lines.nibbles;
  return v;
}

uint32_t SegmentView::big_tf(int64_t p) const noexcept {
  const uint64_t* it = std::lower_bound(tf_big_pos, tf_big_pos + n_tf_big, static_cast<uint64_t>(p));
  return it != tf_big_pos + n_tf_big && *it == static_cast<uint64_t>(p) ? tf_big_val[it - tf_big_pos] : kTfEscape;
}

uint64_t SegmentView::lines(int64_t p) const {
  const int64_t k = p / kLineCheckpoint;
  uint64_t start, stop;
  line_ckpt.pair(static_cast<size_t>(k), start, stop);
  stop = std::min<uint64_t>(stop, line_nibbles);
  if (checks) {
    checks->line_data.ensure(start / 2, (stop + 1) / 2);
    checks->post_tf.ensure(k * kLineCheckpoint, p + 1);
  }
  // Skip the lines of the postings before p: as many deltas as their tfs add up to.
  uint64_t need = 0;
  for (int64_t j = k * kLineCheckpoint; j < p; ++j) need += tf(j);
  const uint64_t at = skip_line_deltas(line_data, start, stop, need);
  return at != kNoLinePos ? at : line_nibbles;  // (validated segments never take the fallback)
}

void SegmentView::verify_all() const {
  if (!checks) return;
  checks->term_ptr.ensure_all();
  checks->post_doc.ensure_all();
  checks->post_tf.ensure_all();
  checks->line_ckpt.ensure_all();
  checks->line_data.ensure_all();
}

void DocumentEncoder::encode(DocumentTokenizer& tokenizer, const char* data, size_t n, const char* path, size_t path_n,
                             const DefinitionList* defs, EncodedDocument& out) {
  pairs_.clear();
  out.terms.clear();
  out.tf.clear();
  out.line_off.clear();
  out.lines.clear();
  uint64_t length = 0;
  uint64_t field_length[kExtraFields] = {0, 0, 0};
  lines_.reset();
  tokenizer.tokenize(data, n, [&](uint32_t line, uint32_t term) {
    ++length;
    if (lines_.first_on_line(line, term)) pairs_.push_back((static_cast<uint64_t>(term) << 32) | line);
  });
  tokenizer.tokenize_fields(path, path_n, data, n, defs, [&](int field, uint32_t line, uint32_t term) {
    ++field_length[field - 1];
    if (lines_.first_on_line(line, term)) pairs_.push_back((static_cast<uint64_t>(term) << 32) | line);
  });
  if (length > std::numeric_limits<uint32_t>::max()) throw std::length_error("document has too many tokens");
  out.length = length;
  for (int f = 0; f < kExtraFields; ++f) {
    if (field_length[f] > std::numeric_limits<uint32_t>::max()) throw std::length_error("field has too many tokens");
    out.field_length[f] = static_cast<uint32_t>(field_length[f]);
  }
  std::sort(pairs_.begin(), pairs_.end());
  size_t i = 0;
  while (i < pairs_.size()) {
    const uint32_t term = static_cast<uint32_t>(pairs_[i] >> 32);
    out.terms.push_back(term);
    out.line_off.push_back(static_cast<uint32_t>(out.lines.nibbles));
    uint32_t prev = 0, tf = 0;
    for (; i < pairs_.size() && static_cast<uint32_t>(pairs_[i] >> 32) == term; ++i) {
      const uint32_t line = static_cast<uint32_t>(pairs_[i]);
      out.lines.put(line - prev);
      prev = line;
      ++tf;
    }
    out.tf.push_back(tf);
  }
  out.lines.align();
  if (out.lines.nibbles > std::numeric_limits<uint32_t>::max()) throw std::length_error("document line data exceeds 2 GiB");
}

namespace {
// Packed offsets read through no check must be canonical and monotonic.
bool offsets_valid(const PackedOffsets& o, size_t n) noexcept {
  return packed_offsets_valid(o, n);
}
}  // namespace

const char* validate_segment(const SegmentView& seg, size_t n_docs) {
  if (seg.term_ptr.empty() || seg.line_ckpt.empty()) return "missing term offsets";
  if (!seg.post_doc) {
    if (const char* err = validate_for_blocks(seg.packed_doc)) return err;
  }
  if (!offsets_valid(seg.term_ptr, seg.n_terms + 1)) return "posting offsets are not monotonic";
  if (seg.term_ptr[0] != 0) return "term offsets do not start at 0";
  const uint64_t n_post_u = seg.term_ptr[seg.n_terms];
  if (n_post_u > static_cast<uint64_t>(INT64_MAX)) return "posting offsets are not monotonic";
  const int64_t n_post = static_cast<int64_t>(n_post_u);
  if (!seg.post_doc && seg.packed_doc.n != n_post_u) return "packed document ids and postings disagree in number";
  if (!offsets_valid(seg.line_ckpt, line_checkpoints(n_post))) return "line checkpoints are not monotonic";
  for (size_t t = 0; t < seg.n_terms; ++t) {
    const int64_t s = static_cast<int64_t>(seg.term_ptr[t]), e = static_cast<int64_t>(seg.term_ptr[t + 1]);
    if (e < s || e > n_post) return "posting offsets are not monotonic";
    uint32_t prev = 0;
    for (int64_t p = s; p < e; ++p) {
      const uint32_t d = seg.doc(p);
      if (d >= n_docs) return "posting document id out of range";
      if (p > s && d <= prev) return "posting document ids not ascending";
      prev = d;
    }
  }
  size_t escapes = 0;
  for (int64_t p = 0; p < n_post; ++p) {
    if (seg.post_tf[p] == 0) return "posting with zero tf";
    escapes += seg.post_tf[p] == kTfEscape;
  }
  if (escapes != seg.n_tf_big) return "tf overflow pairs do not match their markers";
  for (size_t i = 0; i < seg.n_tf_big; ++i) {
    const uint64_t p = seg.tf_big_pos[i];
    if (p >= static_cast<uint64_t>(n_post) || (i && p <= seg.tf_big_pos[i - 1]) || seg.post_tf[p] != kTfEscape)
      return "tf overflow positions are out of range or unordered";
    if (seg.tf_big_val[i] < kTfEscape) return "tf overflow value is small";
  }
  // Every posting's lines: well-formed deltas, at the checkpoints' positions, ending at the stream's end.
  const uint64_t n_nib = seg.line_nibbles;
  if (n_nib / 2 + (n_nib & 1) != seg.line_bytes) return "line data size does not match its nibble count";
  if ((n_nib & 1) && line_nibble(seg.line_data, n_nib) != 0) return "line data padding is not 0";
  uint64_t q = 0;
  for (int64_t p = 0; p < n_post; ++p) {
    if (p % kLineCheckpoint == 0 && seg.line_ckpt[p / kLineCheckpoint] != q)
      return "line checkpoint does not match the line data";
    const int64_t span = line_span(seg.line_data, q, n_nib, seg.tf(p));
    if (span < 0) return "malformed or truncated posting lines";
    q += static_cast<uint64_t>(span);
  }
  if (q != n_nib) return "line data has trailing nibbles";
  if (seg.line_ckpt[line_checkpoints(n_post) - 1] != n_nib) return "last line checkpoint is not the line data size";
  return nullptr;
}

void pack_doc_ids(const SegmentView& seg, ForBlocksData& out) {
  const int64_t n = seg.n_postings();
  if (seg.post_doc) {
    pack_for_blocks(seg.post_doc, static_cast<size_t>(n), out);
    return;
  }
  seg.verify_all();
  std::vector<uint32_t> docs(static_cast<size_t>(n));
  for (int64_t p = 0; p < n; ++p) docs[static_cast<size_t>(p)] = seg.doc(p);
  pack_for_blocks(docs.data(), docs.size(), out);
}

void permute_terms(const SegmentView& seg, const std::vector<uint32_t>& order, BuiltSegment& out) {
  seg.verify_all();
  const size_t n_terms = order.size();
  const int64_t n_post = seg.n_postings();
  const uint8_t* data = seg.line_data;
  const uint64_t end = seg.line_nibbles;
  // Where each source term's lines start: one sequential pass (lines follow posting order).
  std::vector<uint64_t> line_start(seg.n_terms + 1, 0);
  {
    uint64_t q = 0;
    for (size_t t = 0; t < seg.n_terms; ++t) {
      line_start[t] = q;
      const SegmentView::Range r = seg.postings(static_cast<uint32_t>(t));
      for (int64_t p = r.begin; p < r.end; ++p) {
        q = skip_line_deltas(data, q, end, seg.tf(p));
        if (q == kNoLinePos) throw std::logic_error("malformed line data");
      }
    }
    line_start[seg.n_terms] = q;
  }
  out.term_ptr.assign(n_terms + 1, 0);
  out.post_doc.resize(static_cast<size_t>(n_post));
  out.post_tf.resize(static_cast<size_t>(n_post));
  out.tf_big_pos.clear();
  out.tf_big_val.clear();
  out.line_ckpt.assign(line_checkpoints(n_post), 0);
  out.lines.clear();
  out.lines.nibbles = end;
  out.lines.bytes.assign(seg.line_bytes, 0);  // zeroed: runs are OR-ed in
  int64_t q_post = 0;
  uint64_t q_line = 0;
  for (size_t i = 0; i < n_terms; ++i) {
    const uint32_t t = order[i];
    if (t < seg.n_terms) {
      const SegmentView::Range r = seg.postings(t);
      const int64_t s = r.begin, e = r.end;
      const uint64_t ls = line_start[t], le = line_start[t + 1];
      if (e > s) {  // (an empty range's pointers may be null: UB for memcpy)
        for (int64_t p = s; p < e; ++p) out.post_doc[static_cast<size_t>(q_post + (p - s))] = seg.doc(p);
        std::memcpy(out.post_tf.data() + q_post, seg.post_tf + s, static_cast<size_t>(e - s));
      }
      copy_line_nibbles(out.lines.bytes.data(), q_line, data, ls, le - ls);
      // Checkpoints that fall inside this term: walk its lines up to each.
      int64_t next = (q_post + kLineCheckpoint - 1) / kLineCheckpoint * kLineCheckpoint;
      uint64_t src = ls;
      for (int64_t p = s; next < q_post + (e - s); ++p) {
        const int64_t at = q_post + (p - s);
        if (at == next) {
          out.line_ckpt[static_cast<size_t>(at / kLineCheckpoint)] = q_line + (src - ls);
          next += kLineCheckpoint;
        }
        src = skip_line_deltas(data, src, end, seg.tf(p));
        if (src == kNoLinePos) throw std::logic_error("malformed line data");
      }
      for (int64_t p = s; p < e; ++p) {
        if (seg.post_tf[p] == kTfEscape) {
          out.tf_big_pos.push_back(static_cast<uint64_t>(q_post + (p - s)));
          out.tf_big_val.push_back(seg.big_tf(p));
        }
      }
      q_post += e - s;
      q_line += le - ls;
    }
    out.term_ptr[i + 1] = q_post;
  }
  out.line_ckpt.back() = q_line;
}

}  // namespace codelex
