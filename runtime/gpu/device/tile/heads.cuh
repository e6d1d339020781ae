// Tile level: a segmented pass tile's head flags, one byte an element in shared memory. The
// block marks the boundaries that fall in the tile (mark_heads), every thread reads its items'
// flags (read_heads), and the block clears them for the next tile (clear_heads).
#pragma once

#include "../thread/boundaries.cuh"
#include "../thread/items.cuh"

namespace ndp::runtime::gpu::device {

/// The head flags of the thread's N blocked items (items threadIdx.x·N ... of the tile).
template <int N>
__device__ __forceinline__ Heads<N> read_heads(const unsigned char* heads) {
  static_assert(N % 8 == 0, "whole 8-byte words of head flags per thread");
  Heads<N> h;
  const auto* words = reinterpret_cast<const unsigned long long*>(heads) + threadIdx.x * (N / 8);
#pragma unroll
  for (int k = 0; k < N / 8; ++k) h.w[k] = words[k];
  return h;
}

/// Zeroes the head flags of a tile (before mark_heads, with a barrier between: kernels clear
/// them once at the start and then at the end of every tile, after their last read).
template <class S>
__device__ __forceinline__ void clear_heads(unsigned char* heads) {
  for (int i = threadIdx.x; i < S::kTile / 16; i += S::kBlock) reinterpret_cast<uint4*>(heads)[i] = uint4{0, 0, 0, 0};
}

/// Boundaries a thread loads at a time (mark_heads, reduce_seg_tiles): their loads in flight
/// together where short segments put many boundaries in a tile.
constexpr int kBoundaryLoads = 4;

/// Marks the boundaries of tile [t0, t0 + n) in heads: off(j) - t0 for j in [a - 1, b), where a
/// and b are the tile's and the next tile's bounds. Only j = a - 1 can fall at t0 (a head there),
/// and off(j) = t0 + n (j = b - 1 at most) belongs to the next tile.
template <class S>
__device__ __forceinline__ void mark_heads(const Segs& s, long long t0, int n, long long a, long long b,
                                           unsigned char* heads) {
  long long j = a - 1 + threadIdx.x;
  for (; j + (kBoundaryLoads - 1) * S::kBlock < b; j += kBoundaryLoads * S::kBlock) {
    long long o[kBoundaryLoads];
#pragma unroll
    for (int u = 0; u < kBoundaryLoads; ++u) o[u] = seg_off(s, j + u * S::kBlock) - t0;
#pragma unroll
    for (int u = 0; u < kBoundaryLoads; ++u)
      if (o[u] >= 0 && o[u] < n) heads[o[u]] = 1;
  }
  for (; j < b; j += S::kBlock) {
    const long long o = seg_off(s, j) - t0;
    if (o >= 0 && o < n) heads[o] = 1;
  }
}

}  // namespace ndp::runtime::gpu::device
