// Warp level: an order-keeping fold of the warp's 32 values, for operators that need not commute
// (max and min keep the leftmost of equal values; the segmented operator is not commutative).
#pragma once

#include "shuffle.cuh"

namespace ndp::runtime::gpu::device {

/// Lane 0 receives x(0) op x(1) op ... op x(31) (kLaterFirst: x(31) op ... op x(0)). Every step
/// combines a run of lanes with the run right after it, so the sequence order is kept and op
/// need not commute. The other lanes receive partial folds.
template <bool kLaterFirst = false, class V, class Combine>
__device__ __forceinline__ V warp_fold(V x, Combine op) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    V o = shuffle_down(x, d);  // lanes [lane + d, lane + 2d), the run after this lane's
    if (lane + d < 32) {
      if constexpr (kLaterFirst) x = op(o, x);
      else x = op(x, o);
    }
  }
  return x;
}

}  // namespace ndp::runtime::gpu::device
