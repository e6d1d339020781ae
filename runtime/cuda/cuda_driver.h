// The CUDA driver API, loaded at run time with dlopen: a table of entry points and the check
// that turns every CUresult into a Status naming the call.
#pragma once

#include <memory>
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

#define NDP_CUDA_FN(name, symbol, params) CUresult (*name) params = nullptr;
#include "cuda_functions.def"
#undef NDP_CUDA_FN

 private:
  Driver() = default;
  void* handle_ = nullptr;
  std::string library_;
};

}  // namespace ndp::runtime::cuda

/// Calls driver entry point `fn` through `driver` and yields its checked Status, named `fn`.
#define NDP_CU(driver, fn, ...) (driver).check((driver).fn(__VA_ARGS__), #fn)

/// Returns early from a function returning Status (or Result) when the expression fails.
#define NDP_CU_TRY(expr)                                    \
  do {                                                      \
    ::ndp::runtime::cuda::Status ndp_cu_status_ = (expr);        \
    if (!ndp_cu_status_.ok()) return ndp_cu_status_;        \
  } while (false)
