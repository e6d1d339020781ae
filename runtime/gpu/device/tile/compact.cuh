// Tile level (what one block does): order-preserving compaction in two passes over tiles of
// kTile (tile/fixed_tile.cuh), for flags from any source (thread/sources.cuh, and the consumer
// kernels' computed flags): per-tile counts of true flags, then, once the counts are scanned
// into each tile's start, the compaction of every tile. (Flags in an array take one pass:
// tile/select.cuh.)
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "../thread/sources.cuh"
#include "fixed_tile.cuh"

namespace ndp::runtime::gpu::device {

/// Elements per thread of a tile of kTile (a thread's share, strided by kScanBlock).
constexpr int kTileItems = kTile / kScanBlock;

/// counts[tile] = the true flags among the tile's kTile elements.
template <class Flags>
__device__ void count_tiles(const Flags& flags, long long n, long long* counts) {
  using Reduce = cub::BlockReduce<int, kScanBlock>;
  __shared__ typename Reduce::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    int mine = 0;
    if constexpr (Flags::kBatch) {
      bool f[kTileItems];
      const int count = items_below(threadIdx.x, kScanBlock, m, kTileItems);
      flags.items(t0 + threadIdx.x, kScanBlock, count, f);
      for (int j = 0; j < count; ++j) mine += f[j];
    } else {
      for (int i = threadIdx.x; i < m; i += blockDim.x) mine += flags(t0 + i);
    }
    int sum = Reduce(storage).Sum(mine);
    if (threadIdx.x == 0) counts[tile] = sum;
    __syncthreads();
  }
}

/// Compacts every tile: the values (or, with kPositions, the positions) whose flag is true go
/// to out[starts[tile] ...] in order (starts null: a single tile starting at 0). Values are
/// staged through shared memory so both the loads and the stores are coalesced.
template <class T, bool kPositions, class Flags>
__device__ void compact_tiles(const T* v, const Flags& flags, long long n, const long long* starts, T* out) {
  using Scan = cub::BlockScan<int, kScanBlock>;
  __shared__ TileSmem<T> sm;  // heads: the flags as 0/1; vals: the values, then the compacted ones
  __shared__ typename Scan::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    if constexpr (Flags::kBatch) {
      bool f[kTileItems];
      const int count = items_below(threadIdx.x, kScanBlock, m, kTileItems);
      flags.items(t0 + threadIdx.x, kScanBlock, count, f);
#pragma unroll
      for (int j = 0; j < kTileItems; ++j) sm.heads[j * kScanBlock + threadIdx.x] = j < count && f[j];
    } else {
      for (int i = threadIdx.x; i < kTile; i += blockDim.x) sm.heads[i] = i < m && flags(t0 + i);
    }
    if constexpr (!kPositions)
      for (int i = threadIdx.x; i < m; i += blockDim.x) sm.vals[padded(i)] = v[t0 + i];
    __syncthreads();
    int base = threadIdx.x * kScanItems;
    unsigned long long heads = thread_heads(sm);
    T x[kScanItems];
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) {
      if constexpr (kPositions) x[i] = static_cast<T>(t0 + base + i);
      else x[i] = head_at(heads, i) ? sm.vals[padded(base + i)] : T();
    }
    int count = __popcll(heads), before, total;  // every flag byte is 0 or 1
    Scan(storage).ExclusiveSum(count, before, total);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kScanItems; ++i)
      if (head_at(heads, i)) sm.vals[padded(before++)] = x[i];
    __syncthreads();
    long long start = starts ? starts[tile] : 0;
    for (int i = threadIdx.x; i < total; i += blockDim.x) out[start + i] = sm.vals[padded(i)];
    __syncthreads();
  }
}

}  // namespace ndp::runtime::gpu::device
