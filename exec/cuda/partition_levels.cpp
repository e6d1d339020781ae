// Note [Partition levels on the GPU] (codegen/partition_levels_ptx.h): the host's side, which
// launches the engine's kernels a few levels at a time and reads back the lists' sizes between.
#include "exec/cuda/partition_levels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstdlib>

#include "exec/common/flat_walk.h"
#include "exec/common/switches.h"
#include "flatten/partition_engine_abi.h"

namespace ndp::exec::cuda {

namespace {

using namespace flatten::partition_engine;  // the layout the engine's kernels share
static_assert(kMaxParts == flatten::PartitionLevels::kMostParts && kMaxScalars == flatten::PartitionLevels::kMostPredicateScalars);
static_assert(kMostBlockTile == Tuning::kMostPartitionSwitch);
/// The grid levels launched between two read-backs of the counters: the kernels run fixed grids
/// over the sizes the device holds, so the host need not wait for each level. A batch ends on
/// levels that find nothing to do; they cost a few microseconds of launches each.
constexpr uint64_t kBatch = 6;

runtime::cuda::LaunchConfig blocks(int64_t n, int threads = kThreads) {
  runtime::cuda::LaunchConfig shape;
  shape.grid_x = static_cast<unsigned>(std::max<int64_t>(1, n));
  shape.block_x = static_cast<unsigned>(threads);
  return shape;
}

/// The most elements of an instance that the blocks take from the grid levels: the tuning's
/// partition_switch_elements (Note [Tuning]), NDP_PARTITION_SWITCH where set, for measuring; at
/// most the blocks' largest capacity (Tuning::kMostPartitionSwitch, the engine's kMostBlockTile).
int64_t switch_point(Gpu& g) {
  static const int64_t forced = [] {
    const char* e = std::getenv("NDP_PARTITION_SWITCH");
    return e != nullptr ? std::atoll(e) : int64_t{0};
  }();
  const int64_t at = forced > 0 ? forced : g.tuning().partition_switch_elements;
  return std::clamp(at, Tuning::kLeastPartitionSwitch, Tuning::kMostPartitionSwitch);
}

/// The blocks of `kernel` the whole device holds at once: the grid of a grid level's kernel.
unsigned resident(Gpu& g, const runtime::cuda::Kernel& kernel, int threads = kThreads) {
  runtime::cuda::Result<int64_t> held = runtime::cuda::resident_blocks(g.device(), kernel, threads);
  return static_cast<unsigned>(held.ok() ? std::max<int64_t>(1, held.value()) : 1024);
}

/// Nothing, said on stderr where NDP_DEBUG is set: the loop runs again level by level, and what
/// made the engine give up is the program's (an element in no part, a failing scalar) or a
/// recursion past the limit.
std::optional<DVec> fell_back() {
  static const bool debug = std::getenv("NDP_DEBUG") != nullptr;
  if (debug) std::fprintf(stderr, "ndp: partition levels gave up; the loop runs level by level\n");
  return std::nullopt;
}

}  // namespace

std::optional<DVec> run_partition_levels(Gpu& g, GpuKernels& kernels, const flatten::PartitionLevels& plan, const DVec& arg,
                                         const lang::Type* result) {
  static const bool on = !switched_off("NDP_PARTITION_LEVELS");
  if (!on || arg.kind() != lang::TypeKind::Seq || result != arg.type() || elem_bytes(result->a) != 8) return std::nullopt;
  const int64_t n = arg.size(), total = arg.total();
  if (n == 0 || total == 0) return std::nullopt;  // (nothing to move: the levels cost nothing)
  // (Launches of a block an instance or a tile must stay within 32-bit grids.)
  if (n >= (int64_t{1} << 30) || total >= (int64_t{1} << 36)) return std::nullopt;
  const GpuKernels::PartitionKernels* e = kernels.partition_kernels(plan, result->a);
  if (e == nullptr) return std::nullopt;
  const int64_t switch_at = switch_point(g);
  const int64_t large_most = total / (switch_at + 1) + 1, tiles_most = total / kPerTile + large_most + 1;
  // (Each level of a batch adds at most kMaxParts small instances a large one.)
  const int64_t small_most = n + large_most * kMaxParts * static_cast<int64_t>(kBatch + 1);
  DBuf out = g.alloc(total * 8), counters = g.alloc(kCounters * 8), small = g.alloc(small_most * sizeof(Small));
  std::array<DBuf, 2> large = {g.alloc(large_most * sizeof(Large)), g.alloc(large_most * sizeof(Large))};
  std::array<DBuf, 2> tiles = {g.alloc(tiles_most * sizeof(Tile)), g.alloc(tiles_most * sizeof(Tile))};
  std::array<int64_t, kCounters> c{};
  g.check(g.pool().upload(counters->pointer(), c.data(), sizeof c));
  const CUdeviceptr arg_elems = arg.elems().data();
  g.check(runtime::cuda::launch_with(g.device(), e->seed, blocks(std::min<int64_t>(1024, (n + kThreads - 1) / kThreads)),
                                     arg.offsets(), n, switch_at, large[0]->pointer(), tiles[0]->pointer(),
                                     small->pointer(), counters->pointer()));
  g.check(g.pool().download(c.data(), counters->pointer(), sizeof c));
  // The small instances so far, all their levels in blocks, from the list's start.
  // (The blocks hold an instance of up to the switch point in each of two buffers.)
  const int capacity = static_cast<int>(std::bit_ceil(static_cast<uint64_t>(switch_at)));
  runtime::cuda::LaunchConfig block_shape = blocks(0, kBlockThreads);
  block_shape.shared_bytes = static_cast<unsigned>(2 * capacity * 8);
  auto run_blocks = [&] {
    if (c[kSmall] == 0) return;
    block_shape.grid_x = static_cast<unsigned>(c[kSmall]);
    g.check(runtime::cuda::launch_with(g.device(), e->block, block_shape, small->pointer(), arg_elems, out->pointer(),
                                       counters->pointer(), capacity));
    c[kSmall] = 0;
    g.check(g.pool().upload(counters->pointer() + kSmall * 8, &c[kSmall], 8));
  };
  std::array<DBuf, 2> buffers;  // the levels' keys: each level reads one and writes the other
  CUdeviceptr src = arg_elems;
  DBuf counts, sizes;
  const unsigned count_grid = resident(g, e->count), plan_grid = resident(g, e->plan);
  const unsigned scatter_grid = resident(g, e->scatter, kScatterThreads);
  for (uint64_t level = 0; c[kSlot * (level & 1) + kLarge] > 0;) {
    // A level past the limit, counting the blocks' levels still to come (at most one a key of an
    // instance they take, and a warp's 32), is the level by level run's error to raise.
    if (c[kFailed] != 0 || level + kBatch + static_cast<uint64_t>(Tuning::kMostPartitionSwitch) + 32 >= kMaxCallDepth)
      return fell_back();
    // Room in the small list for the batch's children, else the blocks take those listed now.
    if (c[kSmall] + large_most * kMaxParts * static_cast<int64_t>(kBatch) > small_most) run_blocks();
    if (!buffers[0]) {
      buffers = {g.alloc(total * 8), g.alloc(total * 8)};
      counts = g.alloc(tiles_most * kMaxParts * 8);
      sizes = g.alloc(large_most * kMaxParts * 8);
    }
    for (uint64_t end = level + kBatch; level < end; ++level) {
      // (Level L's lists are in slot L mod 2; it fills the other for the next level.)
      const int slot = static_cast<int>(level & 1);
      const CUdeviceptr next = buffers[slot]->pointer();
      const CUdeviceptr ls = large[slot]->pointer(), ts = tiles[slot]->pointer();
      g.check(runtime::cuda::launch_with(g.device(), e->count, blocks(count_grid), ls, ts, src, counts->pointer(),
                                         counters->pointer(), slot));
      g.check(runtime::cuda::launch_with(g.device(), e->plan, blocks(plan_grid), ls, counts->pointer(), sizes->pointer(),
                                         switch_at, large[slot ^ 1]->pointer(), tiles[slot ^ 1]->pointer(), small->pointer(),
                                         counters->pointer(), slot));
      g.check(runtime::cuda::launch_with(g.device(), e->scatter, blocks(scatter_grid, kScatterThreads), ls, ts, switch_at, src,
                                         counts->pointer(), sizes->pointer(), next, out->pointer(), counters->pointer(), slot));
      src = next;
    }
    g.check(g.pool().download(c.data(), counters->pointer(), sizeof c));
  }
  run_blocks();
  g.check(g.pool().download(c.data(), counters->pointer(), sizeof c));
  if (c[kFailed] != 0) return fell_back();
  return arg.with_elems(result, DVec::scalar(result->a, total, std::move(out)));
}

}  // namespace ndp::exec::cuda
