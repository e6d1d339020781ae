// Tile level (what one block does): the radix sort's upsweep, which counts the digits of every
// byte position of the keys in one read of the input, and the digit starts those counts give
// (Note [GPU radix sort] in sort.cu).
#pragma once

#include <cub/block/block_scan.cuh>

#include "../thread/sort_keys.cuh"

namespace ndp::runtime::gpu::device {

constexpr int kUpsweepItems = 8;  // elements a thread loads before it counts any

/// hist[b · 256 + d] += the number of keys whose byte b is d, for b < key bytes (hist zeroed by
/// the host); *collapsed |= 1 if some value's key collapses (key_collapses). Tiles of
/// kUpsweepItems elements a thread, striped, grid stride.
template <class Load>
__device__ void radix_upsweep(Load load, long long n, unsigned long long* hist, unsigned* collapsed) {
  using Raw = typename Load::Raw;
  using K = decltype(load.key(Raw{}));
  constexpr int kBytes = sizeof(K);
  __shared__ unsigned h[kBytes][256];
  for (int i = threadIdx.x; i < kBytes * 256; i += blockDim.x) (&h[0][0])[i] = 0;
  __syncthreads();
  bool any_collapse = false;
  const long long tile = static_cast<long long>(blockDim.x) * kUpsweepItems;
  for (long long base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
    const bool full = n - base >= tile;
    Raw raw[kUpsweepItems];
    if (full) {
#pragma unroll
      for (int u = 0; u < kUpsweepItems; ++u) raw[u] = load.raw(base + u * blockDim.x + threadIdx.x);
    } else {
#pragma unroll
      for (int u = 0; u < kUpsweepItems; ++u) {
        const long long i = base + u * blockDim.x + threadIdx.x;
        if (i < n) raw[u] = load.raw(i);
      }
    }
#pragma unroll
    for (int u = 0; u < kUpsweepItems; ++u) {
      if (!full && base + u * blockDim.x + threadIdx.x >= n) continue;
      any_collapse |= Load::collapses(raw[u]);
      const K k = load.key(raw[u]);
#pragma unroll
      for (int b = 0; b < kBytes; ++b) atomicAdd(&h[b][static_cast<unsigned>(k >> (8 * b)) & 255u], 1u);
    }
  }
  if (__syncthreads_or(any_collapse) && threadIdx.x == 0) atomicOr(collapsed, 1u);
  for (int i = threadIdx.x; i < kBytes * 256; i += blockDim.x)
    if ((&h[0][0])[i]) atomicAdd(&hist[i], static_cast<unsigned long long>((&h[0][0])[i]));
}

/// digit_start[b · 256 + d] = the elements whose byte b is below d (one block of 256 threads per
/// byte position).
__device__ inline void radix_digit_starts(const unsigned long long* hist, long long* digit_start) {
  using Scan = cub::BlockScan<long long, 256>;
  __shared__ typename Scan::TempStorage storage;
  const int i = blockIdx.x * 256 + threadIdx.x;
  long long start;
  Scan(storage).ExclusiveSum(static_cast<long long>(hist[i]), start);
  digit_start[i] = start;
}

}  // namespace ndp::runtime::gpu::device
