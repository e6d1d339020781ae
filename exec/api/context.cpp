// Contexts and the calls every program kind shares (include/ndp/ndp.hpp): choosing the backend,
// the process-wide lock, and dispatch to the program's implementation (exec/api/api_impl.h).
#include <cstdlib>

#include "exec/api/api_impl.h"
#include "exec/cuda/executor.h"
#include "exec/cuda/gpu.h"

namespace ndp {

namespace detail {

std::mutex& api_lock() {
  static std::mutex m;
  return m;
}

void fail(std::string message) { throw ndp::Error("error: " + message, message); }

void fail_at(const lang::SourceManager& sm, lang::Span span, std::string report, std::string message) {
  while (!report.empty() && report.back() == '\n') report.pop_back();
  if (!span.valid()) throw ndp::Error(std::move(report), std::move(message));
  lang::LineCol lc = sm.position(span);
  throw ndp::Error(std::move(report), std::move(message), std::string(sm.name(span.file)), lc.line, lc.col);
}

DataPtr call(const FunctionImpl& f, const DataPtr& argument, bool device_result) {
  std::lock_guard<std::mutex> lock(api_lock());
  return f.call(argument, device_result);
}

std::shared_ptr<const FunctionImpl> find_function(const std::shared_ptr<ProgramImpl>& p, std::string_view name,
                                                  const std::string& argument_type, const std::string& result_type) {
  std::lock_guard<std::mutex> lock(api_lock());
  return p->function(name, argument_type, result_type);
}

}  // namespace detail

Context::Context(Options options) {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  Backend b = options.backend;
  if (b == Backend::Default || b == Backend::Cuda) {  // (opening the GPU takes a while: only here)
    std::string why;
    if (!exec::cuda::Gpu::select_device(options.device, &why)) detail::fail(why);
    std::string cuda_missing = exec::cuda::CudaExecutor::unavailable_reason();
    if (b == Backend::Default) b = cuda_missing.empty() ? Backend::Cuda : Backend::Cpu;
    if (b == Backend::Cuda && !cuda_missing.empty()) detail::fail("the cuda backend cannot run here: " + cuda_missing);
  }
  if (!options.cache_dir.empty()) setenv("NDP_CACHE_DIR", options.cache_dir.c_str(), 1);
  impl_ = std::make_shared<detail::ContextImpl>(detail::ContextImpl{std::move(options), b});
}

Backend Context::backend() const { return impl_->backend; }

std::string Program::eval(std::string_view expression) const {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  return impl_->eval(expression);
}

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Default: return "default";
    case Backend::Interp: return "interp";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "default";
}

}  // namespace ndp
