// The reference interpreter: runs Core IR directly. It defines ndp's semantics and is the
// oracle that every other backend is tested against.
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "include/ndp/interrupt.h"
#include "lang/core.h"
#include "lang/value.h"

namespace ndp::lang::eval {

/// Set (from a signal handler: it is a lock-free atomic) to stop the evaluation in progress:
/// ndp::interrupt_flag() (Note [Cancellation] in include/ndp/interrupt.h). The evaluation
/// stops with the runtime error `Interrupted.`, clearing it. The REPL's Ctrl-C sets it.
std::atomic<bool>& interrupt_requested();

/// A runtime error (extensions.md §4): CMU's message text plus the source location.
struct RuntimeError {
  std::string message;  // e.g. "Divide by zero."
  Span span;
};

struct RunResult {
  bool ok = false;
  Value value;
  std::vector<Value> frame;  // the top frame's slots after the run (assignments read these)
  RuntimeError error;
};

struct InterpOptions {
  std::FILE* out = stdout;      // program output (print_string, print)
  uint64_t max_call_depth = 1'000'000;  // deeper recursion is a clean runtime error
};

class Interpreter {
 public:
  Interpreter(core::Program& prog, InterpOptions opts = {});
  ~Interpreter();

  /// Runs one top-level body. Never throws for user errors; a failed run leaves globals as
  /// they were. Runs on a thread with a large stack so deep NESL recursion does not overflow.
  RunResult run(const core::TopExpr& top);

  /// Buffers with ids up to `last_file` hold the standard library: a runtime error raised inside
  /// library code is reported at the innermost user call site (extensions.md §4 wants the
  /// user's source location, not a line of stdlib/).
  void set_library_files(uint32_t last_file);

  /// Calls a global function value with an argument (used by tests and the embedding API).
  RunResult call(uint32_t global, const std::vector<const Type*>& type_args, const Value& arg);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndp::lang::eval
