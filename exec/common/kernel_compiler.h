// What the executors need from a code generator, and the one the process uses.
//
// Note [Kernel compilers]
// exec/ runs Flat IR and never links LLVM: an AOT-compiled program links exec/ and runtime/
// alone. The fused kernels it runs come through this interface. The driver installs the LLVM
// code generator (driver/llvm_kernels.h over codegen/) before any executor runs; an AOT
// program would install its precompiled kernels. Without a compiler the cpu backend runs
// every kernel through its interpretive loop (exec/cpu/kernels.h, the same results), and the
// cuda backend reports that it cannot compile kernels.
#pragma once

#include <span>
#include <string>

#include "flatten/flat_ir.h"
#include "flatten/kernel_abi.h"

namespace ndp::exec {

/// Compiles kernel bodies for the host and for the GPU. Implementations are thread-safe.
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  /// Host code (HostKernelFn convention), valid for the compiler's lifetime.
  /// Throws std::runtime_error when compilation fails.
  virtual flatten::HostKernelFn host(const flatten::KernelBody& k) = 0;
  /// The same with the inputs in the mask `strided` read at (i / c)·stride + offset + i % c
  /// (flatten/kernel_abi.h); nullptr where the compiler holds no such kernel (an AOT program's).
  /// Throws std::runtime_error when compilation fails.
  virtual flatten::HostKernelFn host_strided(const flatten::KernelBody&, uint64_t) { return nullptr; }
  /// PTX of the whole-vector kernel, `lanes` threads an instance, in `form`, its sequences'
  /// rows as `rows` says (codegen/kernel_ptx.h compile_ptx's contract).
  virtual std::string ptx(const flatten::KernelBody& k, std::span<const flatten::GatheredInput> gathered, int lanes,
                          flatten::KernelForm form, flatten::RowForms rows) = 0;
  /// PTX of the consumer kernels' element function (compile_element_ptx's contract).
  virtual std::string element_ptx(const flatten::KernelBody& k, std::span<const flatten::GatheredInput> gathered) = 0;
  /// PTX of the kernels of regular levels (codegen/regular_levels_ptx.h compile_regular_levels_ptx's
  /// contract); empty where the compiler has none (the loop then runs level by level).
  virtual std::string regular_levels_ptx(const flatten::RegularLevels&, bool) { return {}; }
  /// PTX of the kernels of partition levels (codegen/partition_levels_ptx.h
  /// compile_partition_levels_ptx's contract); empty where the compiler has none.
  virtual std::string partition_levels_ptx(const flatten::PartitionLevels&, const lang::Type*) { return {}; }
  /// False for a compiler that has only what was compiled ahead (Note [Precompiled modules] in
  /// exec/cuda/kernels.h): ptx and element_ptx then always throw.
  virtual bool compiles_ptx() const { return true; }
};

/// Makes `c` the process's compiler (not owned; it must outlive every executor). Call before
/// executors run; later calls replace it for kernels not yet compiled.
void install_kernel_compiler(KernelCompiler* c);
/// The installed compiler, or null.
KernelCompiler* kernel_compiler();

}  // namespace ndp::exec
