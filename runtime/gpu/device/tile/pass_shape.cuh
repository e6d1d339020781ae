// Tile level: the shapes of the tile passes (scans, reductions, selections) and everything else
// tuned about their launches: threads and items a tile, resident blocks asked of
// __launch_bounds__, the block-scan algorithm, and the shared-memory layout of a tile's values.
// The host mirrors these numbers in runtime/gpu/seg_scan_impl.h.
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/std/type_traits>

namespace ndp::runtime::gpu::device {

constexpr int kPassBlock = 256;
constexpr int kPassWarps = kPassBlock / 32;
/// Resident blocks per SM asked of the segmented tile kernels (__launch_bounds__): left alone
/// they take up to 80 registers a thread, 3 blocks per SM; capped at 64 (no spills), 4 blocks
/// keep more tiles in flight.
constexpr int kPassMinBlocks = 4;
/// The same for the single-pass scans and selections (look-back kernels): while warp 0 looks
/// back, the block's other warps wait at a barrier, so more resident blocks keep more loads in
/// flight. On an H100, 5 blocks (48 registers) against 4 (54): scan_f32 0.72x -> 0.78x CUB,
/// pack 0.76x -> 0.88x; on an H200, 6 (40 registers, a few spilled) against 5: pack 0.88x ->
/// 0.90x, segmented scans 2-5% faster, scan_f32 the same.
constexpr int kLookBackMinBlocks = 6;
/// The fix-up of a segmented reduction: blocks of kCarryBlock threads, each for a chunk of
/// kCarryChunk tiles' aggregates (kCarryItems a thread).
constexpr int kCarryBlock = 256;
constexpr int kCarryItems = 8;
constexpr int kCarryChunk = kCarryBlock * kCarryItems;

/// Elements per thread: 64 bytes (16 elements of 4 bytes, 8 of 8), and 16 one-byte elements.
template <class T>
inline constexpr int kPassItems = sizeof(T) >= 4 ? 64 / static_cast<int>(sizeof(T)) : 16;

/// The shared-memory slot of tile element i: one pad slot per 128 bytes of 4-byte elements (per
/// 16 elements of 8 bytes), so that a warp's blocked reads (each thread its consecutive items)
/// and striped writes (each thread its 16-byte word) fall on distinct banks.
template <class T>
__device__ __forceinline__ int slot(int i) {
  return sizeof(T) == 8 ? i + (i >> 4) : i + (i >> 5);
}

/// The shape of a tile pass: kBlock threads of kItems elements each, a whole number of 16-byte
/// words and of 8-byte words of head flags. The default is kPassBlock × kPassItems<T>; the scans
/// of arrays take larger tiles (Note [Scan tile shape]).
template <int Block, int Items>
struct Shape {
  static constexpr int kBlock = Block;
  static constexpr int kItems = Items;
  static constexpr int kTile = Block * Items;
  static constexpr int kWarps = Block / 32;
};
template <class T>
using PassShape = Shape<kPassBlock, kPassItems<T>>;

// Note [Scan tile shape]
// A single-pass scan pays per tile for a ticket, a look-back and the block barriers around it
// (the block's other warps wait while warp 0 looks back), so larger tiles spend more of their
// time loading. bench/gpu/scan_shapes.cu times shapes against CUB's DeviceScan in one process;
// on an H100 (2^28 elements, session 6), with the tiles moved warp by warp (warp_part):
//   f32: 256 x 16 (the pass default, 6 blocks an SM) 0.81-0.82x CUB, 128 x 24 (CUB's sm_90
//        shape) 0.88x, 128 x 32 0.91x, 256 x 32 (4 blocks) 0.94-0.95x, 256 x 40 0.94x;
//   i64: 256 x 8 0.73-0.76x, 128 x 24 0.91x, 128 x 32 0.93-0.94x, 128 x 40 (4 blocks, 128
//        registers) 0.96-0.99x;
//   segmented f32 scans, 256 x 32 against 256 x 16: 15% faster at segment length 4, 17% at 32
//   and 1024.
// The consumer kernels (fused.cu) keep PassShape: their element function must fit in 64
// registers a thread. One-byte elements keep it too (not measured). Segmented reductions have
// their own (Note [Segmented reduction shape]). Taking the next ticket before storing a tile (to
// hide the atomic's latency) changed nothing beyond noise and was dropped.
template <class T>
using ScanShape = cuda::std::conditional_t<sizeof(T) == 4, Shape<256, 32>,
                                           cuda::std::conditional_t<sizeof(T) == 8, Shape<128, 40>, PassShape<T>>>;
/// Resident blocks asked of the scans with ScanShape (__launch_bounds__): 4 gives the shapes
/// above 64 and 128 registers a thread, no spills.
template <class T>
inline constexpr int kScanMinBlocks = sizeof(T) == 1 ? kLookBackMinBlocks : 4;

// Note [Segmented reduction shape]
// The tile pass of a segmented reduction has no look-back, but the same per-tile barriers. Same
// run on an H100 (bench/gpu/scan_shapes.cu, 2^28 f32, offsets descriptor, % of the device
// copy's bandwidth at segment lengths 1, 4, 32, 2^10, 2^15, 2^20):
//   256 x 16, 4 blocks an SM (PassShape): 77 79 67 66 70 76
//   256 x 16, 5 blocks:                    75 82 70 70 74 76
//   128 x 32, 6 blocks (80 registers):     63 81 71 77 78 81
// Larger tiles pay off once segments are not tiny (fewer, longer tiles per boundary), and lose
// at length 1, where a tile's boundaries are as many as its elements. So reductions of arrays
// whose segments hold 4 elements or more on average take WideReduceShape (the _wide kernels);
// the others, and the consumer kernels (64 registers), keep PassShape. (Loading the next tile
// of the grid stride before reducing the current one measured 1-5% slower and was dropped.)
// Later in session 6: boundaries loaded four at a time, and tiles with no segment end folded
// directly (reduce_seg_tiles), gave 83 82 69 73 79 80 in the benchmark (bench/results/gpu.md).
template <class T>
using WideReduceShape = Shape<128, 2 * kPassItems<T>>;
constexpr int kWideReduceMinBlocks = 6;

/// Shared-memory slots of a tile of S::kTile elements of T (slot<T>).
template <class T, class S>
inline constexpr int kSlots = S::kTile + S::kTile / (sizeof(T) == 8 ? 16 : 32);

/// Warp scans and one pass over the warp totals: fewer barriers than cub's default raking.
inline constexpr cub::BlockScanAlgorithm kPassScan = cub::BLOCK_SCAN_WARP_SCANS;

}  // namespace ndp::runtime::gpu::device
