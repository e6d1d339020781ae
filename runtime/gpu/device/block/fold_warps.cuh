// Block level: the fold of the warps' partial results, in warp order, through shared memory.
#pragma once

namespace ndp::runtime::gpu::device {

/// The fold, in warp order, of each of kWarps warps' lane-0 `acc`, in thread 0 (all threads of
/// the block call it; one barrier; `warp_result`, kWarps slots of shared memory, is free again
/// after the next barrier).
template <class F, int kWarps>
__device__ __forceinline__ typename F::value_type fold_warps(typename F::value_type acc,
                                                             typename F::value_type* warp_result) {
  using T = typename F::value_type;
  if ((threadIdx.x & 31) == 0) warp_result[threadIdx.x >> 5] = acc;
  __syncthreads();
  T b = F::identity();
  if (threadIdx.x == 0)
    for (int i = 0; i < kWarps; ++i) b = F::apply(b, warp_result[i]);
  return b;
}

}  // namespace ndp::runtime::gpu::device
