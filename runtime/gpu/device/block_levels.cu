// Note [Levels in a block] (runtime/gpu/block_levels.h): the engine interpreting a program on a
// CUDA block, and the read of a level's longest instance that decides the hand-off.
#include <cstdint>

#include "common.cuh"
#include "block/levels_team.cuh"

using namespace ndp::runtime::gpu::block_levels;

/// Block b runs the instances whose argument starts in [b·window, (b + 1)·window) (the last
/// block: from b·window on), their results to `out` at `places` (null: the argument's
/// offsets); any block that cannot sets *failed.
extern "C" __global__ void __launch_bounds__(1024) ndp_block_levels(Program prog, const int64_t* arg_off, int64_t n, int64_t window,
                                                                    const void* arg, void* out, const int64_t* places, int* failed) {
  extern __shared__ int64_t mem[];
  __shared__ int64_t scratch[33];
  __shared__ int64_t range[2];
  run_levels_block(prog, arg_off, n, window, arg, out, places, failed, mem, scratch, range,
                   [](Engine<BlockTeam>& e) { return e.run_loop(); });
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
