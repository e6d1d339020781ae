// Tile level: the decoupled look-back (Note [Single-pass scans and reductions] in scan.cu), as
// cub::BlockScan's prefix callback. Warp 0 of a block publishes its tile's aggregate, folds the
// records of the preceding tiles, the nearest first, until one holds an inclusive prefix, and
// publishes its own.
#pragma once

#include "../warp/fold.cuh"
#include "look_back_records.cuh"

namespace ndp::runtime::gpu::device {

/// Tiles each lane of the look-back warp examines per round: a round covers 32·depth tiles,
/// their records loaded together. A tile before an inclusive one has always published, so a
/// wide round never waits for nothing, but every record costs an L2 load. Which depth is faster
/// depends on the pass. Same runs on an H100 (session 12, 2^28 elements):
/// * flat scans and selections, depth 1: scan_f32 (CUB's DeviceScan::InclusiveSum alternating
///   with ndp's pass, in one process) 0.934-0.940 ms at depth 4, 0.916-0.934 at 2, 0.900 at 1;
///   scan_i64 1.622, 1.588, 1.563-1.567 (CUB 0.88 and 1.59 ms); pack_f32 (the primitives
///   benchmark) 0.980 ms at depth 4, 0.858-0.867 at 1.
/// * segmented scans, depth 4: at depth 1 they took 5-6% longer (segments of 4: 1.171 -> 1.230
///   ms; of 32: 1.021 -> 1.078).
/// (Depth 4 was chosen for all when the scans' tiles held half as many elements, and 32 tiles a
/// round then measured at half the bandwidth.)
inline constexpr int kFlatLookBackDepth = 1;
inline constexpr int kSegmentedLookBackDepth = 4;

/// cub::BlockScan's prefix callback (called by all of warp 0 with the tile's aggregate; lane 0's
/// result is the value the tile starts from): the look-back of Note [Single-pass scans and
/// reductions], kDepth records a lane each round.
template <class F, int kDepth>
struct LookBackPrefix {
  using T = typename F::value_type;
  LookBack<T> lb;
  long long tile;

  __device__ SegPair<T> operator()(const SegPair<T>& aggregate) {
    const int lane = threadIdx.x & 31;
    const SegPair<T> none{F::identity(), 0};
    if (tile == 0) {
      if (lane == 0) lb.publish(0, kTileInclusive, aggregate);
      return none;
    }
    if (lane == 0) lb.publish(tile, kTileAggregate, aggregate);
    SegPair<T> prefix = none;  // lane 0: the fold of the tiles looked at so far (the later ones)
    for (long long nearest = tile - 1;; nearest -= 32 * kDepth) {
      // Lane l examines tiles nearest - kDepth·l - i, i < kDepth (lane 0 the nearest ones);
      // their records are loaded together, then waited for.
      const long long first = nearest - kDepth * lane;
      typename LookBack<T>::Record r[kDepth];
#pragma unroll
      for (int i = 0; i < kDepth; ++i) r[i] = first - i >= 0 ? lb.peek(first - i) : typename LookBack<T>::Record{0, 0};
      SegPair<T> v = none;  // the fold of the lane's tiles, the nearest on the right
      bool reached = false;  // the lane met an inclusive prefix (or the start)
#pragma unroll
      for (int i = 0; i < kDepth; ++i) {
        if (reached) continue;
        const long long j = first - i;
        if (j < 0) {
          reached = true;
          continue;
        }
        SegPair<T> t;
        const unsigned what = lb.read(lb.status(r[i]) != kTileNothing ? r[i] : lb.wait(j), t);
        v = SegOp<F>()(t, v);
        reached = what == kTileInclusive;
      }
      const unsigned inclusive = __ballot_sync(~0u, reached);
      // Lanes 0 .. stop count, stop being the nearest lane that reached an inclusive prefix.
      const int stop = inclusive ? __ffs(static_cast<int>(inclusive)) - 1 : 31;
      if (lane > stop) v = none;
      v = warp_fold<true>(v, SegOp<F>());  // lane 0: lane stop's tiles · ... · lane 0's, in order
      prefix = SegOp<F>()(v, prefix);
      if (inclusive) break;
    }
    if (lane == 0) lb.publish(tile, kTileInclusive, SegOp<F>()(prefix, aggregate));
    return prefix;
  }
};

/// A flat scan's prefix callback: the look-back of plain values, as pairs with no heads.
template <class F>
struct FlatLookBackPrefix {
  using T = typename F::value_type;
  LookBackPrefix<F, kFlatLookBackDepth> pairs;
  __device__ T operator()(const T& aggregate) { return pairs(SegPair<T>{aggregate, 0}).v; }
};

}  // namespace ndp::runtime::gpu::device
