// Loading libcuda.so.1 with dlopen and converting driver results into Status values.
#include "cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace ndp::runtime::cuda {

Result<std::unique_ptr<Driver>> Driver::load(const std::string& library) {
  dlerror();
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string text = "no NVIDIA driver (" + library + ") found";
    if (why != nullptr) text += std::string(": ") + why;
    return Status::failure("dlopen", text);
  }
  std::unique_ptr<Driver> driver(new Driver());
  driver->handle_ = handle;
  driver->library_ = library;
  const char* profile = std::getenv("NDP_PROFILE");
  driver->profiling_ = profile != nullptr && *profile != '\0' && std::string(profile) != "0";
  // A driver older than some entry point we use lacks its symbol: name it rather than crash later.
#define NDP_CUDA_FN(name, symbol, params)                                                    \
  driver->name = reinterpret_cast<decltype(driver->name)>(dlsym(handle, symbol));           \
  if (driver->name == nullptr) {                                                            \
    return Status::failure("dlsym", std::string("the NVIDIA driver (") + library +            \
                                        ") has no entry point " symbol "; it is too old");    \
  }
#include "cuda_functions.def"
#undef NDP_CUDA_FN
#define NDP_CUDA_FN(name, symbol, params) \
  driver->name = reinterpret_cast<decltype(driver->name)>(dlsym(handle, symbol));
#include "cuda_optional_functions.def"
#undef NDP_CUDA_FN
  return driver;
}

const Driver* Driver::system(Status* why) {
  static std::once_flag once;
  static std::unique_ptr<Driver> driver;
  static Status failure;
  std::call_once(once, [] {
    auto loaded = load(kDriverLibrary);
    if (loaded.ok()) driver = std::move(loaded.value());
    else failure = loaded.status();
  });
  if (why != nullptr) *why = failure;
  return driver.get();
}

Driver::~Driver() {
  if (profiling_ && !tallies_.empty()) {  // NDP_PROFILE: where the host's time in the driver went
    std::fprintf(stderr, "NDP_PROFILE: CUDA driver calls\n%10s %10s %10s  %s\n", "calls", "seconds", "us/call", "entry point");
    for (const auto& [name, t] : tallies_)
      std::fprintf(stderr, "%10llu %10.4f %10.2f  %s\n", static_cast<unsigned long long>(t.calls), 1e-9 * static_cast<double>(t.ns),
                   1e-3 * static_cast<double>(t.ns) / static_cast<double>(t.calls), name.c_str());
  }
  if (handle_ != nullptr) dlclose(handle_);
}

Status Driver::check(CUresult result, const char* call, std::string detail) const {
  if (result == CUDA_SUCCESS) return Status();
  const char* name = nullptr;
  const char* text = nullptr;
  // These two fail only for codes the driver does not know; then the number must do.
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = nullptr;
  if (cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = nullptr;
  // The toolkit's stub library describes nothing, yet its one code deserves a clear message.
  if (name == nullptr && result == CUDA_ERROR_STUB_LIBRARY) {
    name = "CUDA_ERROR_STUB_LIBRARY";
    text = "the CUDA driver is the toolkit's stub library, not the NVIDIA driver";
  }
  if (name == nullptr && result == CUDA_ERROR_DEINITIALIZED) {  // at exit, it describes nothing
    name = "CUDA_ERROR_DEINITIALIZED";
    text = "the CUDA driver is shutting down";
  }
  std::string code_name = name != nullptr ? name : "CUresult " + std::to_string(result);
  std::string code_text = text != nullptr ? text : "the driver does not describe this code";
  return Status::driver_failure(call, result, std::move(code_name), std::move(code_text),
                                std::move(detail));
}

}  // namespace ndp::runtime::cuda
