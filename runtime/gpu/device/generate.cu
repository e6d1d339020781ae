// Generators: fill, iota, DIST, INDEX.
#include "tile/segments.cuh"

using namespace ndp::runtime::gpu::device;

#define NDP_FILL(W, bytes)                                                                \
  extern "C" __global__ void ndp_fill_##bytes(W* out, long long n, unsigned long long v) { \
    NDP_GRID_STRIDE(i, n) out[i] = static_cast<W>(v);                                       \
  }
NDP_FOR_SIZES(NDP_FILL)

extern "C" __global__ void ndp_iota(long long* out, long long n, long long start, long long stride) {
  NDP_GRID_STRIDE(i, n) out[i] = start + i * stride;
}

// One thread per element, whatever the segment lengths (Note [Segments of a tile]).
#define NDP_DIST(T, name)                                                                            \
  extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_dist_##name(const T* x, Segs s, T* out) { \
    for_each_element_segment(s, [&](long long p, long long k) { out[p] = x[k]; });                   \
  }
NDP_FOR_ELEMS(NDP_DIST)

// Ints wrap: computed in unsigned arithmetic.
template <class T>
__device__ T index_value(T start, T stride, long long j) {
  if constexpr (sizeof(T) == 8 && T(0.5) == T(0))
    return static_cast<T>(static_cast<unsigned long long>(start) + static_cast<unsigned long long>(j) * static_cast<unsigned long long>(stride));
  else if constexpr (T(0.5) == T(0))
    return static_cast<T>(static_cast<unsigned int>(start) + static_cast<unsigned int>(j) * static_cast<unsigned int>(stride));
  else
    return start + static_cast<T>(j) * stride;
}

#define NDP_INDEX(T, name)                                                                          \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                          \
      ndp_index_##name(const T* start, const T* stride, Segs s, T* out) {                           \
    for_each_element_segment(                                                                       \
        s, [&](long long p, long long k) { out[p] = index_value<T>(start[k], stride[k], p - s.begin(k)); }); \
  }
NDP_FOR_NUMBERS(NDP_INDEX)
