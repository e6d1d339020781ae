// How many GPU threads run each instance of a map kernel (Note [Map kernels] in
// flatten/flat_ir.h): the level `at LEVEL` pins, or the dispatch's choice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "exec/common/tuning.h"
#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"
#include "flatten/flat_ir.h"
#include "runtime/cuda/device.h"

namespace ndp::exec::cuda {

/// Every lanes count but 1 that map_kernel_lanes may give (powers of two up to a block of 256):
/// `ndp compile` holds a variant of each map kernel for each.
std::vector<int> map_kernel_lane_choices();

// Note [Map kernel dispatch]
// A map kernel's instances run on `thread` (1 lane), `subwarp(N)` (N), `warp` (32) or `block`
// (256) as `at LEVEL` says. `auto` (and the levels a map kernel cannot take: `grid`, `seq`,
// which the compiler warned of) chooses at run time:
// * Where every fold runs over rows of a sequence the kernel reads, from the rows' average
//   length and the instances' number, by the tuning table (own_row_lanes in
//   exec/common/tuning.h, measured by `ndp autotune`). The same choice, made by a map_lanes
//   statement before the kernel, decides whether a body that folds only its own rows runs as
//   the map kernel or flattened (Note [Map kernels]): on the H100, rows of 2^16 and more are
//   faster in the segmented primitives, which spread a long row over many blocks. The same
//   table serves folds over rows of a free sequence (all pairs, a matrix product's entries).
// * Otherwise (a range, or a table that says flattened where the map kernel is the only form)
//   so that the machine is full: the most lanes (at most 256) with n·lanes at most twice the
//   threads the GPU holds at once, so few instances get many lanes each and many instances one,
//   and no more lanes than the folded rows' average length rounded up to a power of two.
// NDP_MAP_LANES=N pins every auto choice to N lanes, and N=0 makes map_lanes choose the
// flattened form (tests run both forms so).
int map_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs,
                     const runtime::cuda::DeviceProperties& device, const Tuning& tuning);

/// How many GPU threads run each of the n instances of loop kernel statement `s`, whose
/// sequences are `seqs`: a warp where the loop is a multiprefix loop (Note [Multiprefix loops]
/// in flatten/flat_ir.h), which the statement's level does not pin to `thread`, unless the rows
/// the loop reads on its own are short (an average under kShortLoopRows: most of the warp's
/// lanes would idle, where a thread an instance runs 32 instances a warp); else 1.
/// NDP_MULTIPREFIX=0 keeps every loop on a thread an instance.
inline constexpr int64_t kShortLoopRows = 8;
int loop_kernel_lanes(const flatten::Stmt& s, int64_t n, std::span<const DVec> seqs);

/// The blocks each of n instances of map kernel `k` takes at `lanes` (Note [Rows over several
/// blocks] in codegen/lanes.h): 1, unless the lanes are a block's (kSplitLanes) and the body
/// has a split_fold (one outer fold, over rows of a sequence it reads); then split_parts's
/// choice (exec/common/tuning.h) from those rows' average length and the blocks of 256 threads
/// the device holds at once. GpuKernels::run cuts it to what the launched kernel's registers
/// allow (split_parts_within).
int64_t map_kernel_parts(const flatten::KernelBody& k, int lanes, int64_t n, std::span<const DVec> seqs,
                         const runtime::cuda::DeviceProperties& device);

/// The columns of the grid a map kernel's instances form, where its tiled kernel is the
/// choice (Note [Tiled folds] in flatten/tiled_folds.h), else 0: at `auto` (no level pinned,
/// nor NDP_MAP_LANES), for a body with a tiled fold, at least kTiledInstances instances whose
/// row ids form a grid of at least 16 rows and 16 columns (a pass over the ids and a read-back,
/// which a smaller map kernel would feel).
inline constexpr int64_t kTiledInstances = int64_t{1} << 14;
int64_t tiled_columns(const flatten::Stmt& s, std::span<const DVec> ins, Gpu& g, GpuKernels& kernels);

/// A map_lanes statement's choice for n instances over the rows `rows` (each a vector of
/// sequences): the lanes of its map kernel, or 0 for the flattened form.
int own_row_form(int64_t n, std::span<const DVec* const> rows, const runtime::cuda::DeviceProperties& device,
                 const Tuning& tuning);

}  // namespace ndp::exec::cuda
