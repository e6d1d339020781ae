// Per-statement timing of the cpu backend's executor (NDP_PROFILE=1), to see where a flat
// program spends its time: every data statement (exec_data) is timed with its instance count,
// and the table goes to stderr when the process exits, most expensive first.
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

/// Adds one execution of `s` (in function `fn`, `instances` instances of its first operand,
/// `seconds` inclusive) to the process-wide table.
void stmt_profile_add(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances, double seconds);

/// Called before a program runs: the statements of the programs before it may be freed and
/// their addresses reused.
void stmt_profile_new_program();

/// Times one statement while profiling is on; does nothing otherwise.
class StmtTimer {
 public:
  StmtTimer(const flatten::Function& fn, const flatten::Stmt& s, int64_t instances)
      : on_(stmt_profile_enabled()), fn_(fn), s_(s), n_(instances) {
    if (on_) t0_ = std::chrono::steady_clock::now();
  }
  ~StmtTimer() {
    if (on_) stmt_profile_add(fn_, s_, n_, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count());
  }
  StmtTimer(const StmtTimer&) = delete;
  StmtTimer& operator=(const StmtTimer&) = delete;

 private:
  bool on_;
  const flatten::Function& fn_;
  const flatten::Stmt& s_;
  int64_t n_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace ndp::exec
