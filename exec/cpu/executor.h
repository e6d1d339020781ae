// The cpu backend's executor: runs a Flat IR program (flatten/flat_ir.h) on Vecs, with the
// lifted primitives on the segmented-array runtime (runtime/cpu).
#pragma once

#include <cstdio>
#include <memory>

#include <span>

#include "exec/host/bound_global.h"
#include "flatten/flat_ir.h"
#include "lang/core.h"
#include "lang/eval/interp.h"

namespace ndp::exec::cpu {


class CpuExecutor {
 public:
  /// Globals are read from `prog` when a Global statement runs; program output goes to `out`.
  CpuExecutor(lang::core::Program& prog, std::FILE* out);
  ~CpuExecutor();
  CpuExecutor(const CpuExecutor&) = delete;
  CpuExecutor& operator=(const CpuExecutor&) = delete;

  /// Runs `p.functions[p.entry]` on one instance of the int 0; returns its one result.
  /// Runtime errors are returned (never thrown), with the span of the failing statement. Runs
  /// on a thread with a large stack, so deep recursion of lifted calls does not overflow.
  lang::eval::RunResult run(const flatten::Program& p);
  /// As run, with the Global statements of the globals in `bound` reading their vectors, and
  /// the result left as a vector of one instance in `*result` (RunResult::value stays empty):
  /// the embedding API's calls.
  lang::eval::RunResult run_bound(const flatten::Program& p, std::span<const host::BoundGlobal> bound,
                                  host::Vec* result);

  /// As Interpreter::set_library_files: an error raised in a statement of the standard
  /// library (file ids up to `last_file`) is reported at the innermost Call statement of user
  /// code that led to it.
  void set_library_files(uint32_t last_file);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndp::exec::cpu
