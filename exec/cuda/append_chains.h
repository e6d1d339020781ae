// Running an AppendChain statement (Note [Append chains] in flatten/flat_ir.h) on the cuda backend.
//
// Note [Append chains on the GPU]
// Statement by statement, quicksort's `sorted[0] ++ equal ++ sorted[1]` copies the level's data
// four times: each elt is a nested take, each `++` an append. The chain's root instead
//   1. finds each elt's chosen sequence per instance as a start and a length in the inner
//      elements (ndp_elt_segments: n-sized, with the index check; no element moves);
//   2. sums the parts' lengths per instance and scans them (one read-back: the total);
//   3. copies every element once (ndp_append_parts: a thread per output element, as append).
// A chain of more than Primitives::kMaxAppendParts parts appends its first parts into one part
// first.
#pragma once

#include <functional>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// The value of the chain `s`: `operand(v)` is the value of variable v; `result` the type of
/// s.dst. Throws the first failing elt's error.
DVec run_append_chain(Gpu& g, const flatten::Stmt& s, const std::function<const DVec&(flatten::VarId)>& operand,
                      const lang::Type* result);

}  // namespace ndp::exec::cuda
