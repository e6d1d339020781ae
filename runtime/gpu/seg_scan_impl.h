// Private to runtime/gpu: the host half of the scans and reductions (Note [Single-pass scans
// and reductions] in device/scan.cu), shared by seg_scan.cpp, seg_reduce.cpp, pack.cpp and
// segdes.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu::detail {

/// The tile and block sizes of device/tile/fixed_tile.cuh (kTile, kScanBlock), used by the
/// descriptor and selection kernels.
constexpr int64_t kTile = 2048;
constexpr unsigned kScanBlock = 256;

inline int64_t tile_count(int64_t n) { return n <= 0 ? 0 : (n + kTile - 1) / kTile; }

/// One block per tile (tile kernels loop by grid stride beyond the launch limit).
inline cuda::LaunchConfig tile_launch(int64_t ntiles) {
  int64_t grid = ntiles < 1 ? 1 : ntiles > (int64_t{1} << 30) ? (int64_t{1} << 30) : ntiles;
  return cuda::LaunchConfig{static_cast<unsigned>(grid), kScanBlock, 0};
}

/// Launches a kernel built on for_each_element_segment (device/tile/segments.cuh) over the
/// elements of s: one block of kScanBlock threads per tile of kTile elements.
template <class... Args>
Status launch_per_element_segment(Primitives& p, const std::string& name, DSegs s, Args... args) {
  if (s.total <= 0) return Status();
  Result<cuda::Kernel> k = p.kernel(name);
  if (!k.ok()) return k.status();
  return cuda::launch_with(p.device(), k.value(), tile_launch(tile_count(s.total)), args...);
}

/// The geometry of device/tile/pass_shape.cuh: kPassBlock threads, kCarryBlock for the fix-up's
/// blocks (one per kCarryChunk tiles), and kPassTile elements per tile for an element of `bytes`
/// bytes (64 bytes per thread, at most 16 elements).
constexpr unsigned kPassBlock = 256;
constexpr unsigned kCarryBlock = 256;
constexpr int64_t kCarryChunk = int64_t{kCarryBlock} * 8;  // kCarryItems a thread
/// Segments a thread of ndp_seg_tile_bounds_by_segment takes (kBoundsSegments in device/scan.cu).
constexpr int64_t kBoundsSegments = 8;
inline int64_t pass_tile(int bytes) { return bytes == 8 ? 2048 : 4096; }

/// A pass's threads per block and elements per tile, as its kernels have them, and the blocks an
/// SM holds (their __launch_bounds__; 0: as many as its threads allow).
struct TileShape {
  unsigned block;
  int64_t tile;
  int per_sm = 0;
};
/// device/tile/pass_shape.cuh's PassShape<T> (the default) and ScanShape<T> (the scans of arrays,
/// Note [Scan tile shape]) for elements of `bytes` bytes.
inline TileShape pass_shape(int bytes) { return TileShape{kPassBlock, pass_tile(bytes)}; }
inline TileShape scan_shape(int bytes) {
  return bytes == 4 ? TileShape{256, 256 * 32, 4} : bytes == 8 ? TileShape{128, 128 * 40, 4} : pass_shape(bytes);
}
/// WideReduceShape<T> (Note [Segmented reduction shape]): 128 threads of 128 bytes, the same
/// elements a tile as PassShape.
inline TileShape wide_reduce_shape(int bytes) { return TileShape{128, pass_tile(bytes), 6}; }
using ShapeOf = TileShape (*)(int bytes);

/// At most one resident grid of `block`-thread blocks (`per_sm` an SM, where given), and no
/// more blocks than `blocks`.
inline cuda::LaunchConfig pass_launch(Primitives& p, int64_t blocks, unsigned block = kPassBlock, int per_sm = 0) {
  if (per_sm <= 0) {
    cuda::LaunchConfig c = p.device().grid_stride(std::max<int64_t>(blocks, 1) * block);
    c.block_x = block;
    return c;
  }
  const int64_t resident = int64_t{per_sm} * std::max(1, p.device().properties().sm_count);
  return cuda::LaunchConfig{static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, resident)), block, 0};
}

/// NDP_OK with *identity_bits = the identity of (op, t) in its low bytes, or the CPU runtime's
/// status for a pair it does not support (NDP_UNSUPPORTED) or an unknown op or type.
ndp_status op_identity(ndp_op op, ndp_elem_type t, uint64_t* identity_bits);

/// For an offsets descriptor, `bounds` receives the first boundary of each of its tiles of `tile`
/// elements (ndp_seg_tile_bounds); for a regular one it stays empty (null: kernels divide).
Status tile_bounds(Primitives& p, DSegs s, int64_t tile, cuda::DeviceBuffer& bounds);

/// The first argument of a scan or reduction pass: the address of its value, a CUdeviceptr
/// (an array) or a FusedInputs (the consumer kernels' element function's inputs).
struct PassInput {
  void* address;
};

/// A segmented reduction over tiles of `shape` (s.count > 0, s.total > 0): kernel `tiles`
/// (in, s, bounds, agg, fix, out), then, with more than one tile, the fix-up of the operator and
/// type `op_type` ("plus_f32": ndp_reduce_seg_fixup_near_plus_f32, ndp_reduce_seg_chunks_plus_f32
/// where there is more than one chunk of tiles, then ndp_reduce_seg_fixup_plus_f32).
Status reduce_segments(Primitives& p, const cuda::Kernel& tiles, const std::string& op_type, PassInput in, DSegs s,
                       TileShape shape, CUdeviceptr out);
Status reduce_segments(Primitives& p, const std::string& tiles_kernel, const std::string& op_type, CUdeviceptr in,
                       DSegs s, TileShape shape, CUdeviceptr out);

/// A one-segment reduction of n > 0 elements of type t: kernel `partials_kernel` (in, n,
/// partials) writes a partial per block (a block per 16 KiB at least, one resident grid at most),
/// then scan.cu's `finish_kernel` (elements, n_elements, partials, nparts, out) folds them with
/// the unaligned ends of `elements` (for computed elements: none, elements 0).
Status reduce_flat(Primitives& p, const cuda::Kernel& partials_kernel, PassInput in, int64_t n, ndp_elem_type t,
                   const std::string& finish_kernel, CUdeviceptr elements, CUdeviceptr out);

/// A scan's kind, the kernels' `inclusive` argument: kScanOffsets is an inclusive scan of one
/// segment that also writes the identity just before out (offsets from lengths in one launch).
enum ScanMode : int { kScanExclusive = 0, kScanInclusive = 1, kScanOffsets = 2 };

/// A scan (s.total > 0) with `kernel` of tile shape `shape`: for one segment (s.count == 1) the
/// flat pass (in, n, mode, scratch, out), else the segmented one (in, s, bounds, mode, scratch,
/// out; never kScanOffsets).
Status scan_segments(Primitives& p, const cuda::Kernel& kernel, PassInput in, ScanMode mode, DSegs s, TileShape shape,
                     CUdeviceptr out);

/// Finds a pass kernel by name: among the embedded primitives (Primitives::kernel) or in a
/// consumer module (runtime/gpu/fused.cpp).
using KernelFinder = std::function<Result<cuda::Kernel>(const std::string&)>;

/// seg_reduce with its passes `prefix` + "reduce_seg_<op>_<type>" and "reduce_flat_<op>_<type>"
/// (found by `find`) reading `in`; the fix-up and finish kernels are scan.cu's. `elements` is
/// the input array, whose unaligned ends the finish folds, or 0 for computed elements. An array
/// whose segments hold 4 elements or more on average takes "reduce_seg_wide_<op>_<type>"
/// (Note [Segmented reduction shape]).
Result<ndp_status> reduce_with(Primitives& p, const KernelFinder& find, const std::string& prefix, PassInput in,
                               CUdeviceptr elements, ndp_op op, ndp_elem_type t, DSegs s, CUdeviceptr out);

/// seg_scan with its passes `prefix` + "scan_flat_<op>_<type>" and "scan_seg_<op>_<type>", of
/// the tile shape `shape` gives for the element size.
Result<ndp_status> scan_with(Primitives& p, const KernelFinder& find, const std::string& prefix, PassInput in, ndp_op op,
                             ScanMode mode, ndp_elem_type t, DSegs s, ShapeOf shape, CUdeviceptr out);

/// Launches `kernel` with `first` (an argument's address) followed by args by value.
template <class... Args>
Status launch_first(Primitives& p, const cuda::Kernel& kernel, cuda::LaunchConfig c, PassInput first, Args... args) {
  void* parameters[] = {first.address, static_cast<void*>(&args)..., nullptr};
  return cuda::launch(p.device(), kernel, c, parameters);
}

}  // namespace ndp::runtime::gpu::detail
