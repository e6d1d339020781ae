// Block level: a block scan's prefix callback that carries the running fold of (value, head
// flag) pairs from one round of the scan to the next, when a block scans more than one chunk.
#pragma once

#include "../thread/operators.cuh"

namespace ndp::runtime::gpu::device {

/// One block's running prefix across the rounds of a block-wide scan (cub's prefix callback,
/// called by warp 0): it returns the fold of the earlier rounds and adds this round's aggregate.
template <class F>
struct CarryPrefix {
  using T = typename F::value_type;
  SegPair<T> running;
  __device__ SegPair<T> operator()(const SegPair<T>& block_aggregate) {
    SegPair<T> old = running;
    running = SegOp<F>()(running, block_aggregate);
    return old;
  }
};

}  // namespace ndp::runtime::gpu::device
