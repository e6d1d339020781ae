// The index of the extreme (max_index, min_index): the second pass of
// Primitives::seg_index_of_extreme, after the segmented max or min (Note [Index of the extreme]
// in runtime/gpu/seg_reduce.cpp).
#include <cuda/std/limits>

#include "block/fold_warps.cuh"
#include "thread/operators.cuh"
#include "tile/segments.cuh"
#include "warp/fold.cuh"

using namespace ndp::runtime::gpu::device;

namespace {

/// out[k] (max_int beforehand) lowered to j for an element j of segment k equal to m[k]. An
/// element that cannot lower it (one later than what is there) skips the atomic: with many equal
/// extremes (a segment of zeros), only the first tiles' threads write.
__device__ __forceinline__ void offer(long long* out, long long k, long long j) {
  if (j < *static_cast<volatile long long*>(out + k)) atomicMin(out + k, j);
}

/// Elements equal to their segment's m: out[k] = the least position j within segment k, in
/// tiles of kTile (one per block at a time). A tile inside one segment (no segment ends in it
/// before its last element) compares against that segment's m without marking segment ids, and
/// is skipped once a position before it was found.
template <class T>
__device__ void first_equal(const T* v, const T* m, Segs s, long long* out) {
  __shared__ long long marks[kPaddedTile];
  __shared__ SegmentIdScan::TempStorage storage;
  const long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const TileSpan ts = s.offsets ? block_tile_span(s, tile) : TileSpan(s, tile);
    if (ts.a == ts.b) {
      const long long k = ts.a - 1, begin = s.begin(k);
      // A tile after the least position found so far cannot lower it: it is not read. Tiles go
      // to blocks in order, so once a block finds the segment's extreme, most later tiles skip
      // (half of the pass over a long segment, on average). Each thread decides for its own
      // loads: this branch has no barrier.
      if (*static_cast<volatile long long*>(out + k) <= ts.t0 - begin) continue;
      const T mk = m[k];
      T x[kScanItems];
#pragma unroll
      for (int i = 0; i < kScanItems; ++i) {
        const long long q = threadIdx.x + static_cast<long long>(i) * kScanBlock;
        x[i] = q < ts.n ? v[ts.t0 + q] : mk;
      }
      long long best = cuda::std::numeric_limits<long long>::max();
#pragma unroll
      for (int i = kScanItems - 1; i >= 0; --i) {
        const long long q = threadIdx.x + static_cast<long long>(i) * kScanBlock;
        if (q < ts.n && x[i] == mk) best = ts.t0 + q - begin;
      }
      if (best != cuda::std::numeric_limits<long long>::max()) offer(out, k, best);
      continue;
    }
    tile_segment_ids(s, ts, marks, storage);
    for (int i = threadIdx.x; i < ts.n; i += blockDim.x) {
      const long long p = ts.t0 + i, k = marks[padded(i)];
      if (v[p] == m[k]) offer(out, k, p - s.begin(k));
    }
    __syncthreads();  // the next tile's marks wait for this tile's reads
  }
}

/// Both passes of a small input at once (Note [Small inputs in one launch] in
/// runtime/gpu/primitives.cpp): a block a segment folds its segment to the extreme m, then finds
/// the least position holding m. The fold's order differs from the tiled reduction's only in
/// which of +0 and -0 it keeps, which the comparison with m does not tell apart; NaNs never
/// displace, as there.
template <Op O, class T>
__device__ void extreme_index_by_block(const T* v, Segs s, long long* out) {
  using F = Fn<O, T>;
  constexpr int kWarps = kScanBlock / 32;
  constexpr long long kNone = cuda::std::numeric_limits<long long>::max();
  __shared__ T warp_m[kWarps];
  __shared__ long long warp_j[kWarps];
  __shared__ T segment_m;
  for (long long k = blockIdx.x; k < s.count; k += gridDim.x) {
    const long long begin = s.begin(k), end = s.end(k);
    T acc = F::identity();
    for (long long p = begin + threadIdx.x; p < end; p += blockDim.x) acc = F::apply(acc, v[p]);
    acc = warp_fold(acc, [](T x, T y) { return F::apply(x, y); });
    const T m = fold_warps<F, kWarps>(acc, warp_m);
    if (threadIdx.x == 0) segment_m = m;
    __syncthreads();
    const T mk = segment_m;
    long long least = kNone;  // a thread's positions rise: its first match is its least
    for (long long p = begin + threadIdx.x; p < end; p += blockDim.x)
      if (v[p] == mk) {
        least = p - begin;
        break;
      }
    least = warp_fold(least, [](long long x, long long y) { return x < y ? x : y; });
    if ((threadIdx.x & 31) == 0) warp_j[threadIdx.x >> 5] = least;
    __syncthreads();
    if (threadIdx.x == 0) {
      for (int w = 0; w < kWarps; ++w) least = warp_j[w] < least ? warp_j[w] : least;
      out[k] = least;
    }
    __syncthreads();  // the next segment reuses the shared slots
  }
}

}  // namespace

#define NDP_EXTREME_INDEX_BY_BLOCK(T, name)                                                          \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                           \
      ndp_extreme_index_by_block_max_##name(const T* v, Segs s, long long* out) {                    \
    extreme_index_by_block<Op::max>(v, s, out);                                                      \
  }                                                                                                  \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                           \
      ndp_extreme_index_by_block_min_##name(const T* v, Segs s, long long* out) {                    \
    extreme_index_by_block<Op::min>(v, s, out);                                                      \
  }
NDP_FOR_NUMBERS(NDP_EXTREME_INDEX_BY_BLOCK)
NDP_EXTREME_INDEX_BY_BLOCK(unsigned char, char)

#define NDP_FIRST_EQUAL(T, name)                                                                       \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                           \
      ndp_first_equal_##name(const T* v, const T* m, Segs s, long long* out) {                       \
    first_equal(v, m, s, out);                                                                       \
  }
NDP_FOR_NUMBERS(NDP_FIRST_EQUAL)
NDP_FIRST_EQUAL(unsigned char, char)
