// Segmented reductions and count_true (device/scan.cu): a flat reduction for one segment, else
// one pass over tiles and a fix-up (Note [Single-pass scans and reductions] in device/scan.cu).
#include <limits>

#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace detail {

namespace {

cuda::LaunchConfig carry_launch(int64_t blocks) {
  return cuda::LaunchConfig{static_cast<unsigned>(blocks), kCarryBlock, 0};
}

}  // namespace

Status reduce_segments(Primitives& p, const std::string& tiles_kernel, const std::string& op_type, CUdeviceptr in,
                       DSegs s, TileShape shape, CUdeviceptr out) {
  Result<cuda::Kernel> k = p.kernel(tiles_kernel);
  if (!k.ok()) return k.status();
  return reduce_segments(p, k.value(), op_type, PassInput{&in}, s, shape, out);
}

Status reduce_segments(Primitives& p, const cuda::Kernel& tiles, const std::string& op_type, PassInput in, DSegs s,
                       TileShape shape, CUdeviceptr out) {
  const int64_t ntiles = (s.total + shape.tile - 1) / shape.tile;
  cuda::DeviceBuffer bounds;
  if (Status st = tile_bounds(p, s, shape.tile, bounds); !st.ok()) return st;
  // Per tile: its aggregate, a SegPair<T> of at most 16 bytes (an 8-byte value and an int
  // flag), and the segment the fix-up completes (int64).
  Result<cuda::DeviceBuffer> agg = p.pool().allocate(static_cast<size_t>(ntiles) * 16);
  if (!agg.ok()) return agg.status();
  Result<cuda::DeviceBuffer> fix = p.pool().allocate(static_cast<size_t>(ntiles) * 8);
  if (!fix.ok()) return fix.status();
  CUdeviceptr agg_ptr = agg->pointer(), fix_ptr = fix->pointer();
  if (Status st = launch_first(p, tiles, pass_launch(p, ntiles, shape.block, shape.per_sm), in, s, bounds.pointer(), agg_ptr,
                              fix_ptr, out);
      !st.ok())
    return st;
  if (ntiles <= 1) return Status();  // tile 0 completes every segment it writes
  // The fix-up (Note [Segmented reduction fix-up] in device/tile/reduce_fixup.cuh): the near
  // walk, then the scan for what it left (with more than one chunk of aggregates, first each
  // chunk's fold).
  Result<cuda::Kernel> near = p.kernel("ndp_reduce_seg_fixup_near_" + op_type);
  if (!near.ok()) return near.status();
  if (Status st = cuda::launch_with(p.device(), near.value(), carry_launch((ntiles + kCarryBlock - 1) / kCarryBlock),
                                    agg_ptr, fix_ptr, ntiles, out);
      !st.ok())
    return st;
  const int64_t nchunks = (ntiles + kCarryChunk - 1) / kCarryChunk;
  cuda::DeviceBuffer chunk_agg;
  if (nchunks > 1) {
    Result<cuda::DeviceBuffer> b = p.pool().allocate(static_cast<size_t>(nchunks) * 16);
    if (!b.ok()) return b.status();
    chunk_agg = std::move(b.value());
    Result<cuda::Kernel> chunks = p.kernel("ndp_reduce_seg_chunks_" + op_type);
    if (!chunks.ok()) return chunks.status();
    if (Status st = cuda::launch_with(p.device(), chunks.value(), carry_launch(nchunks), agg_ptr, fix_ptr,
                                      ntiles, chunk_agg.pointer());
        !st.ok())
      return st;
  }
  Result<cuda::Kernel> f = p.kernel("ndp_reduce_seg_fixup_" + op_type);
  if (!f.ok()) return f.status();
  return cuda::launch_with(p.device(), f.value(), carry_launch(nchunks), agg_ptr, fix_ptr, ntiles,
                           chunk_agg.pointer(), out);
}

Status reduce_flat(Primitives& p, const cuda::Kernel& partials_kernel, PassInput in, int64_t n, ndp_elem_type t,
                   const std::string& finish_kernel, CUdeviceptr elements, CUdeviceptr out) {
  const cuda::LaunchConfig c = pass_launch(p, (n * elem_bytes(t) + 16383) / 16384);
  Result<cuda::DeviceBuffer> partials = p.pool().allocate(static_cast<size_t>(c.grid_x) * 8);
  if (!partials.ok()) return partials.status();
  CUdeviceptr partials_ptr = partials->pointer();
  if (Status st = launch_first(p, partials_kernel, c, in, n, partials_ptr); !st.ok()) return st;
  Result<cuda::Kernel> finish = p.kernel(finish_kernel);
  if (!finish.ok()) return finish.status();
  const int nparts = static_cast<int>(c.grid_x);
  const int64_t own = elements ? n : 0;
  return cuda::launch_with(p.device(), finish.value(), cuda::LaunchConfig{1, kPassBlock, 0},
                           elements ? elements : partials_ptr, own, partials_ptr, nparts, out);
}

}  // namespace detail

namespace detail {

Result<ndp_status> reduce_with(Primitives& p, const KernelFinder& find, const std::string& prefix, PassInput in,
                               CUdeviceptr elements, ndp_op op, ndp_elem_type t, DSegs s, CUdeviceptr out) {
  uint64_t identity = 0;
  if (ndp_status st = op_identity(op, t, &identity); st.code != NDP_OK) return st;
  if (s.count <= 0) return data_ok();
  if (s.total <= 0) {  // every segment is empty
    if (Status st = p.fill(out, s.count, elem_bytes(t), identity); !st.ok()) return st;
    return data_ok();
  }
  const std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  if (s.count > 1) {  // one pass over tiles and the fix-up
    const bool wide = elements != 0 && s.total >= 4 * s.count;
    Result<cuda::Kernel> tiles = find(prefix + (wide ? "reduce_seg_wide_" : "reduce_seg_") + suffix);
    if (!tiles.ok()) return tiles.status();
    const TileShape shape = wide ? wide_reduce_shape(elem_bytes(t)) : pass_shape(elem_bytes(t));
    if (Status st = reduce_segments(p, tiles.value(), suffix, in, s, shape, out); !st.ok())
      return st;
    return data_ok();
  }
  Result<cuda::Kernel> k = find(prefix + "reduce_flat_" + suffix);
  if (!k.ok()) return k.status();
  if (Status st = reduce_flat(p, k.value(), in, s.total, t, "ndp_reduce_flat_finish_" + suffix, elements, out); !st.ok())
    return st;
  return data_ok();
}

}  // namespace detail

Result<ndp_status> Primitives::seg_reduce(ndp_op op, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out) {
  return detail::reduce_with(*this, [this](const std::string& name) { return kernel(name); }, "ndp_",
                             detail::PassInput{&in}, in, op, t, s, out);
}

// Note [Index of the extreme]
// max_index and min_index (stdlib/sequence.ndp) were the extreme, then a map and a min_val:
// min_val({select(x == m, i, max_int) : x in v; i in index(#v)}). Lifted, that map reads m and i
// at every element, both of which need the element's segment: the fused reduction found it by a
// search per item and took 213 µs over quickhull's first level of 2·10^7 cross products where a
// segmented max took 47 (Nsight Compute, H200). Here the second pass is ndp_first_equal
// (device/extreme.cu): a tile inside one segment compares with that segment's m directly, other
// tiles mark their segments as dist does (Note [Segments of a tile]), and an element equal to
// its segment's m lowers the segment's answer with atomicMin, skipped where it cannot lower it.
// The answer is the least such position, max_int for none (a NaN extreme), as the definition gives.
// An input of at most this many elements, in segments of at most kExtremeSegment elements on
// average, runs both passes in one launch, a block a segment (Note [Small inputs in one launch] in
// primitives.cpp): longer segments would leave one block walking what the general path spreads
// over the GPU.
constexpr int64_t kExtremeByBlock = int64_t{1} << 16;
constexpr int64_t kExtremeSegment = 4096;

Result<ndp_status> Primitives::seg_index_of_extreme(ndp_op op, ndp_elem_type t, CUdeviceptr in, DSegs s, CUdeviceptr out) {
  if ((op != NDP_OP_MAX && op != NDP_OP_MIN) || t == NDP_BOOL) return ndp_status{NDP_UNSUPPORTED, -1, -1, -1};
  if (s.count <= 0) return data_ok();
  if (s.total <= kExtremeByBlock && s.total <= s.count * kExtremeSegment && small_inputs_in_one_launch()) {
    Result<cuda::Kernel> k = kernel(std::string("ndp_extreme_index_by_block_") + op_name(op) + "_" + elem_suffix(t));
    if (!k.ok()) return k.status();
    const cuda::LaunchConfig c{static_cast<unsigned>(s.count), detail::kScanBlock, 0};
    if (Status st = cuda::launch_with(device(), k.value(), c, in, s, out); !st.ok()) return st;
    return data_ok();
  }
  Result<cuda::DeviceBuffer> extreme = pool().allocate(static_cast<size_t>(s.count) * elem_bytes(t));
  if (!extreme.ok()) return extreme.status();
  Result<ndp_status> m = seg_reduce(op, t, in, s, extreme->pointer());
  if (!m.ok() || m->code != NDP_OK) return m;
  if (Status st = fill(out, s.count, 8, static_cast<uint64_t>(std::numeric_limits<int64_t>::max())); !st.ok()) return st;
  if (Status st = detail::launch_per_element_segment(*this, std::string("ndp_first_equal_") + elem_suffix(t), s, in,
                                                     extreme->pointer(), s, out);
      !st.ok())
    return st;
  return data_ok();
}

/// Flags that ndp_count_true counts in one block (16 a load: 16 loads a thread at most).
constexpr int64_t kCountOneBlock = int64_t{1} << 16;

// Note [Few flags counted where they arrive]
// The host counts a flattened `if`'s flags to choose its branches, a recursion level's few
// instances each time: a launch of ndp_count_true, which waits for the kernel that made the
// flags, and then a read-back of its sum. Up to kCountCopied flags (a byte each) the read-back
// brings the flags themselves, as one small copy through the page-locked staging buffer (Note
// [Small read-backs through pinned memory]), which costs what the sum's did, and the host adds
// up those bytes: one dependent step on the GPU fewer, and a launch fewer, for each `if` of each
// level of quickhull's recursion (NDP_PROFILE=trace on an H200: the count took 21-41 µs from the
// condition's kernel to the next statement).
constexpr int64_t kCountCopied = 4096;

Result<int64_t> Primitives::count_true(CUdeviceptr flags, int64_t n) {
  if (n <= 0) return int64_t{0};
  if (n <= kCountCopied && small_inputs_in_one_launch()) {
    unsigned char copied[kCountCopied];
    if (Status st = pool().download(copied, flags, static_cast<size_t>(n)); !st.ok()) return st;
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += copied[i] != 0;
    return count;
  }
  Result<cuda::DeviceBuffer> count = pool().allocate(sizeof(uint64_t));
  if (!count.ok()) return count.status();
  CUdeviceptr count_ptr = count->pointer();
  Result<cuda::Kernel> k = kernel("ndp_count_true");
  if (!k.ok()) return k.status();
  cuda::LaunchConfig c = device().grid_stride(n);
  c.block_x = detail::kScanBlock;  // the kernel's block reduction is sized for it
  // Up to kCountOneBlock flags, one block counts them all and stores its sum: no zeroing launch
  // first, which is half the launches of counting a recursion level's few instances.
  if (n <= kCountOneBlock) c.grid_x = 1;
  else if (Status st = fill(count_ptr, 1, 8, 0); !st.ok()) return st;
  if (Status st = cuda::launch_with(device(), k.value(), c, flags, n, count_ptr); !st.ok()) return st;
  uint64_t result = 0;
  if (Status st = pool().copy_to_host(&result, count.value(), sizeof result); !st.ok()) return st;
  return static_cast<int64_t>(result);
}

}  // namespace ndp::runtime::gpu
