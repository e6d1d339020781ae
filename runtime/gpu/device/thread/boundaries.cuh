// Thread level: one thread's searches over a descriptor's boundaries off(0) = 0 ... off(count)
// = total: where a segment begins, and the first boundary past a position (by binary search, by
// division for regular descriptors, or guided by interpolation for the tile-bounds table).
#pragma once

#include "../common.cuh"

namespace ndp::runtime::gpu::device {

/// Boundary j of the descriptor: off(0) = 0 ... off(count) = total.
__device__ __forceinline__ long long seg_off(const Segs& s, long long j) {
  return s.offsets ? s.offsets[j] : j * s.regular_length;
}

/// The first j in [lo, hi) with off[j] > x, or hi when there is none (off nondecreasing).
__device__ inline long long upper_bound_in(const long long* off, long long lo, long long hi, long long x) {
  while (lo < hi) {
    long long mid = lo + (hi - lo) / 2;
    if (off[mid] > x) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// The first j in [0, count] with off(j) > x, or count + 1 when there is none.
__device__ inline long long upper_bound_off(const Segs& s, long long x) {
  if (!s.offsets) {
    if (s.regular_length <= 0) return x < 0 ? 0 : s.count + 1;
    long long j = x < 0 ? 0 : x / s.regular_length + 1;
    return j < s.count + 1 ? j : s.count + 1;
  }
  return upper_bound_in(s.offsets, 0, s.count + 1, x);
}

/// The first boundary j with off(j) > min(t·tile, total): bounds[t] (irregular descriptors) or
/// computed (regular ones, bounds null).
__device__ __forceinline__ long long tile_bound(const Segs& s, const long long* bounds, long long t, long long tile) {
  if (bounds) return bounds[t];
  long long x = t * tile;
  return upper_bound_off(s, x < s.total ? x : s.total);
}

// Note [Guided tile-bounds search]
// upper_bound_off of an offsets descriptor, for the tile-bounds table. Every round loads five
// offsets together and narrows [lo, hi], which holds the answer, by each of them:
// * two guesses, g and g + 1, where g is interpolated between the bracket's known offsets. Where
//   the offsets grow about evenly (segments of one length, or lengths drawn from one
//   distribution), off(g) <= x < off(g + 1) and the search ends after one round of loads;
// * the three pivots of a four-way search, so that uneven offsets (power-law rows) still take
//   at most log4(count) rounds.
// Nsight Compute, 2^28 elements (H100): a binary search took 19.6-25.2 us for segments of 32
// (2^23 offsets), and the four-way search alone 18.0-22.0 us, 12 rounds of dependent loads,
// most of them DRAM sectors of their own. With the guesses, the whole segmented reduction at
// 32 went from 0.490 to 0.474-0.479 ms, and the segmented scan at 4 from 1.200 to 1.163-1.172
// (the primitives benchmark, bench/results/gpu.md). The answer is exact whatever the guesses:
// they only choose which offsets to read.
constexpr int kGuidedFinish = 4;  // brackets narrower than this end in a binary search

__device__ inline long long upper_bound_off_guided(const Segs& s, long long x) {
  const long long* off = s.offsets;
  if (x >= s.total) return s.count + 1;  // off(count) = total <= x: past every boundary
  // Now off(0) = 0 <= x < total = off(count): the answer is in [1, count], and the bracket's
  // ends are known: off(lo - 1) = below <= x < above = off(hi).
  long long lo = 1, hi = s.count, below = 0, above = s.total;
  while (hi - lo >= kGuidedFinish) {
    const double fraction = static_cast<double>(x - below) / static_cast<double>(above - below);
    long long g = (lo - 1) + static_cast<long long>(fraction * static_cast<double>(hi - lo + 1));
    g = g < lo ? lo : (g > hi - 1 ? hi - 1 : g);
    const long long q = (hi - lo) / 4;
    const long long probe[5] = {g, g + 1, lo + q, lo + 2 * q, lo + 3 * q};
    long long value[5];
#pragma unroll
    for (int i = 0; i < 5; ++i) value[i] = off[probe[i]];
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      if (value[i] <= x) {
        if (probe[i] + 1 > lo) lo = probe[i] + 1, below = value[i];
      } else if (probe[i] < hi) {
        hi = probe[i], above = value[i];
      }
    }
  }
  return upper_bound_in(off, lo, hi, x);
}

}  // namespace ndp::runtime::gpu::device
