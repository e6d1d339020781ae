// Tile level (what one block does): the single-pass scan, flat or segmented (Note [Single-pass
// scans and reductions] in scan.cu). A block takes tiles by ticket, scans each in shared memory
// and learns the value it starts from by decoupled look-back.
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/std/type_traits>

#include "heads.cuh"
#include "load_store.cuh"
#include "look_back.cuh"

namespace ndp::runtime::gpu::device {

/// out = the scan of the source `in` (out may be its array) over s, in one pass (kSegmented
/// false: one segment, no heads, and the block scans plain values rather than pairs). Blocks of
/// S::kBlock threads take tiles of S::kTile by ticket until none is left.
/// (Taking the next ticket early, to load the next tile during the look-back, made the scans
/// about 1.5x slower when we tried it: it doubles the tiles in flight, and so the look-back's
/// depth.)
template <class F, bool kSegmented, class S = PassShape<typename F::value_type>, class Src>
__device__ void scan_pass(const Src& in, Segs s, const long long* bounds, bool inclusive,
                          unsigned long long* scratch, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<cuda::std::conditional_t<kSegmented, SegPair<T>, T>, S::kBlock, kPassScan>;
  __shared__ cuda::std::conditional_t<kSegmented, PassSmem<T, S>, PassVals<T, S>> sm;
  __shared__ typename Scan::TempStorage storage;
  __shared__ unsigned long long ticket;
  const long long ntiles = (s.total + S::kTile - 1) / S::kTile;
  LookBack<T> lb(scratch);
  if constexpr (kSegmented) clear_heads<S>(sm.heads);
  for (;;) {
    if (threadIdx.x == 0) ticket = lb.draw(ntiles);
    // Also: the previous tile is done with sm and storage, and its head flags are cleared.
    __syncthreads();
    const long long tile = lb.begin(ticket);
    if (tile >= ntiles) break;
    const long long t0 = tile * S::kTile;
    const int n = static_cast<int>(s.total - t0 < S::kTile ? s.total - t0 : S::kTile);
    const TileFetch<T, S> f = fetch_tile<F, S>(in, t0, n);
    if constexpr (kSegmented)
      mark_heads<S>(s, t0, n, tile_bound(s, bounds, tile, S::kTile), tile_bound(s, bounds, tile + 1, S::kTile),
                    sm.heads);
    put_tile(f, sm.vals);
    // Heads are marked block-wide; values only move within a warp's part.
    if constexpr (kSegmented) __syncthreads();
    else __syncwarp();
    T x[S::kItems];
    read_items(sm.vals, x);
    if constexpr (kSegmented) {
      LookBackPrefix<F, kSegmentedLookBackDepth> prefix{lb, tile};
      const Heads<S::kItems> h = read_heads<S::kItems>(sm.heads);
      SegPair<T> before;
      Scan(storage).ExclusiveScan(fold_items<F>(x, h), before, SegOp<F>(), prefix);
      scan_items<F>(x, h, before.v, inclusive);
    } else {
      T thread_fold = F::identity();
#pragma unroll
      for (int i = 0; i < S::kItems; ++i) thread_fold = F::apply(thread_fold, x[i]);
      FlatLookBackPrefix<F> flat{{lb, tile}};
      T before;
      Scan(storage).ExclusiveScan(thread_fold, before, Apply<F>(), flat);
      scan_items<F>(x, NoHeads(), before, inclusive);
    }
    write_items(sm.vals, x);  // the thread's own slots
    // (Segmented: also, every thread is done reading heads before they are cleared.)
    if constexpr (kSegmented) __syncthreads();
    else __syncwarp();
    store_pass_tile<S>(sm.vals, t0, n, out);
    if constexpr (kSegmented) clear_heads<S>(sm.heads);  // last read before the barrier above
  }
}

}  // namespace ndp::runtime::gpu::device
