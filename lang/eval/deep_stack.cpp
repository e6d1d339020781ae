// Big-stack evaluation threads (see deep_stack.h).
#include "lang/eval/deep_stack.h"

#include <pthread.h>
#include <sys/mman.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <algorithm>
#include <exception>
#include <utility>

namespace ndp::lang::eval {

namespace {

thread_local uintptr_t t_stack_limit = 0;
thread_local uintptr_t t_lowest_sp = UINTPTR_MAX;  // the deepest nearly_full() saw this item

// The DeepStack thread now evaluating, for forward_to_evaluation (cleared after each item).
std::atomic<bool> g_evaluating{false};
std::atomic<pthread_t> g_evaluation_thread{};

}  // namespace

void* DeepStack::thread_main(void* self) {
  sigset_t pipe_only;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* low = nullptr;
    size_t size = 0;
    pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    t_stack_limit = reinterpret_cast<uintptr_t>(low) + DeepStack::kMargin;
  }
  static_cast<DeepStack*>(self)->serve();
  return nullptr;
}

// Note [Hand-over]
// Each side publishes its state before it reads the other's (seq_cst atomics): the sleeper
// sets its `*_sleeping_` flag, under the mutex, before it checks for work, and the poster
// publishes the work before it reads the flag, so one of them always sees the other and a
// wake-up is never lost. A side that finds the other awake posts with no syscall at all.

namespace {

/// Spins up to about `limit` for `ready`: first with the CPU's pause hint alone, which sees the
/// other side within a fraction of a microsecond, then yielding the core between checks, so
/// that a machine with fewer cores than busy threads is not starved.
template <class Ready>
bool spin_until(Ready ready, std::chrono::microseconds limit) {
  for (int i = 0; i < 4096; ++i) {
    if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  auto end = std::chrono::steady_clock::now() + limit;
  for (int i = 0;; ++i) {
    if (ready()) return true;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > end) return false;
    sched_yield();
  }
}

constexpr std::chrono::microseconds kSpin{200};

}  // namespace

void DeepStack::serve() {
  for (;;) {
    auto posted = [&] { return job_.load() != nullptr || stop_.load(); };
    if (!spin_until(posted, kSpin)) {
      std::unique_lock<std::mutex> lock(mutex_);
      thread_sleeping_.store(true);
      wake_.wait(lock, posted);
      thread_sleeping_.store(false);
    }
    if (stop_.load()) return;
    const std::function<void()>* work = job_.exchange(nullptr);
    std::exception_ptr error;
    g_evaluation_thread.store(pthread_self());
    g_evaluating.store(true);
    try {
      (*work)();
    } catch (...) {
      error = std::current_exception();
    }
    g_evaluating.store(false);
    release_deep_pages();
    error_ = error;
    busy_.store(false);
    if (caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_.notify_all();
    }
  }
}

// After an item that recursed deeper than kKeepResident, the pages below that depth go back to
// the kernel (a deep recursion may have committed gigabytes). The item's frames between two
// nearly_full() checks are small; kMargin more covers them.
void DeepStack::release_deep_pages() {
  uintptr_t lowest = t_lowest_sp;
  t_lowest_sp = UINTPTR_MAX;
  if (!base_ || lowest == UINTPTR_MAX) return;
  uintptr_t base = reinterpret_cast<uintptr_t>(base_);
  uintptr_t keep_from = base + size_ - std::min(size_, kKeepResident);
  if (lowest >= keep_from) return;
  uintptr_t from = lowest > base + kMargin ? (lowest - kMargin) & ~uintptr_t{4095} : base;
  madvise(reinterpret_cast<void*>(from), keep_from - from, MADV_DONTNEED);
}

void DeepStack::forward_to_evaluation(int signo) {
  if (!g_evaluating.load()) return;
  pthread_t t = g_evaluation_thread.load();
  if (!pthread_equal(t, pthread_self())) pthread_kill(t, signo);
}

DeepStack::DeepStack(size_t reserve) {
  void* p = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                 -1, 0);
  if (p != MAP_FAILED) {
    base_ = p;
    size_ = reserve;
  }
}

DeepStack::~DeepStack() {
  if (started_) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    pthread_join(thread_, nullptr);
  }
  if (base_) munmap(base_, size_);
}

void DeepStack::run(const std::function<void()>& work) {
  if (!started_) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    if (base_)
      pthread_attr_setstack(&attr, base_, size_);
    else
      pthread_attr_setstacksize(&attr, size_t{256} << 20);  // could not reserve: settle for less
    started_ = pthread_create(&thread_, &attr, thread_main, this) == 0;
    pthread_attr_destroy(&attr);
    if (!started_) {
      // No thread to be had: run here. The call-depth limit still applies; only the stack
      // guard is lost (nearly_full() is false on threads it did not start).
      work();
      return;
    }
  }
  busy_.store(true);
  job_.store(&work);
  if (thread_sleeping_.load()) {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_.notify_one();
  }
  auto finished = [&] { return !busy_.load(); };
  if (!spin_until(finished, kSpin)) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    done_.wait(lock, finished);
    caller_sleeping_.store(false);
  }
  if (std::exception_ptr e = std::exchange(error_, nullptr)) std::rethrow_exception(e);
}

void DeepStack::watch_this_thread() {
  if (t_stack_limit != 0) return;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
  void* low = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  t_stack_limit = reinterpret_cast<uintptr_t>(low) + std::max(std::min(DeepStack::kMargin, size / 4), size_t{1});
}

bool DeepStack::nearly_full() {
  auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (sp < t_lowest_sp) t_lowest_sp = sp;
  return t_stack_limit != 0 && sp < t_stack_limit;
}

}  // namespace ndp::lang::eval
