// Note [Partition levels] (flatten/flat_ir.h) on the cuda backend: the loop's levels as stable
// partitions of each instance in place, grid-wide while instances are long, then all the levels
// left of each short one in a block (Note [Partition levels on the GPU] in
// codegen/partition_levels_ptx.h).
#pragma once

#include <optional>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// The result of the loop of `plan` over `arg` (a sequence of ints or floats), of type `result`
/// (arg's); nothing where the kernels cannot be had, or where the engine met what the plan does
/// not promise (an element in no part or in two, a scalar that fails, a child that is its whole
/// instance): the loop then runs level by level, which gives the program's answer or error.
/// NDP_PARTITION_LEVELS=0 turns this off, for measuring.
std::optional<DVec> run_partition_levels(Gpu& g, GpuKernels& kernels, const flatten::PartitionLevels& plan, const DVec& arg,
                                         const lang::Type* result);

}  // namespace ndp::exec::cuda
