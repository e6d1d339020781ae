// The embedding API (include/ndp/ndp.hpp): contexts, programs and function handles over
// driver::EmbeddedSession, one process-wide lock around every call (Note [Embedding threads]).
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "driver/embedded_session.h"
#include "driver/embedding_data.h"
#include "include/ndp/ndp.hpp"

namespace ndp {

namespace detail {

namespace {

std::mutex& api_lock() {
  static std::mutex m;
  return m;
}

driver::Backend driver_backend(Backend b) {
  switch (b) {
    case Backend::Interp: return driver::Backend::Interp;
    case Backend::Cpu: return driver::Backend::Cpu;
    case Backend::Cuda: return driver::Backend::Cuda;
    case Backend::Default: break;
  }
  return driver::backend_unavailable_reason(driver::Backend::Cuda).empty() ? driver::Backend::Cuda
                                                                            : driver::Backend::Cpu;
}

}  // namespace

struct ContextImpl {
  Options options;
  driver::Backend backend;
};

struct ProgramImpl {
  std::shared_ptr<const ContextImpl> context;
  driver::EmbeddedSession session;
  ProgramImpl(std::shared_ptr<const ContextImpl> c)
      : context(std::move(c)), session(context->backend, context->options.output) {}
};

struct FunctionImpl {
  std::shared_ptr<ProgramImpl> program;
  std::shared_ptr<const driver::EmbeddedSession::Entry> entry;
};

DataPtr call(const FunctionImpl& f, const DataPtr& argument) {
  std::lock_guard<std::mutex> lock(api_lock());
  return make_data(f.program->session.call(*f.entry, argument->vec));
}

std::shared_ptr<const FunctionImpl> find_function(const std::shared_ptr<ProgramImpl>& p, std::string_view name,
                                                  const std::string& argument_type, const std::string& result_type) {
  std::lock_guard<std::mutex> lock(api_lock());
  return std::make_shared<const FunctionImpl>(FunctionImpl{p, p->session.entry(name, argument_type, result_type)});
}

}  // namespace detail

Context::Context(Options options) {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  driver::Backend b = detail::driver_backend(options.backend);
  if (std::string why = driver::backend_unavailable_reason(b); !why.empty()) {
    std::string message = std::string("the ") + driver::backend_name(b) + " backend cannot run here: " + why;
    throw Error("error: " + message, message);
  }
  if (!options.cache_dir.empty()) setenv("NDP_CACHE_DIR", options.cache_dir.c_str(), 1);
  impl_ = std::make_shared<detail::ContextImpl>(detail::ContextImpl{std::move(options), b});
}

Backend Context::backend() const {
  switch (impl_->backend) {
    case driver::Backend::Interp: return Backend::Interp;
    case driver::Backend::Cpu: return Backend::Cpu;
    case driver::Backend::Cuda: return Backend::Cuda;
  }
  return Backend::Cpu;
}

Program Context::compile(std::string_view source, std::string_view name) const {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  auto p = std::make_shared<detail::ProgramImpl>(impl_);
  p->session.compile(std::string(name), std::string(source));
  return Program(std::move(p));
}

Program Context::compile_file(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::string message = "cannot read " + path;
    throw Error("error: " + message, message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return compile(text.str(), path);
}

std::string Program::eval(std::string_view expression) const {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  return impl_->session.eval(expression);
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
