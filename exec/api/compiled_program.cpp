// Programs compiled ahead of time (`ndp compile`), loaded from their image (Note [Compiled
// images] in flatten/compiled_image.h) and run by the executors, with the fused kernels the
// object file brought (register_compiled_kernels). No LLVM, no front end.
#include <mutex>
#include <unordered_map>

#include "exec/api/api_impl.h"
#include "exec/common/kernel_compiler.h"
#include "exec/cpu/executor.h"
#include "exec/cuda/executor.h"
#include "exec/cuda/kernels.h"
#include "flatten/compiled_image.h"
#include "flatten/kernel_abi.h"
#include "lang/diagnostics.h"

namespace ndp {

namespace {

/// The kernels of compiled programs, by the stable hash of their key (Note [Kernel compilers]
/// in exec/common/kernel_compiler.h). A kernel that is not there makes the cpu backend run
/// it through its interpretive loop.
class CompiledKernels final : public exec::KernelCompiler {
 public:
  void add(const detail::CompiledKernel* kernels, size_t count) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < count; ++i) table_.emplace(kernels[i].key_hash, kernels[i].fn);
  }
  flatten::HostKernelFn host(const flatten::KernelBody& k) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = table_.find(flatten::stable_hash(k.key()));
    if (it == table_.end()) throw std::runtime_error("a kernel the compiled program does not hold");
    return it->second;
  }
  std::string ptx(const flatten::KernelBody&, std::span<const flatten::GatheredInput>, int, flatten::KernelForm, flatten::RowForms) override {
    return no_ptx();
  }
  std::string element_ptx(const flatten::KernelBody&, std::span<const flatten::GatheredInput>) override {
    return no_ptx();
  }
  bool compiles_ptx() const override { return false; }

 private:
  static std::string no_ptx() {
    throw std::runtime_error("a GPU kernel the compiled program does not hold (ndp compile --target=cpu "
                             "holds none): it needs ndp's compiler (libndp)");
  }
  std::mutex mu_;
  std::unordered_map<uint64_t, flatten::HostKernelFn> table_;
};

CompiledKernels& compiled_kernels() {
  static CompiledKernels k;
  return k;
}

struct CompiledProgram;

struct CompiledFunction final : detail::FunctionImpl {
  std::shared_ptr<CompiledProgram> program;
  const flatten::CompiledEntry* entry;
  CompiledFunction(std::shared_ptr<CompiledProgram> p, const flatten::CompiledEntry* e)
      : program(std::move(p)), entry(e) {}
  detail::DataPtr call(const detail::DataPtr& argument, bool device_result) const override;
};

struct CompiledProgram final : detail::ProgramImpl, std::enable_shared_from_this<CompiledProgram> {
  lang::core::Program core;
  lang::SourceManager sm;
  flatten::CompiledImage image;
  std::unique_ptr<exec::cpu::CpuExecutor> cpu;
  std::unique_ptr<exec::cuda::CudaExecutor> cuda;

  CompiledProgram(const detail::ContextImpl& c, const unsigned char* bytes, size_t size) {
    try {
      image = flatten::read_image(std::string_view(reinterpret_cast<const char*>(bytes), size), core);
    } catch (const std::runtime_error& e) {
      detail::fail(e.what());
    }
    for (const flatten::SourceBuffer& b : image.sources) sm.add(b.name, b.text, b.origin);
    if (c.backend == Backend::Interp)
      detail::fail("a program compiled ahead of time runs on the cpu or cuda backend, not interp");
    if (c.backend == Backend::Cuda) {
      cuda = std::make_unique<exec::cuda::CudaExecutor>(core, c.options.output);
      cuda->set_library_files(image.library_files);
    } else {
      cpu = std::make_unique<exec::cpu::CpuExecutor>(core, c.options.output);
      cpu->set_library_files(image.library_files);
    }
  }

  std::shared_ptr<const detail::FunctionImpl> function(std::string_view name, std::string_view arg_type,
                                                       std::string_view result_type) override {
    const lang::Type* arg = lang::read_plain_type(core.types, arg_type);
    const lang::Type* result = lang::read_plain_type(core.types, result_type);
    for (const flatten::CompiledEntry& e : image.entries) {
      if (e.name != name) continue;
      if (e.arg_type != arg || e.result_type != result)
        detail::fail("function '" + std::string(name) + "' was compiled with type " +
                     lang::type_to_string(e.arg_type, {}) + " -> " + lang::type_to_string(e.result_type, {}) +
                     ", which does not fit the handle's " + std::string(arg_type) + " -> " + std::string(result_type));
      return std::make_shared<CompiledFunction>(shared_from_this(), &e);
    }
    detail::fail("the compiled program exports no function named '" + std::string(name) + "'");
  }

  std::string eval(std::string_view) override {
    detail::fail("eval needs ndp's compiler: a program compiled ahead of time only calls its functions");
  }

  /// The error as the REPL reports it: the message, then the place with its caret line.
  [[noreturn]] void runtime_error(const lang::eval::RuntimeError& e) const {
    detail::fail_at(sm, e.span, lang::format_runtime_error(sm, e.message, e.span), e.message);
  }
};

detail::DataPtr CompiledFunction::call(const detail::DataPtr& argument, bool device_result) const {
  CompiledProgram& p = *program;
  if (argument->device && !p.cuda) detail::fail("an ndp::Array of a cuda context passed to a program on the cpu");
  exec::host::BoundGlobal bound[] = {{entry->argument, argument->vec, argument->device}};
  exec::host::ExecValue result;
  lang::eval::RunResult r = p.cuda ? p.cuda->run_bound(entry->flat, bound, &result.vec, device_result ? &result.device : nullptr)
                                   : p.cpu->run_bound(entry->flat, bound, &result.vec);
  if (!r.ok) p.runtime_error(r.error);
  return detail::make_data(std::move(result));
}

}  // namespace

namespace detail {

void register_compiled_kernels(const CompiledKernel* kernels, size_t count) {
  std::lock_guard<std::mutex> lock(api_lock());
  CompiledKernels& k = compiled_kernels();
  k.add(kernels, count);
  // A process with ndp's compiler (libndp) keeps it: it compiles whatever kernel is missing.
  if (exec::kernel_compiler() == nullptr) exec::install_kernel_compiler(&k);
}

void register_compiled_modules(const CompiledModule* modules, size_t count) {
  std::lock_guard<std::mutex> lock(api_lock());
  for (size_t i = 0; i < count; ++i) exec::cuda::register_precompiled_module(modules[i].key, modules[i].image);
}

}  // namespace detail

Program Context::load(const unsigned char* image, size_t size) const {
  std::lock_guard<std::mutex> lock(detail::api_lock());
  return Program(std::make_shared<CompiledProgram>(*impl_, image, size));
}

}  // namespace ndp
