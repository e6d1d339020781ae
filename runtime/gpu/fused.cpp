// Consumer kernels (device/fused.cu): the reductions, scans and packs that read their input
// through a generated element function (their program: consumer_program.h). The passes are those of
// seg_reduce.cpp, seg_scan.cpp and pack.cpp; only where the input comes from differs.
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace {

/// The consumer module's kernels by name.
detail::KernelFinder finder(const cuda::Module& m) {
  return [&m](const std::string& name) { return m.kernel(name); };
}

}  // namespace

Result<ndp_status> Primitives::seg_reduce_fused(const cuda::Module& m, ndp_op op, ndp_elem_type t,
                                                const FusedInputs& in, DSegs s, CUdeviceptr out) {
  FusedInputs arg = in;
  return detail::reduce_with(*this, finder(m), "ndp_fused_", detail::PassInput{&arg}, 0, op, t, s, out);
}

Result<ndp_status> Primitives::seg_scan_fused(const cuda::Module& m, ndp_op op, bool inclusive, ndp_elem_type t,
                                              const FusedInputs& in, DSegs s, CUdeviceptr out) {
  FusedInputs arg = in;
  // The consumer scans keep the default tile shape (Note [Scan tile shape]).
  return detail::scan_with(*this, finder(m), "ndp_fused_", detail::PassInput{&arg}, op,
                           inclusive ? detail::kScanInclusive : detail::kScanExclusive, t, s,
                           detail::pass_shape, out);
}

Result<int64_t> Primitives::pack_fused(const cuda::Module& m, ndp_elem_type t, CUdeviceptr v, const FusedInputs& flags,
                                       int64_t n, const std::function<Result<CUdeviceptr>(int64_t)>& allocate) {
  if (n <= 0) {
    Result<CUdeviceptr> out = allocate(0);
    if (!out.ok()) return out.status();
    return int64_t{0};
  }
  // Per-tile counts of the computed flags and one zero after them, scanned: the tiles' starts
  // in the output, and the count last.
  const int64_t ntiles = detail::tile_count(n);
  Result<cuda::DeviceBuffer> starts = pool().allocate(static_cast<size_t>(ntiles + 1) * sizeof(int64_t));
  if (!starts.ok()) return starts.status();
  CUdeviceptr starts_ptr = starts->pointer();
  if (Status st = fill(starts_ptr + static_cast<CUdeviceptr>(ntiles) * 8, 1, 8, 0); !st.ok()) return st;
  Result<cuda::Kernel> counts = m.kernel("ndp_fused_pack_counts");
  if (!counts.ok()) return counts.status();
  FusedInputs arg = flags;
  if (Status st = detail::launch_first(*this, counts.value(), detail::tile_launch(ntiles), detail::PassInput{&arg}, n,
                                       starts_ptr);
      !st.ok())
    return st;
  Result<ndp_status> scan = seg_scan(NDP_OP_PLUS, false, NDP_I64, starts_ptr, DSegs::flat(ntiles + 1), starts_ptr);
  if (!scan.ok()) return scan.status();
  int64_t count = 0;
  if (Status st = pool().download(&count, starts_ptr + static_cast<CUdeviceptr>(ntiles) * 8, sizeof count); !st.ok())
    return st;
  Result<CUdeviceptr> out = allocate(count);
  if (!out.ok()) return out.status();
  if (count == 0) return count;
  Result<cuda::Kernel> compact = m.kernel(sized_name("ndp_fused_pack_", t));
  if (!compact.ok()) return compact.status();
  // (v, in, n, starts, out): the flags argument second, as in ndp_pack_<bytes>.
  CUdeviceptr out_ptr = out.value();
  void* parameters[] = {&v, &arg, &n, &starts_ptr, &out_ptr, nullptr};
  if (Status st = cuda::launch(device(), compact.value(), detail::tile_launch(ntiles), parameters); !st.ok()) return st;
  return count;
}

}  // namespace ndp::runtime::gpu
