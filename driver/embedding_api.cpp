// Compiling source through the embedding API (include/ndp/ndp.hpp): Context::compile and the
// JIT's programs and functions over driver::EmbeddedSession. The rest of the API, which an
// ahead-of-time compiled program also links, is in exec/api.
#include <fstream>
#include <sstream>

#include "driver/embedded_session.h"
#include "exec/api/api_impl.h"

namespace ndp {

namespace {

driver::Backend driver_backend(Backend b) {
  switch (b) {
    case Backend::Interp: return driver::Backend::Interp;
    case Backend::Cuda: return driver::Backend::Cuda;
    default: return driver::Backend::Cpu;
  }
}

struct JitProgram;

struct JitFunction final : detail::FunctionImpl {
  std::shared_ptr<JitProgram> program;  // keeps the session alive
  std::shared_ptr<const driver::EmbeddedSession::Entry> entry;
  JitFunction(std::shared_ptr<JitProgram> p, std::shared_ptr<const driver::EmbeddedSession::Entry> e)
      : program(std::move(p)), entry(std::move(e)) {}
  detail::DataPtr call(const detail::DataPtr& argument, bool device_result) const override;
};

struct JitProgram final : detail::ProgramImpl, std::enable_shared_from_this<JitProgram> {
  Backend backend;
  driver::EmbeddedSession session;
  JitProgram(const detail::ContextImpl& c) : backend(c.backend), session(driver_backend(c.backend), c.options.output) {}
  std::shared_ptr<const detail::FunctionImpl> function(std::string_view name, std::string_view arg_type,
                                                       std::string_view result_type) override {
    return std::make_shared<JitFunction>(shared_from_this(), session.entry(name, arg_type, result_type));
  }
  std::string eval(std::string_view expression) override { return session.eval(expression); }
};

detail::DataPtr JitFunction::call(const detail::DataPtr& argument, bool device_result) const {
  if (argument->device && program->backend != Backend::Cuda)
    detail::fail("an ndp::Array of a cuda context passed to a program on another backend");
  return detail::make_data(program->session.call(*entry, *argument, device_result));
}

}  // namespace

Program Context::compile(std::string_view source, std::string_view name) const {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  auto p = std::make_shared<JitProgram>(*impl_);
  p->session.compile(std::string(name), std::string(source));
  return Program(std::move(p));
}

Program Context::compile_file(const std::string& path) const {
  std::ifstream in(path, std::ios::binary);
  if (!in) detail::fail("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return compile(text.str(), path);
}

}  // namespace ndp
