// Note [Regular levels] (flatten/flat_ir.h) on the cuda backend (see regular_levels.h).
#include "exec/cuda/regular_levels.h"

#include <algorithm>
#include <cstdlib>

#include "exec/common/switches.h"
#include "exec/host/regular_chain.h"

namespace ndp::exec::cuda {

namespace {

constexpr unsigned kThreads = 256;

/// The shared memory of a block's tile: 32 KiB (4096 ints), under the 48 KiB a launch may ask
/// for without opting in; NDP_REGULAR_TILE_BYTES sets it, for measuring.
int64_t tile_bytes() {
  static const int64_t bytes = [] {
    const char* e = std::getenv("NDP_REGULAR_TILE_BYTES");
    return e != nullptr ? std::clamp<int64_t>(std::atoll(e), 64, 48 * 1024) : int64_t{32 * 1024};
  }();
  return bytes;
}

}  // namespace

std::optional<DVec> run_regular_levels(Gpu& g, GpuKernels& kernels, const flatten::RegularLevels& plan, const DVec& arg,
                                       const lang::Type* result) {
  static const bool on = !switched_off("NDP_REGULAR_LEVELS");
  const std::optional<int64_t> length = arg.regular_length();
  if (!on || !length || arg.kind() != lang::TypeKind::Seq) return std::nullopt;
  const int64_t n = arg.size(), total = n * *length;
  if (n == 0 || total == 0) return arg;  // (every instance is the base case, or none exists)
  if (total >= (int64_t{1} << 31)) return std::nullopt;
  std::optional<std::vector<int64_t>> levels = host::regular_chain(plan, *length);
  if (!levels) return std::nullopt;
  if (levels->empty()) return arg;
  const int64_t k = static_cast<int64_t>(plan.child_outputs.size()), bytes = elem_bytes(result->a);
  const int64_t tile_most = tile_bytes() / bytes;
  // The levels whose instances are longer than a tile: one launch each.
  size_t grid_levels = 0;
  while (grid_levels < levels->size() && (*levels)[grid_levels] > tile_most) ++grid_levels;
  const runtime::cuda::Kernel* level = grid_levels > 0 ? kernels.regular_levels_kernel(plan, false) : nullptr;
  const runtime::cuda::Kernel* blocks = grid_levels < levels->size() ? kernels.regular_levels_kernel(plan, true) : nullptr;
  if ((grid_levels > 0 && level == nullptr) || (grid_levels < levels->size() && blocks == nullptr)) return std::nullopt;
  DBuf out = g.alloc(total * bytes);
  CUdeviceptr src = arg.elems().data();
  for (size_t l = 0; l < grid_levels; ++l) {
    const int64_t pairs = total / k;
    runtime::cuda::LaunchConfig shape;
    shape.grid_x = static_cast<unsigned>((pairs + kThreads - 1) / kThreads);
    shape.block_x = kThreads;
    g.check(runtime::cuda::launch_with(g.device(), *level, shape, pairs, src, out->pointer(), (*levels)[l] / k));
    src = out->pointer();
  }
  if (grid_levels < levels->size()) {
    const int64_t l = (*levels)[grid_levels], tile = tile_most / l * l;
    runtime::cuda::LaunchConfig shape;
    shape.grid_x = static_cast<unsigned>((total + tile - 1) / tile);
    shape.block_x = kThreads;
    shape.shared_bytes = static_cast<unsigned>(tile * bytes);
    g.check(runtime::cuda::launch_with(g.device(), *blocks, shape, total, src, out->pointer(), l,
                                       static_cast<int64_t>(levels->size() - grid_levels), tile));
  }
  return DVec::regular(g, result, n, *length, DVec::scalar(result->a, total, std::move(out)));
}

}  // namespace ndp::exec::cuda
