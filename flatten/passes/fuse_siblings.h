// Pass: fusion of sibling kernels, Kernel statements that read the same input.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after fuse_elementwise. Guarantees: within each block, a Kernel
/// statement that reads a variable an earlier Kernel statement of the same block also reads,
/// and whose inputs are all defined before that earlier statement, is merged into it: its
/// nodes are appended (inputs the two share are read once), its outputs become more outputs of
/// the earlier one, and it is removed. Sharing an input means the same instance count, and
/// kernels have no effects; a later kernel that can fail moves up only past statements that
/// cannot fail, and never into one that can (Note [Kernels that can fail]), so computing it
/// earlier changes no result and no error. Why: quicksort's three comparisons against the
/// pivot, for example, then make one pass over the elements instead of three.
Program fuse_siblings(Program p);

}  // namespace ndp::flatten
