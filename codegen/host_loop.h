// Private to codegen: a kernel body as a host loop (the HostKernelFn convention), shared by the
// JIT (kernel_jit.cpp) and the object files of `ndp compile --target=cpu` (kernel_object.cpp).
#pragma once

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <string>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// Adds `void name(i64 begin, i64 end, ptr ins, ptr outs)` computing instances [begin, end),
/// the inputs in the mask `strided` read at (i / c)·stride + offset + i % c (HostKernelFn).
void emit_loop(llvm::Module& m, const flatten::KernelBody& k, const std::string& name, uint64_t strided = 0);
/// LLVM's O2 pipeline, with `tm`'s cost model (it vectorises the loops).
void optimise(llvm::Module& m, llvm::TargetMachine* tm);

}  // namespace ndp::codegen
