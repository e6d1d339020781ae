// Private to codegen: a fold's value combined across the GPU threads that run one instance
// (Lanes in kernel_ir.h, Note [Map kernels] in flatten/flat_ir.h).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include "codegen/kernel_ir.h"

namespace ndp::codegen {

/// `acc ⊕ x` for the reduction `fold` (sum, product, max_val, min_val, all, any, parity) at
/// flat scalar type `t`, as the fold's own step combines (an extreme replaces acc only when
/// strictly better).
llvm::Value* fold_combine(llvm::IRBuilder<>& b, lang::core::PrimId fold, const lang::Type* t, llvm::Value* acc, llvm::Value* x);

/// Every lane's `acc` (this lane's share of a fold, whose identity each lane started from)
/// combined by fold_combine over the `lanes`: a butterfly of warp shuffles, then, for lanes
/// past a warp, the warps' values through shared memory between two barriers. Every lane of
/// every instance must reach it. Each lane gets the value.
llvm::Value* combine_across_lanes(llvm::IRBuilder<>& b, lang::core::PrimId fold, const lang::Type* t, llvm::Value* acc,
                                  const Lanes& lanes);

}  // namespace ndp::codegen
