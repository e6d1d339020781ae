// Segment descriptor algebra: lengths <-> offsets, flatten, partition, append, ids and flags.
#include "segdes.h"

#include <utility>

#include "c_abi.h"
#include "ndp/runtime_cpu.h"
#include "parallel.h"
#include "primitives.h"

namespace ndp::runtime {

using detail::Range;

Segments Segments::regular(int64_t count, int64_t length) {
  Segments s;
  s.count_ = count;
  s.length_ = length;
  return s;
}

Segments Segments::from_valid_lengths(std::vector<int64_t> lengths) {
  Segments s;
  s.regular_ = false;
  s.count_ = static_cast<int64_t>(lengths.size());
  s.offsets_.resize(lengths.size() + 1);
  s.offsets_[0] = 0;
  seg_scan<int64_t>(Op::plus, ScanKind::inclusive, lengths, SegView::flat(s.count_),
                    std::span<int64_t>(s.offsets_).subspan(1));
  s.lengths_ = std::move(lengths);
  return s;
}

SegView Segments::view() const {
  if (regular_) return SegView::regular(count_, length_);
  return SegView(ndp_segdes_irregular(count_, lengths_.data(), offsets_.data()));
}

namespace {

/// The lowest position of a negative entry, if any.
Status check_non_negative(std::span<const int64_t> lengths) {
  return detail::first_failing(static_cast<int64_t>(lengths.size()), [&](int64_t p) {
    return lengths[p] < 0 ? negative_length(p, lengths[p]) : ok_status();
  });
}

}  // namespace

Status offsets_from_lengths(std::span<const int64_t> lengths, std::span<int64_t> offsets) {
  if (Status st = expect_size(offsets.size(), static_cast<int64_t>(lengths.size()) + 1); !ok(st)) return st;
  return detail::guarded([&] {
    if (Status st = check_non_negative(lengths); !ok(st)) return st;
    offsets[0] = 0;
    return seg_scan<int64_t>(Op::plus, ScanKind::inclusive, lengths, SegView::flat(static_cast<int64_t>(lengths.size())),
                             offsets.subspan(1));
  });
}

Status make_segments(std::span<const int64_t> lengths, Segments& out) {
  return detail::guarded([&] {
    if (Status st = check_non_negative(lengths); !ok(st)) return st;
    out = Segments::from_valid_lengths(std::vector<int64_t>(lengths.begin(), lengths.end()));
    return ok_status();
  });
}

Status lengths_of(SegView s, std::span<int64_t> out) {
  if (Status st = expect_size(out.size(), s.count()); !ok(st)) return st;
  detail::parallel_range(s.count(), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) out[k] = s.length(k);
  });
  return ok_status();
}

Status flatten_lengths(SegView outer, SegView inner, std::span<int64_t> out) {
  if (Status st = expect_size(out.size(), outer.count()); !ok(st)) return st;
  if (outer.total() != inner.count()) return length_mismatch(-1, inner.count(), outer.total());
  return detail::guarded([&] {
    std::vector<int64_t> lengths(inner.count());
    lengths_of(inner, lengths);
    return seg_reduce<int64_t>(Op::plus, lengths, outer, out);
  });
}

Status partition_segments(SegView data, std::span<const int64_t> counts, SegView count_segs, Segments& inner) {
  if (Status st = expect_size(counts.size(), count_segs.total()); !ok(st)) return st;
  if (data.count() != count_segs.count()) return length_mismatch(-1, count_segs.count(), data.count());
  return detail::guarded([&] {
    if (Status st = check_non_negative(counts); !ok(st)) return st;
    std::vector<int64_t> sums(data.count());
    seg_reduce<int64_t>(Op::plus, counts, count_segs, sums);
    Status st = detail::first_failing(data.count(), [&](int64_t k) {
      return sums[k] != data.length(k) ? length_mismatch(k, sums[k], data.length(k)) : ok_status();
    });
    if (!ok(st)) return st;
    inner = Segments::from_valid_lengths(std::vector<int64_t>(counts.begin(), counts.end()));
    return ok_status();
  });
}

Status append_lengths(SegView a, SegView b, std::span<int64_t> out) {
  if (a.count() != b.count()) return length_mismatch(-1, b.count(), a.count());
  if (Status st = expect_size(out.size(), a.count()); !ok(st)) return st;
  detail::parallel_range(a.count(), [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) out[k] = a.length(k) + b.length(k);
  });
  return ok_status();
}

Status segment_ids(SegView s, std::span<int64_t> out) {
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  detail::with_segs(s, [&](const auto& segs) {
    detail::parallel_pieces(segs, [&](const Range& r) {
      detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) out[p] = k;
      });
    });
  });
  return ok_status();
}

Status head_flags(SegView s, std::span<bool> out) {
  if (Status st = expect_size(out.size(), s.total()); !ok(st)) return st;
  detail::with_segs(s, [&](const auto& segs) {
    detail::parallel_pieces(segs, [&](const Range& r) {
      detail::for_each_piece(segs, r, [&](int64_t k, int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) out[p] = p == segs.begin(k);
      });
    });
  });
  return ok_status();
}

Status validate(SegView s) {
  if (!c_abi::shape_ok(s.c())) return status_of(NDP_INVALID_ARGUMENT);
  if (s.is_regular()) return ok_status();
  const ndp_segdes& d = s.c();
  if (d.offsets[0] != 0 || d.offsets[d.count] != d.total) return status_of(NDP_INVALID_ARGUMENT);
  return detail::first_failing(d.count, [&](int64_t k) {
    if (d.lengths[k] < 0) return negative_length(k, d.lengths[k]);
    int64_t span = d.offsets[k + 1] - d.offsets[k];
    if (span != d.lengths[k]) return Status{NDP_INVALID_ARGUMENT, k, span, d.lengths[k]};
    return ok_status();
  });
}

}  // namespace ndp::runtime

using namespace ndp::runtime;

extern "C" {

const char* ndp_status_name(ndp_status_code code) {
  switch (code) {
    case NDP_OK: return "ok";
    case NDP_INDEX_OUT_OF_BOUNDS: return "index out of bounds";
    case NDP_LENGTH_MISMATCH: return "length mismatch";
    case NDP_NOT_A_PERMUTATION: return "not a permutation";
    case NDP_NEGATIVE_LENGTH: return "negative length";
    case NDP_UNSUPPORTED: return "operation not defined for this element type";
    case NDP_INVALID_ARGUMENT: return "invalid argument";
    case NDP_OUT_OF_MEMORY: return "out of memory";
    case NDP_INTERNAL_ERROR: return "internal error";
  }
  return "unknown status";
}

ndp_status ndp_cpu_offsets_from_lengths(const int64_t* lengths, int64_t count, int64_t* offsets) {
  if (count < 0 || !c_abi::present(lengths, count) || offsets == nullptr) return c_abi::bad_shape();
  return c_abi::guard([&] { return offsets_from_lengths(c_abi::in<int64_t>(lengths, count), c_abi::out<int64_t>(offsets, count + 1)); });
}

ndp_status ndp_cpu_lengths(ndp_segdes s, int64_t* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(out, s.count)) return c_abi::bad_shape();
  return c_abi::guard([&] { return lengths_of(s, c_abi::out<int64_t>(out, s.count)); });
}

ndp_status ndp_cpu_flatten_lengths(ndp_segdes outer, ndp_segdes inner, int64_t* out) {
  if (!c_abi::shape_ok(outer) || !c_abi::shape_ok(inner) || !c_abi::present(out, outer.count)) return c_abi::bad_shape();
  return c_abi::guard([&] { return flatten_lengths(outer, inner, c_abi::out<int64_t>(out, outer.count)); });
}

ndp_status ndp_cpu_append_lengths(ndp_segdes a, ndp_segdes b, int64_t* out) {
  if (!c_abi::shape_ok(a) || !c_abi::shape_ok(b) || !c_abi::present(out, a.count)) return c_abi::bad_shape();
  return c_abi::guard([&] { return append_lengths(a, b, c_abi::out<int64_t>(out, a.count)); });
}

ndp_status ndp_cpu_segment_ids(ndp_segdes s, int64_t* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::guard([&] { return segment_ids(s, c_abi::out<int64_t>(out, s.total)); });
}

ndp_status ndp_cpu_head_flags(ndp_segdes s, uint8_t* out) {
  if (!c_abi::shape_ok(s) || !c_abi::present(out, s.total)) return c_abi::bad_shape();
  return c_abi::guard([&] { return head_flags(s, c_abi::out<bool>(out, s.total)); });
}

ndp_status ndp_cpu_segdes_validate(ndp_segdes s) {
  return c_abi::guard([&] { return validate(s); });
}

}  // extern "C"
