// Per-segment append, reverse and rotate (device/append.cu).
#include <algorithm>

#include <string>

#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

Status Primitives::append(ndp_elem_type t, CUdeviceptr a, DSegs sa, CUdeviceptr b, DSegs sb, DSegs so,
                          CUdeviceptr out) {
  if (sb.count != sa.count || so.count != sa.count || so.total != sa.total + sb.total)
    return Status::failure("append", "the descriptors of a, b and the result disagree");
  return detail::launch_per_element_segment(*this, sized_name("ndp_append_", t), so, a, sa, b, sb, so, out);
}

namespace {
// The parameters of ndp_append_many (device/append.cu), by value.
struct AppendManyParts {
  CUdeviceptr a[Primitives::kAppendManyParts] = {}, b[Primitives::kAppendManyParts] = {},
              out[Primitives::kAppendManyParts] = {};
  CUdeviceptr a_index[Primitives::kAppendManyParts] = {}, b_index[Primitives::kAppendManyParts] = {};
  int32_t bytes[Primitives::kAppendManyParts] = {};
  int32_t count = 0;
};
}  // namespace

Status Primitives::append_many(std::span<const AppendPart> parts, DSegs sa, DSegs sb, DSegs so) {
  if (sb.count != sa.count || so.count != sa.count || so.total != sa.total + sb.total)
    return Status::failure("append", "the descriptors of a, b and the result disagree");
  for (size_t first = 0; first < parts.size(); first += kAppendManyParts) {
    const size_t count = std::min<size_t>(kAppendManyParts, parts.size() - first);
    AppendManyParts arg;
    for (size_t c = 0; c < count; ++c) {
      arg.a[c] = parts[first + c].a;
      arg.b[c] = parts[first + c].b;
      arg.out[c] = parts[first + c].out;
      arg.a_index[c] = parts[first + c].a_index;
      arg.b_index[c] = parts[first + c].b_index;
      arg.bytes[c] = parts[first + c].bytes;
    }
    arg.count = static_cast<int32_t>(count);
    if (Status st = detail::launch_per_element_segment(*this, "ndp_append_many", so, arg, sa, sb, so); !st.ok()) return st;
  }
  return Status();
}

Result<int64_t> Primitives::elt_segments(CUdeviceptr outer_offsets, CUdeviceptr idx, CUdeviceptr inner_offsets,
                                         int64_t n, CUdeviceptr start, CUdeviceptr length) {
  return first_failure(*this, "ndp_elt_segments", n, outer_offsets, idx, inner_offsets, n, start, length);
}

Status Primitives::elt_segments_in_range(CUdeviceptr outer_offsets, CUdeviceptr idx, CUdeviceptr inner_offsets, int64_t n,
                                         CUdeviceptr start, CUdeviceptr length) {
  Result<CUdeviceptr> word = failure_words();  // never written: every index is in range
  if (!word.ok()) return word.status();
  return launch_named(*this, "ndp_elt_segments", n, outer_offsets, idx, inner_offsets, n, start, length, word.value());
}

namespace {

// The kernels' AppendParts (device/append.cu) is this struct's mirror, passed by value.
static_assert(sizeof(Primitives::AppendParts) == 8 + 3 * 8 * Primitives::kMaxAppendParts);

/// The chain kernels take 1 to kMaxAppendParts parts.
Status check_part_count(const Primitives::AppendParts& parts) {
  if (parts.count >= 1 && parts.count <= Primitives::kMaxAppendParts) return Status();
  return Status::failure("append_parts", std::to_string(parts.count) + " parts, where 1 to " +
                                             std::to_string(Primitives::kMaxAppendParts) + " are taken");
}

}  // namespace

Status Primitives::append_parts_lengths(const AppendParts& parts, int64_t n, CUdeviceptr out) {
  if (Status st = check_part_count(parts); !st.ok()) return st;
  return launch_named(*this, "ndp_append_parts_lengths", n, parts, n, out);
}

Status Primitives::append_parts(ndp_elem_type t, const AppendParts& parts, DSegs so, CUdeviceptr out) {
  if (Status st = check_part_count(parts); !st.ok()) return st;
  return detail::launch_per_element_segment(*this, sized_name("ndp_append_parts_", t), so, parts, so, out);
}

Status Primitives::reverse(ndp_elem_type t, CUdeviceptr v, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_reverse_", t), s, v, s, out);
}

Status Primitives::rotate(ndp_elem_type t, CUdeviceptr v, CUdeviceptr shift, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_rotate_", t), s, v, shift, s, out);
}

}  // namespace ndp::runtime::gpu
