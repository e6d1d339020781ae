// Big-stack evaluation threads (see deep_stack.h).
#include "lang/eval/deep_stack.h"

#include <pthread.h>
#include <sys/mman.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <exception>

namespace ndp::lang::eval {

namespace {

thread_local uintptr_t t_stack_limit = 0;

// The DeepStack thread now evaluating, for forward_to_evaluation (cleared before it ends).
std::atomic<bool> g_evaluating{false};
std::atomic<pthread_t> g_evaluation_thread{};

struct Job {
  const std::function<void()>* work;
  std::exception_ptr error;
};

void* thread_main(void* arg) {
  auto* job = static_cast<Job*>(arg);
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
  g_evaluation_thread.store(pthread_self());
  g_evaluating.store(true);
  try {
    (*job->work)();
  } catch (...) {
    job->error = std::current_exception();
  }
  g_evaluating.store(false);
  return nullptr;
}

}  // namespace

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
  if (base_) munmap(base_, size_);
}

void DeepStack::run(const std::function<void()>& work) {
  Job job{&work, nullptr};
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (base_)
    pthread_attr_setstack(&attr, base_, size_);
  else
    pthread_attr_setstacksize(&attr, size_t{256} << 20);  // could not reserve: settle for less
  pthread_t thread;
  int rc = pthread_create(&thread, &attr, thread_main, &job);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    // No thread to be had: run here. The call-depth limit still applies; only the stack
    // guard is lost (nearly_full() is false on threads it did not start).
    work();
    return;
  }
  pthread_join(thread, nullptr);
  if (base_) madvise(base_, size_, MADV_DONTNEED);
  if (job.error) std::rethrow_exception(job.error);
}

bool DeepStack::nearly_full() {
  auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return t_stack_limit != 0 && sp < t_stack_limit;
}

}  // namespace ndp::lang::eval
