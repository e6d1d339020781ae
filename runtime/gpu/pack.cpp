// Selection (device/pack.cu): PACK's lengths, the positions of the true flags, PACK's data.
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace {

/// Elements per tile of device/tile/select.cuh's select_pass (kSelectTile).
constexpr int64_t kSelectTile = 4096;

/// Compaction in one pass (device/tile/select.cuh, select_pass): kernel `name` + "_c32" or
/// "_c64" (by the look-back's count type) with (v..., flags, n, scratch, out); with `kept`, *kept
/// receives the number of true flags, which the kernel leaves in the scratch (a read-back:
/// synchronises).
template <class... V>
Status compact(Primitives& p, const std::string& name, CUdeviceptr flags, int64_t n, CUdeviceptr out, int64_t* kept,
               V... v) {
  if (kept) *kept = 0;
  if (n <= 0) return Status();
  const int64_t ntiles = (n + kSelectTile - 1) / kSelectTile;
  Result<CUdeviceptr> scratch = p.lookback_scratch(ntiles);
  if (!scratch.ok()) return scratch.status();
  Result<cuda::Kernel> k = p.kernel(name + (n < (int64_t{1} << 31) ? "_c32" : "_c64"));
  if (!k.ok()) return k.status();
  if (Status st = cuda::launch_with(p.device(), k.value(), detail::pass_launch(p, ntiles), v..., flags, n,
                                    scratch.value(), out);
      !st.ok())
    return st;
  if (!kept) return Status();
  uint64_t total = 0;
  if (Status st = p.pool().download(&total, scratch.value() + 8, sizeof total); !st.ok()) return st;
  *kept = static_cast<int64_t>(total);
  return Status();
}

}  // namespace

Status Primitives::pack_lengths(CUdeviceptr flags, DSegs s, CUdeviceptr out_lengths, int64_t* total) {
  if (s.count > 0 && s.total <= 0) {
    if (Status st = fill(out_lengths, s.count, 8, 0); !st.ok()) return st;
  } else if (s.count > 0) {
    // A segmented + reduction of the flags read as 0/1 (device/tile/reduce_segments.cuh), over
    // tiles of its int64 counts.
    if (Status st = detail::reduce_segments(*this, "ndp_packlen_tiles", "plus_i64", flags, s,
                                            detail::pass_shape(8), out_lengths);
        !st.ok())
      return st;
  }
  if (total) {
    Result<int64_t> n = count_true(flags, s.total);
    if (!n.ok()) return n.status();
    *total = n.value();
  }
  return Status();
}

Status Primitives::true_positions(CUdeviceptr flags, int64_t n, CUdeviceptr out) {
  return compact(*this, "ndp_select_positions", flags, n, out, nullptr);
}

Status Primitives::pack(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n, CUdeviceptr out) {
  return compact(*this, "ndp_select_" + std::to_string(elem_bytes(t)), flags, n, out, nullptr, v);
}

Result<int64_t> Primitives::pack_counted(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n,
                                         CUdeviceptr out) {
  int64_t kept = 0;
  if (Status st = compact(*this, "ndp_select_" + std::to_string(elem_bytes(t)), flags, n, out, &kept, v); !st.ok())
    return st;
  return kept;
}

}  // namespace ndp::runtime::gpu
