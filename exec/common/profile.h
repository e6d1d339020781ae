// Per-statement timing of the executors (NDP_PROFILE=1), to see where a flat program spends
// its time: every data statement (exec_data) is timed with its instance count, kernel
// compilation apart (Note [Compile time apart]), and the table goes to stderr when the process
// exits, most expensive first.
//
// Off by default; when off a statement costs one branch on a cached flag.
#pragma once

#include <chrono>
#include <cstdint>

namespace ndp::flatten {
struct Function;
struct Stmt;
}  // namespace ndp::flatten

namespace ndp::exec {

/// True when NDP_PROFILE is set to a non-zero value (read once).
bool stmt_profile_enabled();

/// NDP_PROFILE=host: the cuda backend does not wait for each statement's kernels, so the table
/// shows what the host spends on each (launching, allocating; a statement that reads back still
/// waits for the GPU there).
bool stmt_profile_host_only();

/// NDP_PROFILE=trace: as host, and each statement is written to stderr as it starts, with the
/// instances of its first operand, so that the runtime's lines for its launches and read-backs
/// (runtime/cuda/module.cpp, memory.cpp) follow it: which statement launches what.
bool stmt_profile_trace();
void stmt_profile_trace_stmt(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances);

/// What one execution of a statement asked of a GPU's stream: waits for it (read-backs,
/// synchronisations), kernel launches, and the host's nanoseconds in the driver, waiting and
/// in its other calls. The cpu backend has none.
struct StreamCounts {
  uint64_t waits = 0;
  uint64_t launches = 0;
  uint64_t wait_ns = 0;
  uint64_t call_ns = 0;
  uint64_t allocs = 0;  // allocations the driver made (a pool's cached block is not one)
};

/// Adds one execution of `s` (in function `fn`, `instances` instances of its first operand,
/// `seconds` inclusive, `stream` what it asked of the GPU) to the process-wide table.
void stmt_profile_add(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances, double seconds,
                      StreamCounts stream = {});

/// Called before a program runs: the statements of the programs before it may be freed and
/// their addresses reused.
void stmt_profile_new_program();

/// Adds `seconds` of kernel compilation (the host JIT, LLVM's PTX, the driver's JIT, loading
/// a cached module) to the table's own row, and to this thread's compile total.
void stmt_profile_add_compile(double seconds);
/// This thread's compile total so far (what a statement subtracts: Note [Compile time apart]).
double stmt_profile_compile_seconds();

// Note [Compile time apart]
// A kernel compiles the first time a statement runs it, in a warm-up run as a rule, and takes
// milliseconds: counted in the statement, it would make a statement of ten calls look ten times
// its cost in every later call. So compilation is timed apart (CompileTimer around it), taken
// out of the statement that did it, and shown as one row of its own.

/// Times a compilation while profiling is on; does nothing otherwise.
class CompileTimer {
 public:
  CompileTimer() : on_(stmt_profile_enabled()) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~CompileTimer() {
    if (on_) stmt_profile_add_compile(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  CompileTimer(const CompileTimer&) = delete;
  CompileTimer& operator=(const CompileTimer&) = delete;

 private:
  bool on_;
  std::chrono::steady_clock::time_point t0_;
};

/// Times one statement while profiling is on; does nothing otherwise.
class StmtTimer {
 public:
  StmtTimer(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances)
      : on_(stmt_profile_enabled()), fn_(fn), s_(s), n_(instances) {
    if (on_) {
      if (stmt_profile_trace()) stmt_profile_trace_stmt(fn, s, instances);
      compiled0_ = stmt_profile_compile_seconds();
      t0_ = std::chrono::steady_clock::now();
    }
  }
  ~StmtTimer() {
    if (!on_) return;
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    stmt_profile_add(fn_, s_, n_, seconds - (stmt_profile_compile_seconds() - compiled0_), stream_);
  }
  StmtTimer(const StmtTimer&) = delete;
  StmtTimer& operator=(const StmtTimer&) = delete;

  /// What the statement asked of the GPU's stream (the cuda backend says, before the end).
  void stream_used(StreamCounts used) { stream_ = used; }

 private:
  bool on_;
  const flatten::Function& fn_;
  const flatten::Stmt& s_;
  int64_t n_;
  StreamCounts stream_;
  double compiled0_ = 0;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace ndp::exec
