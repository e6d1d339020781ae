// Private to the implementations of include/ndp/ndp.hpp: what its opaque detail:: types are.
// exec/api implements the parts an ahead-of-time compiled program links (values, contexts,
// compiled programs: no LLVM, no front end); driver/embedding_api.cpp adds compiling source.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "exec/host/bound_global.h"
#include "exec/host/vec.h"
#include "include/ndp/ndp.hpp"
#include "lang/source.h"

namespace ndp::detail {

/// n instances of one closed type (Note [Embedding values]): on the host, or on the GPU (an
/// exec::cuda::DVec behind `device`: an ndp::Array of a cuda context, or a result that holds
/// one).
struct Data : exec::host::ExecValue {};

DataPtr make_data(exec::host::Vec v);
DataPtr make_data(exec::host::ExecValue v);
/// The Data with its values on the host (downloaded when on the device).
DataPtr on_host(const DataPtr& d);

/// The process-wide lock every API call takes (Note [Embedding threads]).
std::mutex& api_lock();

/// A function ready for calls: a JIT-compiled one (driver/) or one of a compiled image.
struct FunctionImpl {
  virtual ~FunctionImpl() = default;
  /// Runs the function on one argument; the caller holds api_lock(). With `device_result` (the
  /// result holds an ndp::Array) it stays on the GPU on the cuda backend.
  virtual DataPtr call(const DataPtr& argument, bool device_result) const = 0;
};

/// A program's functions by name, at the types spelled in NESL syntax (the header's Traits).
struct ProgramImpl {
  virtual ~ProgramImpl() = default;
  virtual std::shared_ptr<const FunctionImpl> function(std::string_view name, std::string_view arg_type,
                                                       std::string_view result_type) = 0;
  virtual std::string eval(std::string_view expression) = 0;
};

/// Which backend a context runs on (Default resolved).
struct ContextImpl {
  Options options;
  Backend backend = Backend::Cpu;
};

/// Throws ndp::Error with `message` and no place in the source.
[[noreturn]] void fail(std::string message);

/// Throws ndp::Error: `report` as what() (final newlines dropped), `message`, and the place of
/// `span` in `sm` (none for an invalid span).
[[noreturn]] void fail_at(const lang::SourceManager& sm, lang::Span span, std::string report, std::string message);

}  // namespace ndp::detail
