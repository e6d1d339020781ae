// Note [Regular levels] (flatten/flat_ir.h) on the cuda backend: a regular recursion's levels
// rewritten in place, one kernel a level over the whole array while instances are longer than
// a block's tile, then one kernel for all the levels left, each block its tile in shared memory.
#pragma once

#include <optional>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// The result of the loop of `plan` over `arg` (a sequence of flat scalars), of type
/// `result`; nothing where arg's rows are not known to have one length, the lengths' chain does
/// not split as the plan runs it (exec/host/regular_chain.h), the array is too long for the
/// kernels' 32-bit indices, or no kernel can be had: the loop then runs level by level.
/// NDP_REGULAR_LEVELS=0 turns this off, for measuring.
std::optional<DVec> run_regular_levels(Gpu& g, GpuKernels& kernels, const flatten::RegularLevels& plan, const DVec& arg,
                                       const lang::Type* result);

}  // namespace ndp::exec::cuda
