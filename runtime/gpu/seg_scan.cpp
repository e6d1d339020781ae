// Segmented scans (device/scan.cu): one pass with decoupled look-back, Note [Single-pass scans
// and reductions] in device/scan.cu.
#include <cstring>

#include "runtime/cpu/ops.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace detail {

ndp_status op_identity(ndp_op op, ndp_elem_type t, uint64_t* identity_bits) {
  auto with_type = [&](auto tag) -> ndp_status {
    using T = decltype(tag);
    return runtime::with_op<T>(static_cast<runtime::Op>(op), [&](auto f) {
      T id = decltype(f)::identity();
      uint64_t bits = 0;
      std::memcpy(&bits, &id, sizeof(T));
      *identity_bits = bits;
      return runtime::ok_status();
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
  return runtime::status_of(NDP_INVALID_ARGUMENT);
}

// Note [Tile bounds by segment]
// The tile passes read each tile's first boundary from a table made once per call. By tile,
// ndp_seg_tile_bounds searches the offsets (Note [Guided tile-bounds search] in
// device/thread/boundaries.cuh: one round of loads where offsets grow evenly, at most
// log4(count) rounds);
// a binary search took about 10 us for the 2^20 rows of SpMV. By segment,
// ndp_seg_tile_bounds_by_segment reads every offset once and writes the entries of the tiles
// starting in each segment: a stream of 8·count bytes, so it is taken where that is short (count
// up to 2^21) and the tiles are no more than the segments (which bounds the entries a warp writes
// by its segments).
constexpr int64_t kBoundsBySegmentMax = int64_t{1} << 21;

Status tile_bounds(Primitives& p, DSegs s, int64_t tile, cuda::DeviceBuffer& bounds) {
  if (s.offsets == 0) return Status();
  const int64_t ntiles = (s.total + tile - 1) / tile;
  Result<cuda::DeviceBuffer> b = p.pool().allocate(static_cast<size_t>(ntiles + 1) * sizeof(int64_t));
  if (!b.ok()) return b.status();
  const bool by_segment = s.count <= kBoundsBySegmentMax && ntiles <= s.count;
  Status st;
  if (by_segment) {
    Result<cuda::Kernel> k = p.kernel("ndp_seg_tile_bounds_by_segment");
    if (!k.ok()) return k.status();
    // kBoundsSegments segments a thread, their offsets in flight together: a thread per
    // segment, in a resident grid's stride or not, measured 8.5-9 us for SpMV's 2^20 rows under
    // Nsight Compute, its loads one or two at a time.
    constexpr int64_t kBlockSegments = int64_t{kScanBlock} * kBoundsSegments;
    const cuda::LaunchConfig c{static_cast<unsigned>((s.count + kBlockSegments - 1) / kBlockSegments), kScanBlock, 0};
    st = cuda::launch_with(p.device(), k.value(), c, s, tile, b->pointer());
  } else {
    st = launch_named(p, "ndp_seg_tile_bounds", ntiles + 1, s, tile, b->pointer());
  }
  if (!st.ok()) return st;
  bounds = std::move(b.value());
  return Status();
}

Status scan_segments(Primitives& p, const cuda::Kernel& kernel, PassInput in, ScanMode mode, DSegs s, TileShape shape,
                     CUdeviceptr out) {
  const bool flat = s.count == 1;  // one segment (a regular or an offsets descriptor): no heads
  const int64_t tile = shape.tile;
  const int64_t ntiles = (s.total + tile - 1) / tile;
  Result<CUdeviceptr> scratch = p.lookback_scratch(ntiles);
  if (!scratch.ok()) return scratch.status();
  CUdeviceptr scratch_ptr = scratch.value();
  cuda::DeviceBuffer bounds;
  if (!flat)
    if (Status st = tile_bounds(p, s, tile, bounds); !st.ok()) return st;
  const cuda::LaunchConfig c = pass_launch(p, ntiles, shape.block, shape.per_sm);
  const int mode_flag = mode;
  return flat ? launch_first(p, kernel, c, in, s.total, mode_flag, scratch_ptr, out)
              : launch_first(p, kernel, c, in, s, bounds.pointer(), mode_flag, scratch_ptr, out);
}

Result<ndp_status> scan_with(Primitives& p, const KernelFinder& find, const std::string& prefix, PassInput in, ndp_op op,
                             ScanMode mode, ndp_elem_type t, DSegs s, ShapeOf shape, CUdeviceptr out) {
  uint64_t identity = 0;
  if (ndp_status st = op_identity(op, t, &identity); st.code != NDP_OK) return st;
  if (s.total <= 0) return data_ok();
  // Only the pass that runs is looked up: a consumer program holds just that one (Note
  // [Consumer programs] in consumer_program.h).
  const std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  Result<cuda::Kernel> k = find(prefix + (s.count == 1 ? "scan_flat_" : "scan_seg_") + suffix);
  if (!k.ok()) return k.status();
  if (Status st = scan_segments(p, k.value(), in, mode, s, shape(elem_bytes(t)), out); !st.ok()) return st;
  return data_ok();
}

}  // namespace detail

Result<ndp_status> Primitives::seg_scan(ndp_op op, bool inclusive, ndp_elem_type t, CUdeviceptr in, DSegs s,
                                        CUdeviceptr out) {
  return detail::scan_with(*this, [this](const std::string& name) { return kernel(name); }, "ndp_",
                           detail::PassInput{&in}, op, inclusive ? detail::kScanInclusive : detail::kScanExclusive, t, s,
                           detail::scan_shape, out);
}

Status Primitives::valid_offsets(CUdeviceptr lengths, int64_t n, CUdeviceptr offsets) {
  if (n <= 0) return fill(offsets, 1, 8, 0);
  Result<ndp_status> scan = detail::scan_with(
      *this, [this](const std::string& name) { return kernel(name); }, "ndp_", detail::PassInput{&lengths}, NDP_OP_PLUS,
      detail::kScanOffsets, NDP_I64, DSegs::flat(n), detail::scan_shape, offsets + sizeof(int64_t));
  if (!scan.ok()) return scan.status();
  return Status();
}

}  // namespace ndp::runtime::gpu
