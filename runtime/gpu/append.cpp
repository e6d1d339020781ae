// Per-segment append, reverse and rotate (device/append.cu).
#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::rt::gpu {

Status Primitives::append(ndp_elem_type t, CUdeviceptr a, DSegs sa, CUdeviceptr b, DSegs sb, DSegs so,
                          CUdeviceptr out) {
  if (sb.count != sa.count || so.count != sa.count || so.total != sa.total + sb.total)
    return Status::failure("append", "the descriptors of a, b and the result disagree");
  return detail::launch_per_element_segment(*this, sized_name("ndp_append_", t), so, a, sa, b, sb, so, out);
}

Status Primitives::reverse(ndp_elem_type t, CUdeviceptr v, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_reverse_", t), s, v, s, out);
}

Status Primitives::rotate(ndp_elem_type t, CUdeviceptr v, CUdeviceptr shift, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_rotate_", t), s, v, shift, s, out);
}

}  // namespace ndp::rt::gpu
