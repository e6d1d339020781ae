// Segmented scans (device/scan.cu): reduce-then-scan over tiles, Note [Tiled segmented scan].
#include <cstring>

#include "runtime/cpu/ops.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::rt::gpu {

namespace detail {

ndp_status op_identity(ndp_op op, ndp_elem_type t, uint64_t* identity_bits) {
  auto with_type = [&](auto tag) -> ndp_status {
    using T = decltype(tag);
    return rt::with_op<T>(static_cast<rt::Op>(op), [&](auto f) {
      T id = decltype(f)::identity();
      uint64_t bits = 0;
      std::memcpy(&bits, &id, sizeof(T));
      *identity_bits = bits;
      return rt::ok_status();
    });
  };
  switch (t) {
    case NDP_I64: return with_type(int64_t{});
    case NDP_F64: return with_type(double{});
    case NDP_I32: return with_type(int32_t{});
    case NDP_F32: return with_type(float{});
    case NDP_BOOL: return with_type(bool{});
    case NDP_CHAR: return with_type(uint8_t{});
  }
  return rt::status_of(NDP_INVALID_ARGUMENT);
}

Status tile_carries(Primitives& p, const std::string& aggs_kernel, const std::string& carries_kernel, CUdeviceptr in,
                    DSegs s, cuda::DeviceBuffer& carry) {
  int64_t ntiles = tile_count(s.total);
  if (ntiles <= 1) return Status();
  Result<cuda::Kernel> aggs = p.kernel(aggs_kernel);
  if (!aggs.ok()) return aggs.status();
  Result<cuda::Kernel> carries = p.kernel(carries_kernel);
  if (!carries.ok()) return carries.status();
  // A SegPair<T> is at most 16 bytes (an 8-byte value and an int flag).
  Result<cuda::DeviceBuffer> agg = p.pool().allocate(static_cast<size_t>(ntiles) * 16);
  if (!agg.ok()) return agg.status();
  Result<cuda::DeviceBuffer> c = p.pool().allocate(static_cast<size_t>(ntiles) * 8);
  if (!c.ok()) return c.status();
  CUdeviceptr agg_ptr = agg->pointer(), carry_ptr = c->pointer();
  if (Status st = cuda::launch_with(p.device(), aggs.value(), tile_launch(ntiles), in, s, agg_ptr); !st.ok()) return st;
  if (Status st = cuda::launch_with(p.device(), carries.value(), cuda::LaunchConfig{1, kCarryBlock, 0}, agg_ptr, ntiles,
                                    carry_ptr);
      !st.ok())
    return st;
  carry = std::move(c.value());
  return Status();
}

}  // namespace detail

Result<ndp_status> Primitives::seg_scan(ndp_op op, bool inclusive, ndp_elem_type t, CUdeviceptr in, DSegs s,
                                        CUdeviceptr out) {
  uint64_t identity = 0;
  if (ndp_status st = detail::op_identity(op, t, &identity); st.code != NDP_OK) return st;
  if (s.total <= 0) return data_ok();
  std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  cuda::DeviceBuffer carry;
  if (Status st = detail::tile_carries(*this, "ndp_segscan_aggs_" + suffix, "ndp_segscan_carries_" + suffix, in, s, carry);
      !st.ok())
    return st;
  Result<cuda::Kernel> k = kernel("ndp_segscan_" + suffix);
  if (!k.ok()) return k.status();
  int inclusive_flag = inclusive ? 1 : 0;
  if (Status st = cuda::launch_with(device(), k.value(), detail::tile_launch(detail::tile_count(s.total)), in, s,
                                    carry.pointer(), inclusive_flag, out);
      !st.ok())
    return st;
  return data_ok();
}

}  // namespace ndp::rt::gpu
