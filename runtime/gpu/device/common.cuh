// Device-side vocabulary shared by every layer of the device code: the descriptor as kernels
// see it, the element types, grid-stride loops and the error record of checked kernels.
//
// The device code is layered as CUB layers it (docs/style.md practice 11), one layer a folder
// and one concept a file; each layer uses only the layers below it:
//   *.cu     device-wide passes: the `extern "C" __global__` kernels, one primitive's family a
//            file (host dispatch in runtime/gpu/*.cpp launches them by name)
//   tile/    what one block does on its tiles within a device-wide pass (CUB's agent/): loads
//            and stores, head flags, the decoupled look-back, the tile passes, their shapes
//   block/   block collectives (the whole block calls them)
//   warp/    warp collectives (shuffles)
//   thread/  per-thread code: operators, raw words, searches over boundaries, sources, keys
// All of it is in namespace ndp::runtime::gpu::device: as in CUB (all of cub/ is namespace cub),
// names carry the layer where it is not plain (warp_fold, block_upper_bound_off).
#pragma once

#include <cstdint>

namespace ndp::runtime::gpu::device {

/// The device form of runtime::gpu::DSegs (same layout: it is passed by value as a kernel argument).
struct Segs {
  long long count;
  long long total;
  const long long* offsets;  // count + 1 entries, or null: regular segments
  long long regular_length;

  __device__ long long begin(long long k) const { return offsets ? offsets[k] : k * regular_length; }
  __device__ long long end(long long k) const { return offsets ? offsets[k + 1] : (k + 1) * regular_length; }
  __device__ long long length(long long k) const { return end(k) - begin(k); }
  /// The segment holding element p (0 <= p < total): the last k with begin(k) <= p and a
  /// non-empty segment (binary search over the offsets).
  __device__ long long segment_of(long long p) const {
    if (!offsets) return regular_length > 0 ? p / regular_length : 0;
    long long lo = 0, hi = count - 1;  // offsets[lo] <= p < offsets[hi + 1]
    while (lo < hi) {
      long long mid = lo + (hi - lo + 1) / 2;
      if (offsets[mid] <= p) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
};

/// A checked kernel's failure record (ndp_status without the code, which the host knows):
/// `position` starts at kNoFailure and every failing thread lowers it with atomicMin, so the
/// record names the lowest failing position whatever the thread order. The host then reads the
/// index and length that belong to that position.
constexpr unsigned long long kNoFailure = ~0ull;

__device__ inline void report_failure(unsigned long long* first_failure, long long position) {
  atomicMin(first_failure, static_cast<unsigned long long>(position));
}

/// for (i = global thread; i < n; i += grid size)
#define NDP_GRID_STRIDE(i, n)                                                                   \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);   \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

/// The six element storage types with their kernel-name suffixes.
#define NDP_FOR_ELEMS(X) X(long long, i64) X(double, f64) X(int, i32) X(float, f32) X(bool, bool) X(unsigned char, char)
/// The four number types.
#define NDP_FOR_NUMBERS(X) X(long long, i64) X(double, f64) X(int, i32) X(float, f32)
/// Element sizes moved as raw words by type-blind kernels (gather, scatter, fill).
#define NDP_FOR_SIZES(X) X(unsigned long long, 8) X(unsigned int, 4) X(unsigned char, 1)

}  // namespace ndp::runtime::gpu::device
