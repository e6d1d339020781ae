// Warp level: shuffles of any value of at most 8 bytes (moved as its bits) and of segmented
// pairs, across the whole warp.
#pragma once

#include "../thread/operators.cuh"
#include "../thread/words.cuh"

namespace ndp::runtime::gpu::device {

/// v from lane + d (all lanes call it; the last d lanes receive their own).
template <class T>
__device__ __forceinline__ T shuffle_down(T v, int d) {
  if constexpr (sizeof(T) == 8) return from_bits<T>(__shfl_down_sync(~0u, to_bits(v), d));
  else return from_bits<T>(__shfl_down_sync(~0u, static_cast<unsigned>(to_bits(v)), d));
}

template <class T>
__device__ __forceinline__ SegPair<T> shuffle_down(SegPair<T> p, int d) {
  return SegPair<T>{shuffle_down(p.v, d), __shfl_down_sync(~0u, p.f, d)};
}

/// v from lane `src` (all lanes call it).
template <class T>
__device__ __forceinline__ T shuffle_from(T v, int src) {
  if constexpr (sizeof(T) == 8) return from_bits<T>(__shfl_sync(~0u, to_bits(v), src));
  else return from_bits<T>(__shfl_sync(~0u, static_cast<unsigned>(to_bits(v)), src));
}

}  // namespace ndp::runtime::gpu::device
