// The LLVM code generator (codegen/) behind the executors' kernel-compiler interface (Note
// [Kernel compilers] in exec/common/kernel_compiler.h): the one place where exec/ meets LLVM.
#pragma once

#include "exec/common/kernel_compiler.h"

namespace ndp::driver {

/// The process's LLVM kernel compiler, installed for the executors on the first call.
exec::KernelCompiler& install_llvm_kernels();

}  // namespace ndp::driver
