// The slots of an appended sequence of a loop kernel (device/slots.cu).
#include <string>

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

Status Primitives::slot_offsets(CUdeviceptr in_offsets, int64_t n, int64_t room, CUdeviceptr slots) {
  return launch_named(*this, "ndp_slot_offsets", n + 1, in_offsets, n, room, slots);
}

Result<int64_t> Primitives::slot_outgrown(CUdeviceptr slots, CUdeviceptr lengths, int64_t n) {
  return first_failure(*this, "ndp_slot_outgrown", n, slots, lengths, n);
}

Status Primitives::slot_pack(int elem_bytes, CUdeviceptr slot_elems, CUdeviceptr slots, CUdeviceptr out_offsets, int64_t n,
                             CUdeviceptr out) {
  return launch_named(*this, "ndp_slot_pack_" + std::to_string(elem_bytes), n, slot_elems, slots, out_offsets, n, out);
}

}  // namespace ndp::runtime::gpu
