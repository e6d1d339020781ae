// Tile level (what one block does): the flat reduction of one segment (Note [Single-pass scans
// and reductions] in scan.cu). Every block folds its share of the array into one partial, in
// sequence order; one block then folds the partials with the array's unaligned ends.
#pragma once

#include "../block/fold_warps.cuh"
#include "../thread/sources.cuh"
#include "../thread/words.cuh"
#include "../warp/fold.cuh"
#include "pass_shape.cuh"

namespace ndp::runtime::gpu::device {

/// partials[blockIdx.x] = the fold, in warp order, of each warp's lane-0 `acc` (all threads
/// of the block call it).
template <class F>
__device__ __forceinline__ void write_block_partial(typename F::value_type acc, typename F::value_type* partials) {
  __shared__ typename F::value_type warp_result[kPassWarps];
  const typename F::value_type b = fold_warps<F, kPassWarps>(acc, warp_result);
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

/// 16-byte loads per lane in flight per step of reduce_flat_partials: 8 (4 KiB a warp) measured
/// 0.369 ms for 2^28 floats on an H100, against 0.389-0.393 ms with 4.
constexpr int kReduceLoads = 8;

/// partials[block] = the fold of the block's stretch of the aligned words (grid of
/// kPassBlock-thread blocks). Every warp owns a contiguous stretch, so folding its steps in
/// order keeps the sequence order.
template <class F>
__device__ void reduce_flat_partials(const typename F::value_type* in, long long n, typename F::value_type* partials) {
  using T = typename F::value_type;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const AlignedSpan span = aligned_span(in, n);
  const T* body = in + span.head;
  const long long nwarps = static_cast<long long>(gridDim.x) * kPassWarps;
  const long long w = static_cast<long long>(blockIdx.x) * kPassWarps + warp;
  const long long begin = span.words * w / nwarps, end = span.words * (w + 1) / nwarps;
  T acc = F::identity();  // lane 0: the fold of the warp's words so far
  for (long long base = begin; base < end; base += 32 * kReduceLoads) {
    Word<T> word[kReduceLoads] = {};
#pragma unroll
    for (int r = 0; r < kReduceLoads; ++r) {
      long long i = base + r * 32 + lane;
      if (i < end) word[r] = load_word(body + i * kVec<T>);
    }
#pragma unroll
    for (int r = 0; r < kReduceLoads; ++r) {
      T part = F::identity();
      if (base + r * 32 + lane < end) {
#pragma unroll
        for (int c = 0; c < kVec<T>; ++c) part = F::apply(part, word[r].e[c]);
      }
      acc = F::apply(acc, warp_fold(part, Apply<F>()));
    }
  }
  write_block_partial<F>(acc, partials);
}

/// *out = head ⊕ partials[0] ⊕ ... ⊕ partials[nparts - 1] ⊕ tail (one block of kPassBlock).
template <class F>
__device__ void reduce_flat_finish(const typename F::value_type* in, long long n,
                                   const typename F::value_type* partials, int nparts, typename F::value_type* out) {
  using T = typename F::value_type;
  __shared__ T warp_result[kPassWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long lo = static_cast<long long>(nparts) * threadIdx.x / kPassBlock;
  const long long hi = static_cast<long long>(nparts) * (threadIdx.x + 1) / kPassBlock;
  T acc = F::identity();
  for (long long i = lo; i < hi; ++i) acc = F::apply(acc, partials[i]);
  acc = warp_fold(acc, Apply<F>());
  if (lane == 0) warp_result[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    const AlignedSpan span = aligned_span(in, n);
    T r = F::identity();
    for (long long i = 0; i < span.head; ++i) r = F::apply(r, in[i]);
    for (int i = 0; i < kPassWarps; ++i) r = F::apply(r, warp_result[i]);
    for (long long i = span.head + span.words * kVec<T>; i < n; ++i) r = F::apply(r, in[i]);
    *out = r;
  }
}

/// partials[block] = the fold of the block's share of the n elements (one segment) of a batch
/// source (the consumer kernels of fused.cu), in sequence order: every warp owns a contiguous
/// stretch of runs of 32·K elements, lane l computing elements l, l + 32, ... of each run in one
/// batch; the run's elements are folded item by item across the lanes (warp_fold keeps the
/// order, as max and min of signed zeros need). scan.cu's ndp_reduce_flat_finish (with no
/// elements of its own) folds the partials.
template <class F, class Src>
__device__ void reduce_flat_batches(const Src& src, long long n, typename F::value_type* partials) {
  using T = typename F::value_type;
  constexpr int K = kPassItems<T>;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long runs = (n + 32 * K - 1) / (32 * K);
  const long long nwarps = static_cast<long long>(gridDim.x) * kPassWarps;
  const long long w = static_cast<long long>(blockIdx.x) * kPassWarps + warp;
  const long long begin = runs * w / nwarps, end = runs * (w + 1) / nwarps;
  T acc = F::identity();  // lane 0: the fold of the warp's runs so far
  for (long long run = begin; run < end; ++run) {
    const long long first = run * 32 * K + lane;
    const int count = items_below(first, 32, n, K);
    T v[K];
    src.items(first, 32, count, v);
#pragma unroll
    for (int j = 0; j < K; ++j) acc = F::apply(acc, warp_fold(j < count ? v[j] : F::identity(), Apply<F>()));
  }
  write_block_partial<F>(acc, partials);
}

}  // namespace ndp::runtime::gpu::device
