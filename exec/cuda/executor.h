// The cuda backend's executor: runs a Flat IR program with its vectors on the GPU.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include <span>

#include "exec/host/bound_global.h"
#include "flatten/flat_ir.h"
#include "lang/core.h"
#include "lang/eval/interp.h"

namespace ndp::exec::cuda {

class CudaExecutor {
 public:
  /// Empty when the cuda backend can run here, else why not (no driver, no device, a build
  /// without the GPU primitives).
  static std::string unavailable_reason();

  /// As CpuExecutor's: globals from `prog`, program output to `out`. The GPU must be available.
  CudaExecutor(lang::core::Program& prog, std::FILE* out);
  ~CudaExecutor();
  CudaExecutor(const CudaExecutor&) = delete;
  CudaExecutor& operator=(const CudaExecutor&) = delete;

  /// Runs `p.functions[p.entry]` on one instance of the int 0, as CpuExecutor::run: the data
  /// stays on the device from the first statement to the result, which alone comes back.
  lang::eval::RunResult run(const flatten::Program& p);
  /// As CpuExecutor::run_bound: the bound vectors go to the device (those bound as device
  /// vectors are there), and the result comes back; with `device_result`, it stays on the device
  /// as an exec::cuda::DVec there instead (`*result` untouched).
  lang::eval::RunResult run_bound(const flatten::Program& p, std::span<const host::BoundGlobal> bound,
                                  host::Vec* result, std::shared_ptr<const void>* device_result = nullptr);
  void set_library_files(uint32_t last_file);

  /// Primitive applications that ran on the host since the executor was made (see Note [GPU
  /// lifted primitives]), and the kernel cache's counters.
  int64_t host_fallbacks() const;
  std::string kernel_stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndp::exec::cuda
