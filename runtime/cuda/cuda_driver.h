// The CUDA driver API, loaded at run time with dlopen: a table of entry points and the check
// that turns every CUresult into a Status naming the call.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "errors.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

/// The driver library's name; dlopen finds it where the NVIDIA driver installed it.
inline constexpr const char* kDriverLibrary = "libcuda.so.1";

/// An opened driver library and one function pointer per line of cuda_functions.def. Loading it
/// needs no GPU (cuInit is not called here); a machine without the NVIDIA driver gets a clear
/// Status instead, and the `cpu` backend stays available.
class Driver {
 public:
  /// Opens `library` and resolves every entry point; fails with call "dlopen" or "dlsym".
  static Result<std::unique_ptr<Driver>> load(const std::string& library = kDriverLibrary);

  /// The process-wide driver from libcuda.so.1, loaded on first use; null when absent, with the
  /// reason in *why.
  static const Driver* system(Status* why = nullptr);

  ~Driver();
  Driver(const Driver&) = delete;
  Driver& operator=(const Driver&) = delete;

  /// CUDA_SUCCESS → ok; anything else → a Status with `call` and the driver's name and text.
  Status check(CUresult result, const char* call, std::string detail = {}) const;

  const std::string& library() const { return library_; }

  /// With NDP_PROFILE set, what the host has asked of the driver so far, for the profile's
  /// columns: its waits for the stream (each costs the GPU's whole queue) and its kernel
  /// launches, and its nanoseconds waiting and in every other call. Zero otherwise.
  struct Clock {
    uint64_t waits = 0;
    uint64_t launches = 0;
    uint64_t wait_ns = 0;
    uint64_t call_ns = 0;
    uint64_t allocs = 0;  // device memory from the driver (not from the pool's own cache)
  };
  const Clock& clock() const { return clock_; }

  /// Runs one driver call (`call()`, named `name`) and checks its result; with NDP_PROFILE set,
  /// also counts and times it into clock() and the table of entry points printed at exit.
  template <class Call>
  Status timed_check(Call&& call, const char* name) const {
    if (!profiling_) return check(call(), name);
    const auto t0 = std::chrono::steady_clock::now();
    const CUresult r = call();
    const uint64_t ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    std::lock_guard<std::mutex> lock(tally_mu_);
    if (std::strcmp(name, "cuStreamSynchronize") == 0) {
      ++clock_.waits;
      clock_.wait_ns += ns;
    } else {
      clock_.launches += std::strcmp(name, "cuLaunchKernel") == 0;
      clock_.allocs += std::strcmp(name, "cuMemAllocAsync") == 0 || std::strcmp(name, "cuMemAlloc") == 0;
      clock_.call_ns += ns;
    }
    Tally& t = tallies_[name];
    ++t.calls;
    t.ns += ns;
    return check(r, name);
  }

#define NDP_CUDA_FN(name, symbol, params) CUresult (*name) params = nullptr;
#include "cuda_functions.def"
#include "cuda_optional_functions.def"  // null where the driver lacks them
#undef NDP_CUDA_FN

  /// With NDP_PROFILE set, counts `n` kernel launches that went out by other calls than
  /// cuLaunchKernel (a launch batch's graph).
  void count_launches(uint64_t n) const {
    if (!profiling_) return;
    std::lock_guard<std::mutex> lock(tally_mu_);
    clock_.launches += n;
  }

  /// With NDP_PROFILE set, counts one call of `what` (a string literal) that took `took`, in the
  /// table of entry points only: a call no statement made (the launch thread's).
  template <class Duration>
  void tally_time(const char* what, Duration took) const {
    if (!profiling_) return;
    std::lock_guard<std::mutex> lock(tally_mu_);
    Tally& t = tallies_[what];
    ++t.calls;
    t.ns += static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(took).count());
  }

  /// With NDP_PROFILE set, counts one event of the runtime's own (`what`, a string literal) in
  /// the table of entry points printed at exit, with no time (how launch batches went out).
  void tally(const char* what) const {
    if (!profiling_) return;
    std::lock_guard<std::mutex> lock(tally_mu_);
    ++tallies_[what].calls;
  }

 private:
  Driver() = default;
  void* handle_ = nullptr;
  std::string library_;
  /// An entry point's calls and nanoseconds (NDP_PROFILE).
  struct Tally {
    uint64_t calls = 0;
    uint64_t ns = 0;
  };
  bool profiling_ = false;  // NDP_PROFILE is set; the table goes to stderr when the driver is closed
  mutable std::mutex tally_mu_;
  mutable Clock clock_;
  mutable std::map<std::string, Tally> tallies_;
};

}  // namespace ndp::runtime::cuda

/// Calls driver entry point `fn` through `driver` and yields its checked Status, named `fn`.
#define NDP_CU(driver, fn, ...) (driver).timed_check([&] { return (driver).fn(__VA_ARGS__); }, #fn)

/// Returns early from a function returning Status (or Result) when the expression fails.
#define NDP_CU_TRY(expr)                                    \
  do {                                                      \
    ::ndp::runtime::cuda::Status ndp_cu_status_ = (expr);        \
    if (!ndp_cu_status_.ok()) return ndp_cu_status_;        \
  } while (false)
