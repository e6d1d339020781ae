// Tile level: the fixed tile of kTile elements (kScanBlock threads of kScanItems) that the
// descriptor kernels (tile/segments.cuh) and the two-pass selection (tile/compact.cuh) work in:
// its geometry, where a tile lies among the segments, and its shared memory. (The scans,
// reductions and one-pass selection take the shapes of tile/pass_shape.cuh instead.) The host
// mirrors kTile and kScanBlock in runtime/gpu/seg_scan_impl.h.
#pragma once

#include "../block/upper_bound.cuh"
#include "../thread/boundaries.cuh"

namespace ndp::runtime::gpu::device {

constexpr int kScanBlock = 256;
constexpr int kScanItems = 8;
constexpr int kTile = kScanBlock * kScanItems;

/// Shared-memory index with one pad slot per 32, so blocked (thread-consecutive) accesses of
/// 4-byte elements do not collide on banks.
__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }
constexpr int kPaddedTile = kTile + kTile / 32;

/// Where tile `tile` lies: elements [t0, t0 + n); the boundaries j in [a, b) satisfy
/// t0 < off(j) <= t0 + n; the segment holding t0 is a - 1.
struct TileSpan {
  long long t0, n, a, b;
  TileSpan() = default;
  __device__ TileSpan(const Segs& s, long long tile) {
    t0 = tile * kTile;
    long long rest = s.total - t0;
    n = rest < kTile ? rest : kTile;
    a = upper_bound_off(s, t0);
    b = upper_bound_off(s, t0 + n);
  }
};

/// TileSpan(s, tile) with the block's searches (every thread of the block calls it).
__device__ inline TileSpan block_tile_span(const Segs& s, long long tile) {
  TileSpan ts;
  ts.t0 = tile * kTile;
  const long long rest = s.total - ts.t0;
  ts.n = rest < kTile ? rest : kTile;
  ts.a = block_upper_bound_off<kScanBlock>(s, ts.t0);
  ts.b = block_upper_bound_off<kScanBlock>(s, ts.t0 + ts.n);
  return ts;
}

/// Shared memory of one tile: values (padded) and head flags (one byte each, read eight at a
/// time as one word per thread).
template <class T>
struct TileSmem {
  T vals[kPaddedTile];
  alignas(8) unsigned char heads[kTile];
};

/// The thread's eight head flags (item i in byte i).
template <class T>
__device__ __forceinline__ unsigned long long thread_heads(const TileSmem<T>& sm) {
  static_assert(kScanItems == 8, "one 8-byte word of head flags per thread");
  return reinterpret_cast<const unsigned long long*>(sm.heads)[threadIdx.x];
}

__device__ __forceinline__ bool head_at(unsigned long long heads, int i) { return (heads >> (8 * i)) & 0xff; }

}  // namespace ndp::runtime::gpu::device
