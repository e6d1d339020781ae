// Kernel launches handed to a thread of their own, which makes the driver calls while the
// program's thread goes on.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "launch_now.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

struct LaunchConfig;

// Note [The launch thread]
// A kernel launch costs the host 4.1–4.9 µs inside cuLaunchKernel on the GPU machines
// (bench/results/session51/launch_micro, and NDP_PROFILE's driver table), whatever the kernel.
// In the counting sort of 10^6 keys a pass costs the host about 90 µs, 54 of them in its 11
// launches, and the GPU about 90 µs: each waits for the other in turn, and the pass took
// 100–115 µs (H200, bench/results/session52). The launches do not need the program's thread:
// their arguments are values, and nothing it does next depends on the launch having been made,
// only on its order among the stream's work.
//
// So the program's thread copies each launch (the function, its shape, its arguments' bytes,
// whose sizes the driver tells once a function: cuFuncGetParamInfo) into a ring, and this
// thread makes the cuLaunchKernel calls in ring order. The program's thread then spends well
// under a microsecond a launch, and the two threads together keep ahead of the GPU where either
// alone could not.
//
// Order: before anything else goes on the stream (a copy, an allocation, a free, a wait),
// Device::stream() drains the ring (waits until every launch in it has been made), so the
// stream keeps the program's order. A module is unloaded only after a synchronize, so no queued
// launch names a function of it.
//
// Failures: a launch that fails is named as cuLaunchKernel's failure always was (the kernel and
// its shape); the first is kept and reported by the next wait (Device::synchronize, a
// read-back), as a kernel's own failure on the GPU is. The launches after it are still made.
//
// Idle: the thread spins for a while after its last launch (a program's launches come a few
// microseconds apart), then sleeps until the next; the program's thread wakes it only then.
//
// Exit: a thread still making launches while the driver's own exit handler shuts it down would
// crash, so every launch thread is stopped (drained, joined) by a static's destructor that runs
// before that handler (made after cuInit, it is destroyed before).
//
// On unless NDP_LAUNCH_THREAD=0, where the driver has cuFuncGetParamInfo (CUDA 12.4), and where
// launch batches (Note [Launch batches]) are not asked for.
class LaunchThread {
 public:
  /// Whether `driver` can tell a kernel's parameter sizes (cuFuncGetParamInfo).
  static bool available(const Driver& driver);
  /// Whether the environment leaves the thread on (NDP_LAUNCH_THREAD is not 0).
  static bool wanted();

  /// Starts the thread, with `context` current on it; its launches go to `stream`. `sizes`: the
  /// device's, which must outlive this.
  LaunchThread(const Driver& driver, ParameterSizes& sizes, CUcontext context, CUstream stream);
  /// Drains the ring and stops the thread.
  ~LaunchThread();
  /// The same, early: at the process's exit, before the driver shuts down (a Device held to the
  /// end is never destroyed). Once only; later launches are made on the calling thread.
  void stop();
  LaunchThread(const LaunchThread&) = delete;
  LaunchThread& operator=(const LaunchThread&) = delete;

  /// Copies a launch of `function` (named `name` in a failure's message) with `parameters` (each
  /// pointing at an argument's value) into the ring; the thread makes it. A kernel whose
  /// arguments do not fit an entry is launched here, after the ring drains.
  Status add(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters);

  /// Waits until every launch added so far has been made (is on the stream).
  void drain() const;

  /// The first launch failure since the last call, if any. Call after drain().
  Status take_failure();

  /// Launches made by the thread so far (for tests).
  uint64_t made() const { return done_.load(std::memory_order_acquire); }

 private:
  static constexpr size_t kRing = 128;            // entries; the program's thread waits when all are in use
  static constexpr size_t kArgumentBytes = 1024;  // an entry's room for arguments
  static constexpr size_t kMaxArguments = 64;

  struct Entry {
    CUfunction function = nullptr;
    unsigned grid = 1, block = 1, shared = 0;
    std::string name;
    uint32_t arguments = 0;
    alignas(16) unsigned char bytes[kArgumentBytes];
    void* pointers[kMaxArguments];
  };

  void run();
  void make(Entry& e);

  const Driver& driver_;
  CUcontext context_;
  CUstream stream_;
  std::vector<Entry> ring_;
  ParameterSizes& sizes_;  // the program's thread's
  // Launches added (written by the program's thread) and made (by this thread); entry i % kRing
  // holds launch i.
  std::atomic<uint64_t> added_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<bool> sleeping_{false};
  std::atomic<uint32_t> wake_{0};  // moved to wake the sleeping thread
  std::atomic<bool> stop_{false};
  bool stopped_ = false;  // stop() has run (the program's thread's)
  std::mutex failure_mu_;
  Status failure_;
  std::thread thread_;
};

}  // namespace ndp::runtime::cuda
