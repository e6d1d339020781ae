// Host code for fused kernels through ORC LLJIT (codegen/common/kernel_compiler.h), built
// lazily: LLVM is initialised on the first kernel compiled, so `ndp` starts fast.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "codegen/common/kernel_compiler.h"

namespace ndp::codegen::cpu {

/// An LLJIT instance and the kernels it compiled, by KernelBody::key() (one compilation per
/// distinct kernel). Thread-safe.
class HostKernelCompiler final : public KernelCompiler {
 public:
  HostKernelCompiler();
  ~HostKernelCompiler() override;
  HostKernelFn compile(const flat::KernelBody& k) override;
  /// Kernels compiled so far (cache misses).
  size_t compiled() const { return compiled_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::unordered_map<std::string, HostKernelFn> cache_;
  size_t compiled_ = 0;
};

/// The optimised LLVM IR of a kernel's host loop, as the JIT compiles it (`--dump=llvm`).
/// Throws std::runtime_error when LLVM fails.
std::string host_kernel_ir(const flat::KernelBody& k);

/// The process-wide compiler's kernel, or nullptr if compilation failed (said at NDP_DEBUG >= 1,
/// then the interpretive loop runs) or NDP_NO_JIT is set. A failing kernel is not retried.
HostKernelFn host_kernel(const flat::KernelBody& k);

}  // namespace ndp::codegen::cpu
