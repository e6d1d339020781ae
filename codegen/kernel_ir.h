// Private to codegen: the LLVM IR of one instance of a kernel body, shared by the host and
// NVPTX code generators so both targets compute exactly the same thing.
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// The LLVM type that holds an element of a flat scalar kind in memory (bool: i8).
llvm::Type* storage_type(llvm::LLVMContext& c, const lang::Type* t);

/// Emits the nodes of `k` for one instance; `load(j)` returns input j's loaded value as
/// stored in memory. Returns the value of each output, ready to store (bool as i8 0/1).
std::vector<llvm::Value*> emit_instance(llvm::IRBuilder<>& b, const flatten::KernelBody& k,
                                        const std::function<llvm::Value*(uint32_t)>& load);

}  // namespace ndp::codegen
