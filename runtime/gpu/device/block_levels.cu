// Note [Levels in a block] (runtime/gpu/block_levels.h): the engine on a CUDA block, and the
// read of a level's longest instance that decides the hand-off.
#include <cstdint>

#include "common.cuh"
#include "thread/boundaries.cuh"
#include "runtime/gpu/block_levels.h"

using namespace ndp::runtime::gpu::block_levels;

namespace {

/// The engine's team: the threads of one block (a multiple of 32, at most 1024).
struct BlockTeam {
  int64_t* scratch;  // 33 words of shared memory

  __device__ int rank() const { return static_cast<int>(threadIdx.x); }
  __device__ void sync() const { __syncthreads(); }
  template <class F>
  __device__ void each(int64_t n, F f) const {
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) f(i);
  }
  /// The sum of x over the threads before this one; `total` gets every thread's.
  __device__ int64_t exclusive_sum(int64_t x, int64_t& total) const {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    int64_t inc = x;
    for (int d = 1; d < 32; d <<= 1) {
      const int64_t y = __shfl_up_sync(~0u, inc, d);
      if (lane >= d) inc += y;
    }
    if (lane == 31) scratch[warp] = inc;
    __syncthreads();
    if (warp == 0) {
      const int64_t t = lane < warps ? scratch[lane] : 0;
      int64_t ti = t;
      for (int d = 1; d < 32; d <<= 1) {
        const int64_t y = __shfl_up_sync(~0u, ti, d);
        if (lane >= d) ti += y;
      }
      scratch[lane] = ti - t;
      if (lane == 31) scratch[32] = ti;
    }
    __syncthreads();
    const int64_t before = scratch[warp] + inc - x;
    total = scratch[32];
    __syncthreads();
    return before;
  }
  __device__ int64_t scan(int64_t* a, int64_t n) const {
    __syncthreads();
    const int64_t per = (n + blockDim.x - 1) / blockDim.x;
    const int64_t lo = min(n, static_cast<int64_t>(threadIdx.x) * per), hi = min(n, lo + per);
    int64_t s = 0;
    for (int64_t i = lo; i < hi; ++i) s += a[i];
    int64_t total;
    int64_t run = exclusive_sum(s, total);
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t v = a[i];
      a[i] = run;
      run += v;
    }
    if (threadIdx.x == 0) a[n] = total;
    __syncthreads();
    return total;
  }
  __device__ int64_t sum(int64_t x) const {
    int64_t total;
    exclusive_sum(x, total);
    return total;
  }
};

}  // namespace

/// Block b runs the instances whose argument starts in [b·window, (b + 1)·window) (the last
/// block: from b·window on), their results to `out` at `places` (null: the argument's
/// offsets); any block that cannot sets *failed.
extern "C" __global__ void __launch_bounds__(1024) ndp_block_levels(Program prog, const int64_t* arg_off, int64_t n, int64_t window,
                                                                    const void* arg, void* out, const int64_t* places, int* failed) {
  extern __shared__ int64_t mem[];
  __shared__ int64_t scratch[33];
  __shared__ int64_t range[2];
  if (threadIdx.x == 0) {
    const int64_t lo = static_cast<int64_t>(blockIdx.x) * window;
    // The first instance starting at or after an element (off[i] > e - 1), at most n.
    const long long* off = reinterpret_cast<const long long*>(arg_off);
    auto first_at = [&](int64_t e) {
      return min(n, static_cast<int64_t>(ndp::runtime::gpu::device::upper_bound_in(off, 0, n + 1, e - 1)));
    };
    range[0] = first_at(lo);
    range[1] = blockIdx.x + 1 == gridDim.x ? n : first_at(lo + window);
  }
  __syncthreads();
  if (range[0] >= range[1]) return;
  BlockTeam team{scratch};
  Engine<BlockTeam> engine(prog, team, mem);
  if (!engine.run(arg_off, range[0], range[1], arg, out, places) && threadIdx.x == 0) atomicExch(failed, 1);
}

/// Which of the n sequences whose offsets are `off` have at most `window` elements: a flag
/// byte each in small and its complement in large; sizes[0] += their number, sizes[1] += their
/// elements (sizes zero before).
extern "C" __global__ void ndp_block_levels_fit(const int64_t* off, int64_t n, int64_t window, unsigned char* small,
                                                unsigned char* large, unsigned long long* sizes) {
  unsigned long long count = 0, elements = 0;
  NDP_GRID_STRIDE(i, n) {
    const int64_t len = off[i + 1] - off[i];
    const bool fits = len <= window;
    small[i] = fits;
    large[i] = !fits;
    count += fits;
    elements += fits ? static_cast<unsigned long long>(len) : 0;
  }
  for (int d = 16; d > 0; d >>= 1) {
    count += __shfl_down_sync(~0u, count, d);
    elements += __shfl_down_sync(~0u, elements, d);
  }
  if ((threadIdx.x & 31) == 0 && count > 0) {
    atomicAdd(sizes, count);
    atomicAdd(sizes + 1, elements);
  }
}
