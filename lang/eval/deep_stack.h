// Running the evaluator on a thread with a very large stack, so deep NESL recursion fits.
#pragma once

#include <cstddef>
#include <functional>

namespace ndp::lang::eval {

/// Runs work items, one at a time, each on a fresh thread whose stack is `reserve` bytes of
/// address space. The space is reserved once (MAP_NORESERVE) and committed only as the
/// recursion touches it; it is handed back to the kernel after every item.
class DeepStack {
 public:
  explicit DeepStack(size_t reserve);
  ~DeepStack();
  DeepStack(const DeepStack&) = delete;
  DeepStack& operator=(const DeepStack&) = delete;

  /// Runs `work` to completion on the big-stack thread; an exception it throws is rethrown in
  /// the caller. The thread blocks SIGPIPE (broken pipes become write errors).
  void run(const std::function<void()>& work);

  /// True when the calling thread (a DeepStack thread) is within `kMargin` bytes of the end
  /// of its stack: the evaluator then stops with "Recursion too deep." instead of crashing.
  static bool nearly_full();

  /// For a signal handler (async-signal-safe): when a DeepStack thread is evaluating and the
  /// handler runs on another thread, sends it `signo` too, so that a call it is blocked in (a
  /// read from a pipe) returns with EINTR. The kernel may pick any thread for Ctrl-C.
  static void forward_to_evaluation(int signo);
  static constexpr size_t kMargin = size_t{1} << 20;

 private:
  void* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace ndp::lang::eval
