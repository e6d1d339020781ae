// Tile level (what one block does): the fix-up of a segmented reduction, which completes the
// segments that span tiles from the tiles' aggregates.
//
// Note [Segmented reduction fix-up]
// A segment that spans tiles gets only its last tile's part from the tile pass; the rest is the
// exclusive scan of the tiles' aggregates (SegOp) at that tile: the fold of the aggregates from
// the last tile before it that holds a head. Two ways to it:
//  * reduce_seg_fixup_near, first, a thread per tile: where the tile just before holds a head
//    (segments shorter than tiles: nearly every tile), its aggregate is the whole carry. Other
//    tiles are walked back by their warp, 32 tiles a round, for up to kNearRounds rounds (8:
//    SpMV's power-law rows span up to 213 tiles). A tile so completed gets fix[t] = -1; a
//    longer walk is left to the scan below and marks fix[0] (never a segment: tile 0 completes
//    its own) kFixDeferred.
//  * The scan, two kernels over chunks of kCarryChunk aggregates, so that it is spread over the
//    GPU (a single block took 90 us under Nsight Compute for the 65 536 tiles of 2^28 floats, a
//    fifth of the reduction). They return at once unless fix[0] is kFixDeferred:
//    - reduce_seg_chunks: chunk_agg[c] = the fold of chunk c's aggregates, a block each;
//    - reduce_seg_fixup: block c folds chunk_agg[0 .. c) (one round of the block scan per
//      kCarryChunk of them: one round below 2^33 elements), then scans its own chunk from there
//      and completes out[fix[t]] for the tiles still to be completed.
// Each scan is a chain of about a thousand dependent instructions (two block scans of pairs):
// 9-11 us under Nsight Compute however few the tiles, against about 4 us for the near walk. The
// walk folds later tiles first (v(u) ⊕ (v(u + 1) ⊕ ...)), the scan earlier first: float sums may
// round differently between the two, and each gives the same result on every run.
#pragma once

#include <cub/block/block_scan.cuh>

#include "../block/carry_prefix.cuh"
#include "../warp/fold.cuh"
#include "pass_shape.cuh"

namespace ndp::runtime::gpu::device {

/// A thread's kCarryItems aggregates from agg[first ...] (none past the end) and their fold.
template <class F>
__device__ __forceinline__ SegPair<typename F::value_type> load_carries(const SegPair<typename F::value_type>* agg,
                                                                        long long first, long long end,
                                                                        SegPair<typename F::value_type> (&a)[kCarryItems]) {
  using T = typename F::value_type;
  const SegPair<T> none{F::identity(), 0};
  SegPair<T> fold = none;
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) {
    a[i] = first + i < end ? agg[first + i] : none;
    fold = SegOp<F>()(fold, a[i]);
  }
  return fold;
}

constexpr long long kFixDeferred = -2;
/// Rounds of 32 tiles a warp walks back for one tile before leaving it to the scan.
constexpr int kNearRounds = 8;

/// The near fix-up (Note [Segmented reduction fix-up]): grid of kCarryBlock-thread blocks, a
/// thread per tile.
template <class F>
__device__ void reduce_seg_fixup_near(const SegPair<typename F::value_type>* agg, long long* fix, long long ntiles,
                                      typename F::value_type* out) {
  using T = typename F::value_type;
  const int lane = threadIdx.x & 31;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long k = t > 0 && t < ntiles ? fix[t] : -1;
  const SegPair<T> before = k >= 0 ? agg[t - 1] : SegPair<T>{F::identity(), 1};
  T carry = before.v;
  bool left = k >= 0 && !before.f;  // the carry reaches further back
  // The warp walks back for each such lane in turn, from the tile before its `before`.
  for (unsigned walkers = __ballot_sync(~0u, left); walkers; walkers &= walkers - 1) {
    const int w = __ffs(static_cast<int>(walkers)) - 1;
    const long long from = __shfl_sync(~0u, t, w) - 2;
    T acc = shuffle_from(carry, w);  // the fold of the tiles walked so far (the later ones)
    bool reached = false;
    for (int r = 0; r < kNearRounds && !reached; ++r) {
      // Lane l reads tile from - 32r - l; before tile 0, a head with nothing after it.
      const long long u = from - 32LL * r - lane;
      const SegPair<T> p = u >= 0 ? agg[u] : SegPair<T>{F::identity(), 1};
      const unsigned heads = __ballot_sync(~0u, p.f != 0);
      const int stop = heads ? __ffs(static_cast<int>(heads)) - 1 : 31;  // the nearest head
      // Lane 0: v(stop) ⊕ ... ⊕ v(0), the tiles from the nearest head on, in sequence order.
      const T run = warp_fold<true>(lane <= stop ? p.v : F::identity(), Apply<F>());
      acc = F::apply(shuffle_from(run, 0), acc);
      reached = heads != 0;
    }
    if (lane == w && reached) {
      carry = acc;
      left = false;
    }
  }
  if (k < 0) return;
  if (left) {
    fix[0] = kFixDeferred;  // every such thread writes the same value
    return;
  }
  out[k] = F::apply(carry, out[k]);
  fix[t] = -1;
}

/// chunk_agg[blockIdx.x] = the fold of the aggregates of chunk blockIdx.x (if any tile is left).
template <class F>
__device__ void reduce_seg_chunks(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                                  SegPair<typename F::value_type>* chunk_agg) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kCarryBlock, kPassScan>;
  __shared__ typename Scan::TempStorage storage;
  if (fix[0] != kFixDeferred) return;  // the near fix-up completed every tile
  SegPair<T> a[kCarryItems], unused, total;
  const SegPair<T> fold = load_carries<F>(
      agg, static_cast<long long>(blockIdx.x) * kCarryChunk + threadIdx.x * kCarryItems, ntiles, a);
  Scan(storage).ExclusiveScan(fold, unused, SegPair<T>{F::identity(), 0}, SegOp<F>(), total);
  if (threadIdx.x == 0) chunk_agg[blockIdx.x] = total;
}

/// The fix-up of chunk blockIdx.x (Note [Segmented reduction fix-up]): out[fix[t]] completed with
/// the fold of every aggregate before tile t, for the chunk's tiles t that the near fix-up left
/// (chunk_agg unread for chunk 0). Every global load a thread makes is issued before its first
/// store: its tiles' aggregates and fix entries, then the parts in out they complete (distinct
/// segments, one per tile). Loaded item by item between the stores, as the compiler must when
/// out may alias fix, they were 16 dependent round trips a thread: 12 us of a 250 us SpMV under
/// Nsight Compute.
template <class F>
__device__ void reduce_seg_fixup(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                                 const SegPair<typename F::value_type>* chunk_agg, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kCarryBlock, kPassScan>;
  __shared__ typename Scan::TempStorage storage;
  if (fix[0] != kFixDeferred) return;  // the near fix-up completed every tile
  const long long first = static_cast<long long>(blockIdx.x) * kCarryChunk + threadIdx.x * kCarryItems;
  SegPair<T> a[kCarryItems];
  const SegPair<T> own = load_carries<F>(agg, first, ntiles, a);
  long long k[kCarryItems];  // the segment tile first + i completes, or -1
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) k[i] = first + i < ntiles ? fix[first + i] : -1;
  CarryPrefix<F> prefix{SegPair<T>{F::identity(), 0}};
  SegPair<T> before[kCarryItems], carry;
  for (long long base = 0; base < blockIdx.x; base += kCarryChunk) {  // the chunks before this one
    carry = load_carries<F>(chunk_agg, base + threadIdx.x * kCarryItems, blockIdx.x, before);
    Scan(storage).ExclusiveScan(carry, carry, SegOp<F>(), prefix);
    __syncthreads();
  }
  T part[kCarryItems];
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) part[i] = k[i] >= 0 ? out[k[i]] : F::identity();
  Scan(storage).ExclusiveScan(own, carry, SegOp<F>(), prefix);
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) {
    if (k[i] >= 0) out[k[i]] = F::apply(carry.v, part[i]);
    carry = SegOp<F>()(carry, a[i]);
  }
}

}  // namespace ndp::runtime::gpu::device
