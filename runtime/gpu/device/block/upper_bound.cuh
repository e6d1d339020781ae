// Block level: upper_bound_off of an offsets descriptor searched by a whole block, kBlock
// boundaries a round, so that a block starting a tile waits for a few rounds of loads instead
// of one thread's log2(count) dependent ones (Note [Segments of a tile] in tile/segments.cuh).
#pragma once

#include "../common.cuh"

namespace ndp::runtime::gpu::device {

/// upper_bound_off(s, x) (s irregular) found by the whole block: every thread of a kBlock-thread
/// block calls it with the same x.
template <int kBlock>
__device__ inline long long block_upper_bound_off(const Segs& s, long long x) {
  // The answer is in [lo, hi]: off(j) <= x for j < lo, and off(j) > x for j >= hi (off(count
  // + 1) counts as above everything).
  long long lo = 0, hi = s.count + 1;
  while (lo < hi) {
    const long long span = hi - lo;
    const int probes = span < kBlock ? static_cast<int>(span) : kBlock;
    // Probe t at lo + (t + 1)·span / (probes + 1): increasing, within [lo, hi), and lo + t
    // when every candidate is probed.
    auto probe = [&](int t) { return lo + (static_cast<long long>(t) + 1) * span / (probes + 1); };
    const int t = static_cast<int>(threadIdx.x);
    const bool below = t < probes && s.offsets[probe(t)] <= x;
    const int c = __syncthreads_count(below);  // the probes at or below x are probes 0 .. c-1
    const long long new_lo = c > 0 ? probe(c - 1) + 1 : lo;
    hi = c < probes ? probe(c) : hi;
    lo = new_lo;
  }
  return lo;
}

}  // namespace ndp::runtime::gpu::device
