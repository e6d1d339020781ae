// hash of any value (device/hash.cu).
#include <string>

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

Status Primitives::hash_scalar(ndp_elem_type t, CUdeviceptr v, int64_t n, CUdeviceptr out) {
  return launch_named(*this, std::string("ndp_hash_scalar_") + elem_suffix(t), n, v, n, out);
}

Status Primitives::hash_pair(CUdeviceptr first, CUdeviceptr second, int64_t n, CUdeviceptr out) {
  return launch_named(*this, "ndp_hash_pair", n, first, second, n, out);
}

Status Primitives::hash_data(CUdeviceptr fields, int64_t n, uint64_t id, CUdeviceptr out) {
  return launch_named(*this, "ndp_hash_data", n, fields, n, id, out);
}

Status Primitives::hash_fold(CUdeviceptr elems, DSegs s, CUdeviceptr out) {
  return launch_named(*this, "ndp_hash_fold", s.count, elems, s, out);
}

Result<int64_t> Primitives::hash_modulo(CUdeviceptr h, CUdeviceptr l, int64_t n, CUdeviceptr out) {
  return first_failure(*this, "ndp_hash_modulo", n, h, l, n, out);
}

}  // namespace ndp::runtime::gpu
