// Segmented reductions and count_true (device/scan.cu): the tiled segmented scan, each tile
// reporting the segments that end in it (Note [Tiled segmented scan]).
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::rt::gpu {

Result<ndp_status> Primitives::seg_reduce(ndp_op op, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out) {
  uint64_t identity = 0;
  if (ndp_status st = detail::op_identity(op, t, &identity); st.code != NDP_OK) return st;
  if (s.count <= 0) return data_ok();
  if (s.total <= 0) {  // every segment is empty
    if (Status st = fill(out, s.count, elem_bytes(t), identity); !st.ok()) return st;
    return data_ok();
  }
  std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  cuda::DeviceBuffer carry;
  if (Status st = detail::tile_carries(*this, "ndp_segscan_aggs_" + suffix, "ndp_segscan_carries_" + suffix, in, s, carry);
      !st.ok())
    return st;
  Result<cuda::Kernel> k = kernel("ndp_segreduce_" + suffix);
  if (!k.ok()) return k.status();
  if (Status st = cuda::launch_with(device(), k.value(), detail::tile_launch(detail::tile_count(s.total)), in, s,
                                    carry.pointer(), out);
      !st.ok())
    return st;
  return data_ok();
}

Result<int64_t> Primitives::count_true(CUdeviceptr flags, int64_t n) {
  if (n <= 0) return int64_t{0};
  Result<cuda::DeviceBuffer> count = pool().allocate(sizeof(uint64_t));
  if (!count.ok()) return count.status();
  CUdeviceptr count_ptr = count->pointer();
  if (Status st = fill(count_ptr, 1, 8, 0); !st.ok()) return st;
  Result<cuda::Kernel> k = kernel("ndp_count_true");
  if (!k.ok()) return k.status();
  cuda::LaunchConfig c = device().grid_stride(n);
  c.block_x = detail::kScanBlock;  // the kernel's block reduction is sized for it
  if (Status st = cuda::launch_with(device(), k.value(), c, flags, n, count_ptr); !st.ok()) return st;
  uint64_t result = 0;
  if (Status st = pool().copy_to_host(&result, count.value(), sizeof result); !st.ok()) return st;
  return static_cast<int64_t>(result);
}

}  // namespace ndp::rt::gpu
