// Thread level: a thread's items of a tile in registers, their head flags, and their segmented
// fold and scan (the sequential part under the block-wide scan of the thread folds).
#pragma once

#include "operators.cuh"

namespace ndp::runtime::gpu::device {

/// The head flags of a thread's N items (item i in byte i).
template <int N>
struct Heads {
  unsigned long long w[(N + 7) / 8];
  __device__ __forceinline__ bool at(int i) const { return (w[i >> 3] >> (8 * (i & 7))) & 0xff; }
};

/// A flat scan's items: no heads.
struct NoHeads {
  __device__ __forceinline__ constexpr bool at(int) const { return false; }
};

/// The segmented fold of a thread's items: (fold after its last head, any head).
template <class F, class H, int N>
__device__ __forceinline__ SegPair<typename F::value_type> fold_items(const typename F::value_type (&x)[N],
                                                                      const H& h) {
  SegPair<typename F::value_type> p{F::identity(), 0};
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (h.at(i)) {
      p.v = F::apply(F::identity(), x[i]);
      p.f = 1;
    } else {
      p.v = F::apply(p.v, x[i]);
    }
  }
  return p;
}

/// Replaces the thread's items by their segmented scan from acc, the value before the first.
template <class F, class H, int N>
__device__ __forceinline__ void scan_items(typename F::value_type (&x)[N], const H& h, typename F::value_type acc,
                                           bool inclusive) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (h.at(i)) acc = F::identity();
    typename F::value_type next = F::apply(acc, x[i]);
    x[i] = inclusive ? next : acc;
    acc = next;
  }
}

}  // namespace ndp::runtime::gpu::device
