// Note [Levels in a block] (runtime/gpu/block_levels.h) on a CUDA block: the engine's team
// (the block's threads) and one block's run, shared by the interpreting kernel
// (block_levels.cu, nvcc) and the compiled one (codegen/block_levels_engine.cu, clang: Note
// [Compiled block levels]), which differ only in how the statements are stepped through.
#pragma once

#include <cstdint>

#include "../thread/boundaries.cuh"
#include "runtime/gpu/block_levels.h"

namespace ndp::runtime::gpu::block_levels {

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
    const int64_t start = static_cast<int64_t>(threadIdx.x) * per;
    const int64_t lo = start < n ? start : n, hi = lo + per < n ? lo + per : n;
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


/// Block b's run: the instances whose argument starts in [b·window, (b + 1)·window) (the last
/// block: from b·window on), their results to `out` at `places` (null: the argument's
/// offsets); where the block cannot, *failed is set. `levels(engine)` runs the statements
/// once the instances are loaded. `mem` is the dynamic shared memory, `scratch` 33 words and
/// `range` 2 words of shared memory.
template <class Levels>
__device__ void run_levels_block(const Program& prog, const int64_t* arg_off, int64_t n, int64_t window, const void* arg,
                                 void* out, const int64_t* places, int* failed, int64_t* mem, int64_t* scratch,
                                 int64_t* range, Levels levels) {
  if (threadIdx.x == 0) {
    const int64_t lo = static_cast<int64_t>(blockIdx.x) * window;
    // The first instance starting at or after an element (off[i] > e - 1), at most n.
    const long long* off = reinterpret_cast<const long long*>(arg_off);
    auto first_at = [&](int64_t e) {
      const int64_t k = static_cast<int64_t>(device::upper_bound_in(off, 0, n + 1, e - 1));
      return k < n ? k : n;
    };
    range[0] = first_at(lo);
    range[1] = blockIdx.x + 1 == gridDim.x ? n : first_at(lo + window);
  }
  __syncthreads();
  if (range[0] >= range[1]) return;
  BlockTeam team{scratch};
  Engine<BlockTeam> engine(prog, team, mem);
  const bool ok = engine.start(arg_off, range[0], range[1], arg, out, places) && levels(engine);
  if (!ok && threadIdx.x == 0) atomicExch(failed, 1);
}

}  // namespace ndp::runtime::gpu::block_levels
