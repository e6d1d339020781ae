// Host code for fused kernels through ORC LLJIT, built lazily: LLVM is initialised on the first
// kernel compiled, so `ndp` starts fast.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "flatten/flat_ir.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

/// An LLJIT instance and the kernels it compiled, by KernelBody::key() (one compilation per
/// distinct kernel). Thread-safe.
class HostKernelCompiler {
 public:
  HostKernelCompiler();
  ~HostKernelCompiler();
  /// The compiled kernel (HostKernelFn convention), valid for the compiler's lifetime, with the
  /// inputs in the mask `strided` read at (i / c)·stride + offset + i % c; throws
  /// std::runtime_error when LLVM fails.
  flatten::HostKernelFn compile(const flatten::KernelBody& k, uint64_t strided = 0);
  /// Kernels compiled so far (cache misses).
  size_t compiled() const { return compiled_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::unordered_map<std::string, flatten::HostKernelFn> cache_;
  size_t compiled_ = 0;
};

/// The optimised LLVM IR of a kernel's host loop, as the JIT compiles it (`--dump=llvm`).
/// Throws std::runtime_error when LLVM fails.
std::string host_kernel_ir(const flatten::KernelBody& k);

}  // namespace ndp::codegen
