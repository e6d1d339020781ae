// Selection (device/pack.cu): PACK's lengths, the positions of the true flags, PACK's data.
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::rt::gpu {

namespace {

/// Compaction in three steps: per-tile counts, their exclusive scan (the tiles' starting
/// positions in out), then `kernel` (v..., flags, n, starts, out) compacts every tile.
template <class... V>
Status compact(Primitives& p, const std::string& kernel, CUdeviceptr flags, int64_t n, CUdeviceptr out, V... v) {
  if (n <= 0) return Status();
  int64_t ntiles = detail::tile_count(n);
  cuda::DeviceBuffer starts;
  if (ntiles > 1) {
    Result<cuda::DeviceBuffer> b = p.pool().allocate(static_cast<size_t>(ntiles) * sizeof(int64_t));
    if (!b.ok()) return b.status();
    starts = std::move(b.value());
    Result<cuda::Kernel> counts = p.kernel("ndp_pack_counts");
    if (!counts.ok()) return counts.status();
    CUdeviceptr starts_ptr = starts.pointer();
    if (Status st = cuda::launch_with(p.device(), counts.value(), detail::tile_launch(ntiles), flags, n, starts_ptr);
        !st.ok())
      return st;
    Result<ndp_status> scan = p.seg_scan(NDP_OP_PLUS, false, NDP_I64, starts_ptr, DSegs::flat(ntiles), starts_ptr);
    if (!scan.ok()) return scan.status();
  }
  Result<cuda::Kernel> k = p.kernel(kernel);
  if (!k.ok()) return k.status();
  return cuda::launch_with(p.device(), k.value(), detail::tile_launch(ntiles), v..., flags, n, starts.pointer(), out);
}

}  // namespace

Status Primitives::pack_lengths(CUdeviceptr flags, DSegs s, CUdeviceptr out_lengths, int64_t* total) {
  if (s.count > 0 && s.total <= 0) {
    if (Status st = fill(out_lengths, s.count, 8, 0); !st.ok()) return st;
  } else if (s.count > 0) {
    // A segmented + reduction of the flags read as 0/1 (device/scan_pass.cuh), over tiles of
    // its int64 counts.
    if (Status st = detail::reduce_segments(*this, "ndp_packlen_tiles", "ndp_reduce_seg_fixup_plus_i64", flags, s,
                                            detail::pass_tile(8), out_lengths);
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
  return compact(*this, "ndp_true_positions", flags, n, out);
}

Status Primitives::pack(ndp_elem_type t, CUdeviceptr v, CUdeviceptr flags, int64_t n, CUdeviceptr out) {
  return compact(*this, "ndp_pack_" + std::to_string(elem_bytes(t)), flags, n, out, v);
}

}  // namespace ndp::rt::gpu
