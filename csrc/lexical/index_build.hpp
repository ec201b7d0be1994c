// Bulk construction of the base segment: documents in, CSR posting arrays out.
//
// Postings are one per (term, document) with tf = the number of distinct lines
// of the document that contain the term.  The lines themselves are kept apart
// (deltas as nibble varints: lexical/line_lists.hpp) so that scoring never
// reads them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

#include "lexical/line_lists.hpp"
#include "storage/checked.hpp"
#include "storage/for_blocks.hpp"
#include "storage/offsets.hpp"
#include "text/tokenizer.hpp"
#include "text/vocabulary.hpp"

namespace codelex {

// Postings per line checkpoint: the nibble position of every 16th posting's
// lines is stored (half a byte per posting); any other posting's lines are
// at most 15 postings' line lists past one, skipped word-at-a-time.
constexpr int64_t kLineCheckpoint = 16;
// The largest base whose per-posting line offsets are derived (512 KiB of them): about a millisecond, which
// the first query after a load pays. A larger base finds a posting's lines from its checkpoint (at most 15
// postings' line lists away): the stdlib's 3M postings took 14-20 ms of its first query for ~10% on later
// ones.
constexpr int64_t kLineStartsMax = int64_t{1} << 17;
// A posting's tf is one byte; 255 means "in the overflow pairs".
constexpr uint32_t kTfEscape = 255;

// The lazily verified regions of a mapped base (see storage/checked.hpp).
struct SegmentChecks {
  CheckedRegion term_ptr, post_doc, post_tf, line_ckpt, line_data;
};

// Read-only view of a segment's arrays (owned by a BuiltSegment, or borrowed
// from a mapped file).  Readers go through postings() and lines(), which
// verify what they hand out when the segment is checked lazily.
struct SegmentView;

// A position in a segment's document ids, as a random-access iterator (the
// ids may be bit-packed: see SegmentView::doc).
struct DocIter {
  using iterator_category = std::random_access_iterator_tag;
  using value_type = uint32_t;
  using difference_type = int64_t;
  using pointer = const uint32_t*;
  using reference = uint32_t;
  const SegmentView* seg = nullptr;
  int64_t p = 0;
  inline uint32_t operator*() const noexcept;
  uint32_t operator[](int64_t k) const noexcept { return *(*this + k); }
  DocIter& operator++() noexcept { ++p; return *this; }
  DocIter operator++(int) noexcept { DocIter t = *this; ++p; return t; }
  DocIter& operator--() noexcept { --p; return *this; }
  DocIter& operator+=(int64_t k) noexcept { p += k; return *this; }
  DocIter& operator-=(int64_t k) noexcept { p -= k; return *this; }
  friend DocIter operator+(DocIter a, int64_t k) noexcept { a.p += k; return a; }
  friend DocIter operator-(DocIter a, int64_t k) noexcept { a.p -= k; return a; }
  friend int64_t operator-(const DocIter& a, const DocIter& b) noexcept { return a.p - b.p; }
  friend bool operator==(const DocIter& a, const DocIter& b) noexcept { return a.p == b.p; }
  friend bool operator!=(const DocIter& a, const DocIter& b) noexcept { return a.p != b.p; }
  friend bool operator<(const DocIter& a, const DocIter& b) noexcept { return a.p < b.p; }
  friend bool operator<=(const DocIter& a, const DocIter& b) noexcept { return a.p <= b.p; }
  friend bool operator>(const DocIter& a, const DocIter& b) noexcept { return a.p > b.p; }
  friend bool operator>=(const DocIter& a, const DocIter& b) noexcept { return a.p >= b.p; }
};

struct SegmentView {
  PackedOffsets term_ptr;  // n_terms + 1 posting offsets
  size_t n_terms = 0;
  // The postings' documents: plain (a segment built or merged here), or,
  // when null, in frame-of-reference blocks (a saved one: a third the size).
  const uint32_t* post_doc = nullptr;
  ForBlocks packed_doc;
  uint32_t doc(int64_t p) const noexcept { return post_doc ? post_doc[p] : packed_doc.get(static_cast<size_t>(p)); }
  DocIter docs(int64_t p) const noexcept { return DocIter{this, p}; }
  // The first posting of [begin, end) (one term's: ascending documents)
  // whose document is >= d, searched from begin outwards (cheap when near,
  // as a cursor's next target mostly is).  Packed ids: begin's block first;
  // then the minima of the blocks wholly inside the range (each starts with
  // its minimum), galloped and bisected; then the stretch before one of them.
  int64_t lower_bound(int64_t begin, int64_t end, uint32_t d) const noexcept {
    if (post_doc) return std::lower_bound(post_doc + begin, post_doc + end, d) - post_doc;
    if (begin >= end) return end;
    const int64_t head = std::min<int64_t>(end, ((begin >> kForShift) + 1) << kForShift);
    const int64_t in_head =
        static_cast<int64_t>(packed_doc.lower_bound_in_block(static_cast<size_t>(begin), static_cast<size_t>(head), d));
    if (in_head < head || head == end) return in_head;
    // The answer lies past begin's block.  Blocks [f0, f1) are wholly inside.
    const int64_t f0 = head >> kForShift, f1 = end >> kForShift;
    const uint32_t* mins = packed_doc.block_min;
    int64_t a = f0, step = 1;  // mins[a - 1] < d is known (or a == f0)
    int64_t b = f0;
    while (b < f1 && mins[b] < d) {
      a = b + 1;
      b = std::min<int64_t>(f1, b + step);
      step <<= 1;
    }
    b = std::lower_bound(mins + a, mins + b, d) - mins;  // first whole block starting >= d (f1: none)
    const int64_t lo = b > f0 ? (b - 1) << kForShift : head;
    const int64_t hi = b < f1 ? b << kForShift : end;
    // [lo, hi) spans one block, or two when it ends in the range's partial last block.
    const int64_t split = std::min<int64_t>(hi, ((lo >> kForShift) + 1) << kForShift);
    const size_t at = packed_doc.lower_bound_in_block(static_cast<size_t>(lo), static_cast<size_t>(split), d);
    if (static_cast<int64_t>(at) < split || split == hi) return static_cast<int64_t>(at);
    return static_cast<int64_t>(packed_doc.lower_bound_in_block(static_cast<size_t>(split), static_cast<size_t>(hi), d));
  }
  // f(p, doc) for every posting p of [begin, end), in order: packed ids are
  // decoded a block's run at a time (a third of the cost of one at a time).
  template <class F>
  void for_each_doc(int64_t begin, int64_t end, F&& f) const {
    if (post_doc) {
      for (int64_t p = begin; p < end; ++p) f(p, post_doc[p]);
      return;
    }
    uint32_t run[kForBlock];
    for (int64_t p = begin; p < end;) {
      const int64_t stop = std::min<int64_t>(end, ((p >> kForShift) + 1) << kForShift);
      packed_doc.decode_run(static_cast<size_t>(p), static_cast<size_t>(stop - p), run);
      for (int64_t q = p; q < stop; ++q) f(q, run[q - p]);
      p = stop;
    }
  }
  const uint8_t* post_tf = nullptr;      // distinct lines, kTfEscape = see tf_big_*
  const uint64_t* tf_big_pos = nullptr;  // ascending posting indices of the escaped tfs
  const uint32_t* tf_big_val = nullptr;
  size_t n_tf_big = 0;
  PackedOffsets line_ckpt;  // line_checkpoints(n_postings) nibble positions, the last = line_nibbles
  const uint8_t* line_data = nullptr;   // line deltas (line_lists.hpp), tf per posting, in posting order
  size_t line_bytes = 0;                // (line_nibbles + 1) / 2
  uint64_t line_nibbles = 0;
  const SegmentChecks* checks = nullptr;  // null: every array is trusted

  struct Range {
    int64_t begin, end;
  };
  // The postings of term t (< n_terms), their doc and tf bytes verified.
  Range postings(uint32_t t) const {
    uint64_t a, b;
    term_ptr.pair(t, a, b);
    const Range r{static_cast<int64_t>(a), static_cast<int64_t>(b)};
    if (checks && r.end > r.begin) {
      ensure_docs(r);
      checks->post_tf.ensure(r.begin, r.end);
    }
    return r;
  }
  void ensure_docs(const Range& r) const {
    if (post_doc)
      checks->post_doc.ensure(r.begin * sizeof(uint32_t), r.end * sizeof(uint32_t));
    else
      packed_doc.ensure(static_cast<size_t>(r.begin), static_cast<size_t>(r.end));
  }
  // The postings of term t with only their documents verified (tfs unread).
  Range doc_postings(uint32_t t) const {
    uint64_t a, b;
    term_ptr.pair(t, a, b);
    const Range r{static_cast<int64_t>(a), static_cast<int64_t>(b)};
    if (checks && r.end > r.begin) ensure_docs(r);
    return r;
  }
  int64_t n_postings() const { return static_cast<int64_t>(term_ptr[n_terms]); }
  uint32_t tf(int64_t p) const noexcept {
    const uint32_t v = post_tf[p];
    return v != kTfEscape ? v : big_tf(p);
  }
  uint32_t big_tf(int64_t p) const noexcept;
  // The nibble position of posting p's lines (verified); its tf deltas follow.
  uint64_t lines(int64_t p) const;
  // Verifies every lazily checked array (throws CorruptIndex on a mismatch).
  void verify_all() const;
};

inline uint32_t DocIter::operator*() const noexcept { return seg->doc(p); }

inline size_t line_checkpoints(int64_t n_postings) noexcept {
  return static_cast<size_t>((n_postings + kLineCheckpoint - 1) / kLineCheckpoint) + 1;
}

struct BuiltSegment {
  std::vector<int64_t> term_ptr;       // n_terms + 1: postings of term t are [term_ptr[t], term_ptr[t+1])
  std::vector<uint32_t> post_doc;      // ascending within a term
  std::vector<uint8_t> post_tf;        // distinct lines, kTfEscape = see tf_big_*
  std::vector<uint64_t> tf_big_pos;
  std::vector<uint32_t> tf_big_val;
  std::vector<uint64_t> line_ckpt;     // see SegmentView
  LineWriter lines;                    // line deltas, tf per posting, in posting order
  std::vector<uint32_t> doc_len;       // token occurrences per document (repeats counted)
  std::vector<uint32_t> field_len;     // n_docs * kExtraFields: dir, name, defs token counts per document

  // Appends a posting whose lines the caller appends to `lines` next.
  void append_posting(uint32_t doc, uint32_t tf) {
    const size_t p = post_doc.size();
    if (p % kLineCheckpoint == 0) line_ckpt.push_back(lines.nibbles);
    post_doc.push_back(doc);
    if (tf >= kTfEscape) {
      post_tf.push_back(static_cast<uint8_t>(kTfEscape));
      tf_big_pos.push_back(p);
      tf_big_val.push_back(tf);
    } else {
      post_tf.push_back(static_cast<uint8_t>(tf));
    }
  }
  // After the last append: the closing checkpoint.
  void close_checkpoints() { line_ckpt.push_back(lines.nibbles); }
};

SegmentView view_of(const BuiltSegment& s);

// Tells whether a token is the first of its term on the current line, in O(1):
// serial stamps per term instead of a set per line.  Feed tokens in line order.
class LineDeduper {
 public:
  bool first_on_line(uint32_t line, uint32_t term) {
    if (term >= stamp_.size()) stamp_.resize(std::max<size_t>(term + 1, stamp_.size() * 2), 0);
    if (line != line_) {
      line_ = line;
      next_serial();
    }
    if (stamp_[term] == serial_) return false;
    stamp_[term] = serial_;
    return true;
  }
  // Starts afresh (a new document may begin on the line number the last one ended on).
  void reset() {
    line_ = 0;
    next_serial();
  }

 private:
  void next_serial() {
    if (++serial_ == 0) {  // wrapped: forget every stamp
      std::fill(stamp_.begin(), stamp_.end(), 0);
      serial_ = 1;
    }
  }
  std::vector<uint32_t> stamp_;
  uint32_t serial_ = 0, line_ = 0;
};

// LineDeduper's answers (the same, token for token) from a table sized by the
// distinct terms of a line rather than by the vocabulary: the per-edit
// encoder's, whose terms are ids of a vocabulary of millions.
class SparseLineDeduper {
 public:
  SparseLineDeduper() { next_serial(); }
  bool first_on_line(uint32_t line, uint32_t term) {
    if (line != line_) {
      line_ = line;
      next_serial();
    }
    for (size_t i = slot_of(term);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.serial != serial_) {  // empty for this serial: the term is new on the line
        s = Slot{term, serial_};
        if (++count_ * 2 > slots_.size()) grow();
        return true;
      }
      if (s.term == term) return false;
    }
  }
  void reset() {
    line_ = 0;
    next_serial();
  }

 private:
  struct Slot {
    uint32_t term, serial;
  };
  size_t slot_of(uint32_t term) const noexcept { return (term * 0x9E3779B1u) >> shift_; }
  void next_serial() {
    count_ = 0;
    if (slots_.empty()) slots_.assign(size_t{1} << (32 - shift_), Slot{0, 0});
    if (++serial_ == 0) {  // wrapped: forget every slot
      std::fill(slots_.begin(), slots_.end(), Slot{0, 0});
      serial_ = 1;
    }
  }
  void grow() {  // twice the slots, the current serial's terms kept
    std::vector<Slot> old(slots_.size() * 2, Slot{0, 0});
    old.swap(slots_);
    --shift_;
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.serial == serial_)
        for (size_t i = slot_of(s.term);; i = (i + 1) & mask_)
          if (slots_[i].serial != serial_) {
            slots_[i] = s;
            break;
          }
  }
  std::vector<Slot> slots_;
  unsigned shift_ = 32 - 8;  // 256 slots to start with
  size_t mask_ = 255;
  size_t count_ = 0;
  uint32_t serial_ = 0, line_ = 0;
};

// The segment of a batch of consecutive documents, over the terms it uses
// only (sparse), with batch-local document ids.  Batches are built in parallel
// and concatenated into one BuiltSegment.
struct BatchSegment {
  std::vector<uint32_t> terms;          // distinct term ids, ascending
  // Batch-local offsets are 32-bit (a batch that would pass 2^32 postings or line nibbles is refused): a
  // tree's batches hold tens of millions of (batch, term) pairs until they are joined.
  std::vector<uint32_t> term_ptr;       // terms.size() + 1
  std::vector<uint32_t> term_line_ptr;  // terms.size() + 1 nibble positions
  std::vector<uint32_t> post_doc;       // batch-local, ascending within a term
  std::vector<uint8_t> post_tf;         // kTfEscape = see tf_big (the batches of a build are all held at once)
  std::vector<std::pair<uint32_t, uint32_t>> tf_big;  // (posting, tf) of the escaped tfs, ascending
  LineWriter lines;                     // each posting's tf deltas, in posting order
  std::vector<uint32_t> doc_len;
  std::vector<uint32_t> field_len;      // n_docs * kExtraFields
};

// Accumulates documents, then lays them out as a batch segment.  Not
// thread-safe: parallel builds give each thread its own builder and
// vocabulary, and the batches' term ids are remapped when they are joined.
class SegmentBuilder {
 public:
  explicit SegmentBuilder(Vocabulary& vocab) : tokenizer_(vocab) {}

  // Tokenizes and adds a document with its extra fields (from path and
  // defs, or the definition scanner when defs is null); returns its id
  // (0, 1, ... in call order).
  uint32_t add_document(const char* data, size_t n, const char* path, size_t path_n, const DefinitionList* defs);
  size_t n_docs() const noexcept { return doc_len_.size(); }
  // Lays out the documents added so far and resets the builder for the next batch.
  void finish(BatchSegment& out);

 private:
  void begin_document();
  void on_token(uint32_t line, uint32_t term);
  void on_field_token(int field, uint32_t line, uint32_t term);
  void end_document();

  DocumentTokenizer tokenizer_;
  // (term, doc, line) triples, one per distinct token per line.
  std::vector<uint32_t> trip_term_, trip_doc_, trip_line_;
  std::vector<uint32_t> doc_len_;
  std::vector<uint32_t> field_len_;  // kExtraFields per document
  uint64_t cur_field_len_[kExtraFields] = {0, 0, 0};
  LineDeduper lines_;
  std::vector<uint32_t> term_slot_;  // term -> 1 + index among the batch's terms (0 outside finish)
  uint32_t cur_doc_ = 0;
  uint64_t cur_len_ = 0;
};

// Concatenates batches (in document order) into one dense segment.  remaps[c] maps batch c's term ids to the output's (null:
// the same ids); n_terms is at least the output vocabulary size.  Frees each
// batch as soon as it is copied.
void concat_batches(std::vector<BatchSegment>& batches, const std::vector<const std::vector<uint32_t>*>& remaps,
                   size_t n_terms, BuiltSegment& out);

// One document's postings, ready to be added to a live index: its distinct
// terms (ascending) with tf (distinct lines) and their lines' deltas.
struct EncodedDocument {
  std::vector<uint32_t> terms;
  std::vector<uint32_t> tf;
  std::vector<uint32_t> line_off;  // nibble position of term i's lines in `lines`
  LineWriter lines;                // byte-aligned at the end (a delta index appends whole bytes)
  uint64_t length = 0;             // token occurrences (repeats counted)
  uint32_t field_length[kExtraFields] = {0, 0, 0};  // dir, name, defs token counts
};

// Tokenizes single documents into EncodedDocument form (the per-edit path).
// Owns scratch space sized by the vocabulary; not thread-safe.
class DocumentEncoder {
 public:
  // The caller holds whatever lock protects tokenizer's vocabulary.  The
  // extra fields come from path and defs (the scanner's when null).
  void encode(DocumentTokenizer& tokenizer, const char* data, size_t n, const char* path, size_t path_n,
              const DefinitionList* defs, EncodedDocument& out);

 private:
  SparseLineDeduper lines_;
  std::vector<uint64_t> pairs_;  // (term << 32) | line, one per distinct token per line
};

// Checks every structural invariant that reading relies on (monotonic
// offsets, document ids in range and ascending within a term, tf escapes
// matching their overflow pairs, every posting's lines well-formed deltas at
// the checkpoints' positions, an odd stream's padding 0).  Returns null when valid, else a static
// description.  (A lazily checked segment needs none of this: a verified
// chunk holds what a save wrote, and saves write validated segments only.
// That holds for a file this user wrote only: the digests are unkeyed, so the
// loader hands them over only for a file whose header carries this user's MAC
// (codelex.persist.trust); any other file comes without digests and is
// validated here in full.)
const char* validate_segment(const SegmentView& seg, size_t n_docs);

// The same segment with its terms renumbered: term order[i] becomes term i
// (order is a permutation of the terms).  Postings, tfs and lines move with
// their terms; documents keep their ids.
void permute_terms(const SegmentView& seg, const std::vector<uint32_t>& order, BuiltSegment& out);

// Appends the documents of postings [begin, end) through for_each_doc (tests).
inline void for_each_doc_into(const SegmentView& seg, int64_t begin, int64_t end, std::vector<uint32_t>& out) {
  seg.for_each_doc(begin, end, [&](int64_t, uint32_t d) { out.push_back(d); });
}

// The segment's document ids in frame-of-reference blocks (what a save writes).
void pack_doc_ids(const SegmentView& seg, ForBlocksData& out);


}  // namespace codelex
