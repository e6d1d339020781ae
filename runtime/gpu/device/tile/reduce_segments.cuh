// Tile level (what one block does): the tile pass of a segmented reduction (Note [Single-pass
// scans and reductions] in scan.cu). One pass over the tiles, with no waiting, writes every
// segment that ends in a tile and the tile's aggregate; the fix-up (tile/reduce_fixup.cuh)
// completes the segments that span tiles.
#pragma once

#include <cub/block/block_scan.cuh>

#include "../block/fold_warps.cuh"
#include "../warp/fold.cuh"
#include "heads.cuh"
#include "load_store.cuh"

namespace ndp::runtime::gpu::device {

/// The fold of a fetched tile in sequence order, in thread 0 (all threads call it; fold_warps).
/// A warp's part is its lanes' runs (16-byte words, or single elements) taken step by step,
/// lanes in order within a step.
template <class F, class S>
__device__ __forceinline__ typename F::value_type fold_fetched(const TileFetch<typename F::value_type, S>& f,
                                                               typename F::value_type* warp_result) {
  using T = typename F::value_type;
  T acc = F::identity();  // lane 0: the fold of the warp's steps so far
  if (f.words) {
#pragma unroll
    for (int j = 0; j < S::kItems / kVec<T>; ++j) {
      T run = F::identity();
#pragma unroll
      for (int c = 0; c < kVec<T>; ++c) run = F::apply(run, f.r[j * kVec<T> + c]);
      acc = F::apply(acc, warp_fold(run, Apply<F>()));
    }
  } else {
#pragma unroll
    for (int j = 0; j < S::kItems; ++j) acc = F::apply(acc, warp_fold(F::apply(F::identity(), f.r[j]), Apply<F>()));
  }
  return fold_warps<F, S::kWarps>(acc, warp_result);
}

/// The one-pass part of a segmented reduction (tiles of S::kTile): out[k] for
/// every segment k ending in the tile (tile 0 also writes the leading empty segments), scanned
/// from the identity; agg[tile] = the tile's aggregate pair; fix[tile] = the segment that began
/// in an earlier tile and ends here (so out has only its part in this tile), or -1.
/// Needs s.total > 0.
template <class F, class S = PassShape<typename F::value_type>, class Src>
__device__ void reduce_seg_tiles(const Src& in, Segs s, const long long* bounds, SegPair<typename F::value_type>* agg,
                                 long long* fix, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, S::kBlock, kPassScan>;
  constexpr int kTileN = S::kTile;
  __shared__ PassSmem<T, S> sm;
  __shared__ typename Scan::TempStorage storage;
  __shared__ T warp_result[S::kWarps];
  const long long ntiles = (s.total + kTileN - 1) / kTileN;
  clear_heads<S>(sm.heads);
  __syncthreads();
  // Segments as long as a tile on average: most tiles hold no boundary and take the fast path
  // below, so each block takes a contiguous run of tiles. A grid stride could give some blocks
  // every tile with a boundary (the slow kind) and the others none, wherever the segments'
  // length divides the stride's span (2^15 measured 0.521 ms with the stride, 0.446 ms in
  // runs). Shorter segments keep the grid stride, which measured 2-3% faster for them.
  const bool runs = s.total >= kTileN * s.count;
  const long long first = runs ? ntiles * blockIdx.x / gridDim.x : blockIdx.x;
  const long long last = runs ? ntiles * (blockIdx.x + 1) / gridDim.x : ntiles;
  const long long step = runs ? 1 : gridDim.x;
  // A tile's bounds are read one tile ahead, so that its offsets can be loaded (mark_heads) as
  // soon as its values, not a load later.
  long long next_a = first < last ? tile_bound(s, bounds, first, kTileN) : 0;
  long long next_b = first < last ? tile_bound(s, bounds, first + 1, kTileN) : 0;
  for (long long tile = first; tile < last; tile += step) {
    const long long t0 = tile * kTileN;
    const int n = static_cast<int>(s.total - t0 < kTileN ? s.total - t0 : kTileN);
    const TileFetch<T, S> f = fetch_tile<F, S>(in, t0, n);
    const long long a = next_a, b = next_b;
    if (tile + step < last) {
      next_a = step == 1 ? b : tile_bound(s, bounds, tile + step, kTileN);
      next_b = tile_bound(s, bounds, tile + step + 1, kTileN);
    }
    if (tile > 0 && a == b) {
      // No segment ends in the tile (segments longer than a tile): it is one segment's part,
      // so its aggregate is a plain fold, with no shared-memory exchange and no block scan.
      const bool head0 = seg_off(s, a - 1) == t0;  // that segment starts at t0
      const T fold = fold_fetched<F, S>(f, warp_result);
      if (threadIdx.x == 0) {
        agg[tile] = SegPair<T>{fold, head0 ? 1 : 0};
        fix[tile] = -1;
      }
      __syncthreads();  // warp_result is read before the next tile writes it
      continue;
    }
    mark_heads<S>(s, t0, n, a, b, sm.heads);
    put_tile(f, sm.vals);
    __syncthreads();
    T x[S::kItems];
    read_items(sm.vals, x);
    const Heads<S::kItems> h = read_heads<S::kItems>(sm.heads);
    const bool head0 = sm.heads[0];  // segment a - 1 starts at t0
    SegPair<T> before, aggregate;
    Scan(storage).ExclusiveScan(fold_items<F>(x, h), before, SegPair<T>{F::identity(), 0}, SegOp<F>(), aggregate);
    scan_items<F>(x, h, before.v, true);
    write_items(sm.vals, x);
    __syncthreads();
    clear_heads<S>(sm.heads);  // last read before the barrier above
    // Segment j - 1 ends at off(j) in (t0, t0 + n] for j in [a, b); before tile 0's a, only
    // empty segments.
    long long j = (tile == 0 ? 1 : a) + threadIdx.x;
    for (; j + (kBoundaryLoads - 1) * S::kBlock < b; j += kBoundaryLoads * S::kBlock) {
      long long e[kBoundaryLoads], d[kBoundaryLoads];
#pragma unroll
      for (int u = 0; u < kBoundaryLoads; ++u) {
        e[u] = seg_off(s, j + u * S::kBlock);
        d[u] = seg_off(s, j + u * S::kBlock - 1);
      }
#pragma unroll
      for (int u = 0; u < kBoundaryLoads; ++u)
        out[j + u * S::kBlock - 1] = e[u] == d[u] ? F::identity() : sm.vals[slot<T>(static_cast<int>(e[u] - 1 - t0))];
    }
    for (; j < b; j += S::kBlock) {
      const long long e = seg_off(s, j);
      out[j - 1] = e == seg_off(s, j - 1) ? F::identity() : sm.vals[slot<T>(static_cast<int>(e - 1 - t0))];
    }
    if (threadIdx.x == 0) {
      agg[tile] = aggregate;
      fix[tile] = tile > 0 && b > a && !head0 ? a - 1 : -1;
    }
    __syncthreads();  // the next tile's marks and values wait for this tile's reads and clearing
  }
}

}  // namespace ndp::runtime::gpu::device
