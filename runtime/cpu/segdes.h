// Segment descriptors in C++: a non-owning view, an owning descriptor, and descriptor algebra
// (lengths <-> offsets, flatten, partition, append, per-element segment ids and head flags).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ndp/runtime.h"
#include "status.h"

namespace ndp::runtime {

/// A non-owning descriptor (see Note [Segment descriptors] in ndp/runtime.h).
class SegView {
 public:
  SegView() : d_(ndp_segdes_regular(0, 0)) {}
  SegView(const ndp_segdes& d) : d_(d) {}  // NOLINT: views convert freely from the C record

  static SegView flat(int64_t n) { return SegView(ndp_segdes_flat(n)); }
  static SegView regular(int64_t count, int64_t length) { return SegView(ndp_segdes_regular(count, length)); }

  int64_t count() const { return d_.count; }
  int64_t total() const { return d_.total; }
  bool is_regular() const { return d_.offsets == nullptr; }
  int64_t regular_length() const { return d_.regular_length; }
  const int64_t* offsets() const { return d_.offsets; }
  int64_t begin(int64_t k) const { return is_regular() ? k * d_.regular_length : d_.offsets[k]; }
  int64_t end(int64_t k) const { return is_regular() ? (k + 1) * d_.regular_length : d_.offsets[k + 1]; }
  int64_t length(int64_t k) const { return is_regular() ? d_.regular_length : d_.offsets[k + 1] - d_.offsets[k]; }
  const ndp_segdes& c() const { return d_; }

 private:
  ndp_segdes d_;
};

/// An owning descriptor. Regular descriptors stay regular (no arrays) until made otherwise.
class Segments {
 public:
  Segments() = default;
  static Segments regular(int64_t count, int64_t length);
  /// Takes a lengths vector that is already known to be non-negative.
  static Segments from_valid_lengths(std::vector<int64_t> lengths);

  SegView view() const;
  int64_t count() const { return view().count(); }
  int64_t total() const { return view().total(); }
  const std::vector<int64_t>& lengths() const { return lengths_; }  // empty when regular
  const std::vector<int64_t>& offsets() const { return offsets_; }  // count + 1 entries

 private:
  bool regular_ = true;
  int64_t count_ = 0, length_ = 0;
  std::vector<int64_t> lengths_, offsets_;
};

/// MAKE_SEGDES: a descriptor from a lengths vector; a negative length fails with its position.
Status make_segments(std::span<const int64_t> lengths, Segments& out);

/// offsets[0] = 0, offsets[k+1] = offsets[k] + lengths[k]; offsets has lengths.size() + 1
/// entries. Checks that no length is negative.
Status offsets_from_lengths(std::span<const int64_t> lengths, std::span<int64_t> offsets);

/// LENGTHS: the lengths vector of any descriptor (regular ones too); out has s.count() entries.
Status lengths_of(SegView s, std::span<int64_t> out);

/// flatten of one nesting level: `inner` cuts the data into inner segments, `outer` groups
/// inner segments; out[k] = total length of the inner segments in outer segment k.
Status flatten_lengths(SegView outer, SegView inner, std::span<int64_t> out);

/// partition, segmented: segment k of the data (`data`) is cut by the counts of segment k of
/// `counts` (described by `count_segs`). Fails unless every count is non-negative and the counts
/// of segment k sum to data.length(k). On success `inner` describes the new inner segments
/// (the counts, back to back).
Status partition_segments(SegView data, std::span<const int64_t> counts, SegView count_segs, Segments& inner);

/// The lengths of a per-segment append: out[k] = a.length(k) + b.length(k).
Status append_lengths(SegView a, SegView b, std::span<int64_t> out);

/// The segment of every element (out has s.total() entries).
Status segment_ids(SegView s, std::span<int64_t> out);

/// Head flags: out[p] is true exactly where a non-empty segment starts.
Status head_flags(SegView s, std::span<bool> out);

/// Checks a descriptor's invariants (used by the C ABI and by tests).
Status validate(SegView s);

}  // namespace ndp::runtime
