// Note [Levels in a block] (runtime/gpu/block_levels.h): which instances fit a block, and the
// launch that runs their levels.
#include "exec/cuda/block_levels.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "runtime/gpu/launch.h"

namespace ndp::exec::cuda {

namespace bl = runtime::gpu::block_levels;

namespace {

constexpr unsigned kThreads = 256;

/// The shared memory a block takes: a third of the SM's, so that three blocks run on each SM at
/// once (NDP_BLOCK_LEVELS_BYTES sets it, for measuring: bench/results/session33/laid_out).
int64_t block_bytes(Gpu& g) {
  if (const char* e = std::getenv("NDP_BLOCK_LEVELS_BYTES")) return std::max<int64_t>(4096, std::atoll(e));
  const runtime::cuda::DeviceProperties& p = g.device().properties();
  return std::max(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block) / 3 - 1024;
}

template <class T>
DBuf upload_array(Gpu& g, const std::vector<T>& v) {
  DBuf b = g.alloc(static_cast<int64_t>(std::max<size_t>(1, v.size()) * sizeof(T)));
  if (!v.empty()) g.check(g.pool().upload(b->pointer(), v.data(), v.size() * sizeof(T)));
  return b;
}

}  // namespace

int64_t BlockLevels::most_elements(Gpu& g) {
  // Asked at every level of every recursion: the environment is read once.
  static const int64_t forced = [] {
    const char* on = std::getenv("NDP_BLOCK_LEVELS");
    if (on != nullptr && std::string(on) == "0") return int64_t{-1};
    const char* e = std::getenv("NDP_BLOCK_LEVELS_ELEMENTS");
    return e != nullptr ? static_cast<int64_t>(std::atoll(e)) : int64_t{-2};
  }();
  if (forced != -2) return forced;
  const int64_t most = g.tuning().block_levels_elements;
  return most > 0 ? most : -1;
}

BlockLevels::BlockLevels(Gpu& g, const flatten::Function& fn, const flatten::Stmt& s) : g_(g) {
  if (most_elements(g) < 0) return;
  prog_ = block_levels_program(fn, s, nullptr);
  if (!prog_) return;
  cap_ = ((block_bytes(g) / 8 - bl::header_words(prog_->shape)) / prog_->shape.n_slots) / 32 * 32;
  if (cap_ < 64) prog_.reset();
}

BlockLevels::Fit BlockLevels::fit(const DVec& arg) {
  Fit r;
  r.instances = arg.size();
  r.elements = arg.total();
  if (r.instances == 0) return r;
  runtime::gpu::Primitives& prims = g_.prims();
  DBuf sizes = g_.alloc(16);
  g_.check(prims.fill(sizes->pointer(), 2, 8, 0));
  r.small_flags = g_.alloc(r.instances);
  r.large_flags = g_.alloc(r.instances);
  g_.check(runtime::gpu::launch_named(prims, "ndp_block_levels_fit", r.instances, arg.offsets(), r.instances, cap_ / 2,
                                      r.small_flags->pointer(), r.large_flags->pointer(), sizes->pointer()));
  int64_t h[2];
  g_.check(g_.pool().download(h, sizes->pointer(), sizeof h));
  r.small = h[0];
  r.small_elements = h[1];
  return r;
}

bool BlockLevels::run(const DVec& arg, CUdeviceptr places, CUdeviceptr out) {
  const int64_t n = arg.size(), total = arg.total(), window = cap_ / 2;
  DBuf ops = upload_array(g_, prog_->ops), nodes = upload_array(g_, prog_->nodes), lists = upload_array(g_, prog_->lists),
       vars = upload_array(g_, prog_->vars);
  auto at = [](const DBuf& b) { return reinterpret_cast<const void*>(b->pointer()); };
  const bl::Program device_prog = prog_->at(at(ops), at(nodes), at(lists), at(vars), cap_);
  DBuf failed = g_.alloc(4);
  runtime::gpu::Primitives& prims = g_.prims();
  g_.check(prims.fill(failed->pointer(), 1, 4, 0));
  runtime::cuda::Kernel k = g_.check(prims.kernel("ndp_block_levels"));
  runtime::cuda::LaunchConfig shape;
  shape.grid_x = static_cast<unsigned>(std::max<int64_t>(1, (total + window - 1) / window));
  shape.block_x = kThreads;
  shape.shared_bytes = static_cast<unsigned>((bl::header_words(prog_->shape) + prog_->shape.n_slots * cap_) * 8);
  g_.check(runtime::cuda::launch_with(g_.device(), k, shape, device_prog, arg.offsets(), n, window, arg.elems().data(), out,
                                      places, failed->pointer()));
  int32_t bad = 0;
  g_.check(g_.pool().download(&bad, failed->pointer(), 4));
  return bad == 0;
}

}  // namespace ndp::exec::cuda
