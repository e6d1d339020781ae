// One code generator for fused elementwise kernels (Note [Fused kernels] in flatten/flat_ir.h),
// two targets: host code through ORC LLJIT (codegen/cpu/kernel_jit.h) and PTX for sm_90.
#pragma once

#include <string>

#include "codegen/common/kernel_abi.h"
#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// Compiles kernel bodies to callable host code.
class KernelCompiler {
 public:
  virtual ~KernelCompiler() = default;
  /// The compiled kernel (HostKernelFn convention), valid for the compiler's lifetime; throws
  /// std::runtime_error when LLVM fails.
  virtual HostKernelFn compile(const flat::KernelBody& k) = 0;
};

/// Instances each thread of a PTX kernel computes.
inline constexpr int kPtxInstancesPerThread = 4;

/// PTX text (target nvptx64-nvidia-cuda, sm_90) of an entry `ndp_kernel(i64 n, ptr in_0, ...,
/// ptr out_0, ...)` where thread %tid.x of block %ctaid.x computes the instances
/// %ctaid.x·%ntid.x·kPtxInstancesPerThread + %tid.x + u·%ntid.x for u < kPtxInstancesPerThread
/// (those below n): launch ceil(n / kPtxInstancesPerThread) threads.
/// Throws std::runtime_error when LLVM fails.
std::string compile_ptx(const flat::KernelBody& k);

}  // namespace ndp::codegen
