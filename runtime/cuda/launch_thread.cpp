// The launch thread (Note [The launch thread] in launch_thread.h).
#include "launch_thread.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device.h"

namespace ndp::runtime::cuda {

namespace {

/// A short wait inside a spin loop.
inline void pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

/// How long the thread spins after its last launch before it sleeps: longer than the gaps
/// between a busy program's launches and most of its waits for the GPU (waking a sleeping thread
/// costs the next launch tens of microseconds: a quicksort of 2^24 keys, a few waits a level,
/// took 5.34 ms against 5.12 without the thread when it slept after 200 µs; H200, session 52),
/// short enough that an idle program does not hold a core.
constexpr auto kSpin = std::chrono::microseconds(1000);

/// The live launch threads (never destroyed: a Device held in a static may outlive any static
/// made after it), and a static whose destructor stops them at exit (Note [The launch thread]).
std::mutex& live_mutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

std::vector<LaunchThread*>& live_threads() {
  static auto* all = new std::vector<LaunchThread*>;
  return *all;
}

struct StopAtExit {
  ~StopAtExit() {
    std::lock_guard<std::mutex> lock(live_mutex());
    for (LaunchThread* t : live_threads()) t->stop();
  }
};

}  // namespace

bool LaunchThread::available(const Driver& driver) { return driver.cuFuncGetParamInfo != nullptr; }

bool LaunchThread::wanted() {
  const char* s = std::getenv("NDP_LAUNCH_THREAD");
  return s == nullptr || std::strcmp(s, "0") != 0;
}

LaunchThread::LaunchThread(const Driver& driver, ParameterSizes& sizes, CUcontext context, CUstream stream)
    : driver_(driver), sizes_(sizes), context_(context), stream_(stream), ring_(kRing) {
  thread_ = std::thread([this] { run(); });
  static StopAtExit stop_at_exit;  // made after cuInit, so destroyed before the driver's exit handler runs
  std::lock_guard<std::mutex> lock(live_mutex());
  live_threads().push_back(this);
}

LaunchThread::~LaunchThread() {
  stop();
  std::lock_guard<std::mutex> lock(live_mutex());
  std::erase(live_threads(), this);
}

void LaunchThread::stop() {
  if (stopped_) return;
  stopped_ = true;
  drain();
  stop_.store(true, std::memory_order_seq_cst);
  wake_.fetch_add(1, std::memory_order_seq_cst);
  wake_.notify_one();
  thread_.join();
}

Status LaunchThread::add(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters) {
  if (stopped_) return launch_now(driver_, function, name, config, parameters, stream_);
  const std::vector<uint32_t>& sizes = sizes_.of(function);
  size_t bytes = 0;
  for (uint32_t s : sizes) bytes = ((bytes + 7) & ~size_t{7}) + s;
  if (bytes > kArgumentBytes || sizes.size() > kMaxArguments) {  // too big for an entry: made here, in order
    drain();
    return launch_now(driver_, function, name, config, parameters, stream_);
  }
  const uint64_t i = added_.load(std::memory_order_relaxed);
  while (i - done_.load(std::memory_order_acquire) >= kRing) pause();  // the ring is full
  Entry& e = ring_[i % kRing];
  e.function = function;
  e.grid = config.grid_x;
  e.block = config.block_x;
  e.shared = config.shared_bytes;
  e.name.assign(name);
  e.arguments = static_cast<uint32_t>(sizes.size());
  size_t at = 0;
  for (size_t a = 0; a < sizes.size(); ++a) {
    at = (at + 7) & ~size_t{7};
    std::memcpy(e.bytes + at, parameters[a], sizes[a]);
    e.pointers[a] = e.bytes + at;
    at += sizes[a];
  }
  driver_.count_launches(1);
  // seq_cst with the thread's `sleeping_`: either it sees this launch before it sleeps, or this
  // thread sees it asleep and wakes it.
  added_.store(i + 1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    wake_.fetch_add(1, std::memory_order_seq_cst);
    wake_.notify_one();
  }
  return Status();
}

void LaunchThread::drain() const {
  const uint64_t target = added_.load(std::memory_order_relaxed);
  while (done_.load(std::memory_order_acquire) < target) pause();
}

Status LaunchThread::take_failure() {
  std::lock_guard<std::mutex> lock(failure_mu_);
  Status f = std::move(failure_);
  failure_ = Status();
  return f;
}

void LaunchThread::make(Entry& e) {
  const LaunchConfig c{e.grid, e.block, e.shared};
  void** parameters = e.arguments > 0 ? e.pointers : nullptr;
  // The driver call itself, not NDP_CU: its time belongs to no statement of the program's thread
  // (NDP_PROFILE counted the launch when it was added), only to the driver table.
  const auto t0 = std::chrono::steady_clock::now();
  const CUresult r = driver_.cuLaunchKernel(e.function, c.grid_x, 1, 1, c.block_x, 1, 1, c.shared_bytes, stream_,
                                            parameters, nullptr);
  driver_.tally_time("cuLaunchKernel (launch thread)", std::chrono::steady_clock::now() - t0);
  if (r == CUDA_SUCCESS) return;
  Status s = named_launch_failure(driver_.check(r, "cuLaunchKernel"), e.name, c);
  std::lock_guard<std::mutex> lock(failure_mu_);
  if (failure_.ok()) failure_ = std::move(s);
}

void LaunchThread::run() {
  const CUresult current = driver_.cuCtxSetCurrent(context_);
  const bool can_launch = current == CUDA_SUCCESS;
  if (!can_launch) {  // every launch would fail the same way: say so at the next wait, and make none
    std::lock_guard<std::mutex> lock(failure_mu_);
    failure_ = driver_.check(current, "cuCtxSetCurrent", "the launch thread");
  }
  uint64_t next = 0;
  auto idle_since = std::chrono::steady_clock::now();
  for (unsigned spins = 0;;) {
    if (next < added_.load(std::memory_order_acquire)) {
      if (can_launch) make(ring_[next % kRing]);
      done_.store(++next, std::memory_order_release);
      spins = 0;
      continue;
    }
    if (stop_.load(std::memory_order_acquire)) return;
    if (spins++ == 0) idle_since = std::chrono::steady_clock::now();
    if (spins % 64 != 0 || std::chrono::steady_clock::now() - idle_since < kSpin) {
      pause();
      continue;
    }
    // Asleep until add() or the destructor moves `wake_`; seq_cst with add()'s store of `added_`
    // and load of `sleeping_`, so that a launch added meanwhile is seen here or wakes the wait.
    const uint32_t w = wake_.load(std::memory_order_seq_cst);
    sleeping_.store(true, std::memory_order_seq_cst);
    if (next == added_.load(std::memory_order_seq_cst) && !stop_.load(std::memory_order_seq_cst))
      wake_.wait(w, std::memory_order_seq_cst);
    sleeping_.store(false, std::memory_order_seq_cst);
    spins = 0;
  }
}

}  // namespace ndp::runtime::cuda
