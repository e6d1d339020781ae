// Running the evaluator on a thread with a very large stack, so deep NESL recursion fits.
#pragma once

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>

namespace ndp::lang::eval {

/// Runs work items, one at a time, on one thread whose stack is `reserve` bytes of address
/// space. The space is reserved once (MAP_NORESERVE) and committed only as the recursion
/// touches it. The thread lives as long as the DeepStack and waits for the next item, since
/// starting a thread and its OpenMP team for each item cost more than small items themselves
/// (a call through the embedding API); after an item that went deeper than kKeepResident,
/// the stack below that depth is handed back to the kernel.
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

  /// Makes nearly_full() watch the calling thread's own stack (a worker of the cpu backend's
  /// tasks, whose stack is the thread library's, not a DeepStack's): the limit is kMargin above
  /// its end, or a quarter of its size for a small stack.
  static void watch_this_thread();

  /// For a signal handler (async-signal-safe): when a DeepStack thread is evaluating and the
  /// handler runs on another thread, sends it `signo` too, so that a call it is blocked in (a
  /// read from a pipe) returns with EINTR. The kernel may pick any thread for Ctrl-C.
  static void forward_to_evaluation(int signo);
  static constexpr size_t kMargin = size_t{1} << 20;
  /// The top of the stack that stays committed between items.
  static constexpr size_t kKeepResident = size_t{64} << 20;

 private:
  static void* thread_main(void* self);
  void serve();
  void release_deep_pages();

  void* base_ = nullptr;
  size_t size_ = 0;
  bool started_ = false;
  pthread_t thread_{};
  // The hand-over of an item and of its end. Each side spins briefly before it sleeps on its
  // condition variable, so that back-to-back small items (calls through the embedding API)
  // never wait for a wake-up through the kernel, which costs tens of microseconds in a VM;
  // `*_sleeping_` tell the other side that a notify is needed (Note [Hand-over] in the .cpp).
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::atomic<const std::function<void()>*> job_{nullptr};  // the item, until the thread takes it
  std::atomic<bool> busy_{false};                            // an item is posted or running
  std::atomic<bool> stop_{false};
  std::atomic<bool> thread_sleeping_{false}, caller_sleeping_{false};
  std::exception_ptr error_;
};

}  // namespace ndp::lang::eval
