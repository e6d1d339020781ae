// Notes [Regular levels] and [Regular ascents] (flatten/flat_ir.h) on the cuda backend (see
// regular_levels.h).
#include "exec/cuda/regular_levels.h"

#include <algorithm>
#include <cstdlib>

#include "exec/common/switches.h"
#include "exec/host/regular_chain.h"

namespace ndp::exec::cuda {

namespace {

constexpr unsigned kThreads = 256;

/// The shared memory of a block's tile: the tuning's regular_tile_bytes (Note [Tuning]; 32 KiB,
/// 4096 ints, by default), NDP_REGULAR_TILE_BYTES where set, for measuring; at most the 48 KiB a
/// launch may ask for without opting in.
int64_t tile_bytes(Gpu& g) {
  static const int64_t forced = [] {
    const char* e = std::getenv("NDP_REGULAR_TILE_BYTES");
    return e != nullptr ? std::clamp<int64_t>(std::atoll(e), 256, Tuning::kMostTileBytes) : int64_t{0};
  }();
  return forced > 0 ? forced : std::clamp<int64_t>(g.tuning().regular_tile_bytes, 256, Tuning::kMostTileBytes);
}

/// The threads of a block that runs a tile's levels: one for each of the tile's pairs up to 256.
/// A thread a pair (1024 for Batcher's tiles of 2048 pairs) took Batcher's sort of 2^20 ints
/// 0.58 ms against 0.49 with 256 threads, in one call on an H200: its kernels of a tile's levels
/// took 27 against 23 µs, its ascent's 186 against 115 (Nsight Compute, bench/results/session44).
/// NDP_REGULAR_BLOCK_THREADS sets the most (up to the 1024 the kernels are compiled for), for
/// measuring.
unsigned block_threads(int64_t pairs) {
  static const int64_t most = [] {
    const char* e = std::getenv("NDP_REGULAR_BLOCK_THREADS");
    return e != nullptr ? std::clamp<int64_t>(std::atoll(e), 32, 1024) : int64_t{256};
  }();
  return static_cast<unsigned>(std::clamp<int64_t>((pairs + 31) / 32 * 32, 32, most));
}

runtime::cuda::LaunchConfig threads_for(int64_t n) {
  runtime::cuda::LaunchConfig shape;
  shape.grid_x = static_cast<unsigned>(std::max<int64_t>(1, (n + kThreads - 1) / kThreads));
  shape.block_x = kThreads;
  return shape;
}

/// The map form's levels `levels` (lengths, from the longest) over total elements of `bytes`
/// each, from src to dst (which may be src): a launch a level while instances are longer than a
/// tile, then one for the levels left; false where a kernel cannot be had (nothing launched).
bool run_levels(Gpu& g, GpuKernels& kernels, const flatten::RegularLevels& plan, const std::vector<int64_t>& levels,
                CUdeviceptr src, CUdeviceptr dst, int64_t total, int64_t bytes) {
  const int64_t k = static_cast<int64_t>(plan.child_outputs.size()), tile_most = tile_bytes(g) / bytes;
  size_t grid_levels = 0;
  while (grid_levels < levels.size() && levels[grid_levels] > tile_most) ++grid_levels;
  const runtime::cuda::Kernel* level = grid_levels > 0 ? kernels.regular_levels_kernel(plan, false) : nullptr;
  const runtime::cuda::Kernel* blocks = grid_levels < levels.size() ? kernels.regular_levels_kernel(plan, true) : nullptr;
  if ((grid_levels > 0 && level == nullptr) || (grid_levels < levels.size() && blocks == nullptr)) return false;
  for (size_t l = 0; l < grid_levels; ++l) {
    const int64_t pairs = total / k;
    g.check(runtime::cuda::launch_with(g.device(), *level, threads_for(pairs), pairs, src, dst, levels[l] / k));
    src = dst;
  }
  if (grid_levels < levels.size()) {
    const int64_t l = levels[grid_levels], tile = tile_most / l * l;
    runtime::cuda::LaunchConfig shape;
    shape.grid_x = static_cast<unsigned>((total + tile - 1) / tile);
    shape.block_x = block_threads(tile / k);
    shape.shared_bytes = static_cast<unsigned>(tile * bytes);
    g.check(runtime::cuda::launch_with(g.device(), *blocks, shape, total, src, dst, l,
                                       static_cast<int64_t>(levels.size() - grid_levels), tile));
  }
  return true;
}

/// Note [Regular ascents]: from the shortest length that recurses up, each level's permutation
/// and the callee's levels; the levels whose instances fit half a tile in one kernel.
bool run_ascent(Gpu& g, GpuKernels& kernels, const flatten::RegularLevels& plan, const std::vector<int64_t>& chain,
                CUdeviceptr src, CUdeviceptr out, int64_t total, int64_t bytes) {
  std::vector<int64_t> ascent(chain.rbegin(), chain.rend());
  std::vector<std::vector<int64_t>> callee;
  for (int64_t l : ascent) {
    std::optional<std::vector<int64_t>> c = host::regular_chain(*plan.callee, l);
    if (!c) return false;
    callee.push_back(std::move(*c));
  }
  const int64_t half = tile_bytes(g) / 2 / bytes;
  size_t small = 0;
  while (small < ascent.size() && ascent[small] <= half) ++small;
  const runtime::cuda::Kernel* blocks = small > 0 ? kernels.regular_levels_kernel(plan, true) : nullptr;
  const runtime::cuda::Kernel* permute = small < ascent.size() ? kernels.regular_levels_kernel(plan, false) : nullptr;
  if ((small > 0 && blocks == nullptr) || (small < ascent.size() && permute == nullptr)) return false;
  // (Kernels of the callee for the long levels, asked before anything runs.)
  if (small < ascent.size() && (!kernels.regular_levels_kernel(*plan.callee, false) || !kernels.regular_levels_kernel(*plan.callee, true)))
    return false;
  DBuf spare;
  if (small > 0) {
    std::vector<int32_t> table;
    for (size_t a = 0; a < small; ++a) {
      table.push_back(static_cast<int32_t>(ascent[a]));
      table.push_back(static_cast<int32_t>(callee[a].size()));
    }
    DBuf t = g.alloc(static_cast<int64_t>(table.size() * sizeof(int32_t)));
    g.check(g.pool().upload(t->pointer(), table.data(), table.size() * sizeof(int32_t)));
    const int64_t tile = half / ascent[small - 1] * ascent[small - 1];
    runtime::cuda::LaunchConfig shape;
    shape.grid_x = static_cast<unsigned>((total + tile - 1) / tile);
    shape.block_x = block_threads(tile / static_cast<int64_t>(plan.callee->child_outputs.size()));
    shape.shared_bytes = static_cast<unsigned>(2 * tile * bytes);
    g.check(runtime::cuda::launch_with(g.device(), *blocks, shape, total, src, out, tile, static_cast<int64_t>(small),
                                       t->pointer()));
    src = out;
  }
  // Each longer level: permuted into the other buffer, then the callee's levels in place there.
  CUdeviceptr at = src;
  for (size_t a = small; a < ascent.size(); ++a) {
    CUdeviceptr to = out;
    if (at == out) {
      if (!spare) spare = g.alloc(total * bytes);
      to = spare->pointer();
    }
    g.check(runtime::cuda::launch_with(g.device(), *permute, threads_for(total), total, at, to, ascent[a]));
    if (!run_levels(g, kernels, *plan.callee, callee[a], to, to, total, bytes)) return false;
    at = to;
  }
  if (at != out) g.check(g.pool().copy(out, at, total * bytes));
  return true;
}

}  // namespace

std::optional<DVec> run_regular_levels(Gpu& g, GpuKernels& kernels, const flatten::RegularLevels& plan, const DVec& arg,
                                       const lang::Type* result) {
  static const bool on = !switched_off("NDP_REGULAR_LEVELS");
  if (!on || arg.kind() != lang::TypeKind::Seq) return std::nullopt;
  // One instance has one length (a sort called on one sequence).
  const std::optional<int64_t> length = arg.size() == 1 ? std::optional<int64_t>(arg.total()) : arg.regular_length();
  if (!length) return std::nullopt;
  const int64_t n = arg.size(), total = n * *length;
  if (n == 0) return arg;  // (no instance: nothing to do; empty ones are the chain's to judge)
  if (total >= (int64_t{1} << 31)) return std::nullopt;
  std::optional<std::vector<int64_t>> levels = host::regular_chain(plan, *length);
  if (!levels) return std::nullopt;
  if (levels->empty()) return arg;
  const int64_t bytes = elem_bytes(result->a);
  DBuf out = g.alloc(total * bytes);
  const CUdeviceptr src = arg.elems().data();
  const bool ran = plan.callee ? run_ascent(g, kernels, plan, *levels, src, out->pointer(), total, bytes)
                               : run_levels(g, kernels, plan, *levels, src, out->pointer(), total, bytes);
  if (!ran) return std::nullopt;
  return DVec::regular(g, result, n, *length, DVec::scalar(result->a, total, std::move(out)));
}

}  // namespace ndp::exec::cuda
