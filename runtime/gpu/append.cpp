// Per-segment append, reverse and rotate (device/append.cu).
#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

Status Primitives::append(ndp_elem_type t, CUdeviceptr a, DSegs sa, CUdeviceptr b, DSegs sb, DSegs so,
                          CUdeviceptr out) {
  if (sb.count != sa.count || so.count != sa.count || so.total != sa.total + sb.total)
    return Status::failure("append", "the descriptors of a, b and the result disagree");
  return launch_named(*this, sized_name("ndp_append_", t), so.total, a, sa, b, sb, so, out);
}

Status Primitives::reverse(ndp_elem_type t, CUdeviceptr v, DSegs s, CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_reverse_", t), s.total, v, s, out);
}

Status Primitives::rotate(ndp_elem_type t, CUdeviceptr v, CUdeviceptr shift, DSegs s, CUdeviceptr out) {
  return launch_named(*this, sized_name("ndp_rotate_", t), s.total, v, shift, s, out);
}

}  // namespace ndp::rt::gpu
