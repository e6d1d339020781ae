// Generators: fill, iota, DIST, INDEX (device/generate.cu).
#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

Status Primitives::fill(CUdeviceptr out, int64_t n, int bytes, uint64_t value) {
  return launch_named(*this, "ndp_fill_" + std::to_string(bytes), n, out, n, value);
}

Status Primitives::iota(CUdeviceptr out, int64_t n, int64_t start, int64_t stride) {
  return launch_named(*this, "ndp_iota", n, out, n, start, stride);
}

Status Primitives::dist(ndp_elem_type t, CUdeviceptr x, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, std::string("ndp_dist_") + elem_suffix(t), s, x, s, out);
}

Status Primitives::index(ndp_elem_type t, CUdeviceptr start, CUdeviceptr stride, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, std::string("ndp_index_") + elem_suffix(t), s, start, stride, s, out);
}

}  // namespace ndp::runtime::gpu
