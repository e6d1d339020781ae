// The session behind one Program of the embedding API (include/ndp/ndp.hpp): source compiled
// with its errors kept, functions prepared for calls, and calls whose argument and result are
// vectors in the executors' flat layout.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <map>
#include <optional>
#include <span>
#include <string_view>

#include <vector>

#include "driver/session.h"
#include "exec/host/bound_global.h"
#include "exec/host/vec.h"
#include "flatten/compiled_image.h"

namespace ndp::driver {

struct CapturedErrors;  // driver/session_impl.h

class EmbeddedSession {
 public:
  EmbeddedSession(Backend backend, std::FILE* out);
  ~EmbeddedSession();
  EmbeddedSession(const EmbeddedSession&) = delete;
  EmbeddedSession& operator=(const EmbeddedSession&) = delete;

  /// Evaluates every form of `text` without answers; throws ndp::Error at the first error.
  void compile(std::string name, std::string text);

  /// A function prepared for calls: `f(ARG)` for a global ARG that each call binds; for the flat
  /// backends (and `ndp compile`) flattened too.
  using Entry = flatten::CompiledEntry;
  /// Function `name` at the argument and result types spelled in NESL syntax ("[float]",
  /// "(int, [char])"); a polymorphic function is instantiated at them. Throws ndp::Error when
  /// there is no such function or its type does not fit.
  std::shared_ptr<const Entry> entry(std::string_view name, std::string_view arg_type, std::string_view result_type);
  /// The same for the function global `global` at closed types, always flattened.
  std::shared_ptr<const Entry> entry(uint32_t global, const lang::Type* arg, const lang::Type* result);
  /// Runs the entry on one argument instance; returns its one result, left on the device where
  /// `device_result` and the backend is cuda. Throws ndp::Error for a runtime error.
  exec::host::ExecValue call(const Entry& e, const exec::host::ExecValue& argument, bool device_result = false);

  /// The printed value of one expression (`%test`'s format); throws ndp::Error.
  std::string eval(std::string_view expression);

  // ---- for `ndp compile` (driver/compile.cpp) ----
  /// The functions the compiled source defined (not the standard library's; the current
  /// definition of each name), in the order of their definitions.
  std::vector<uint32_t> user_functions() const;
  /// The global a name is bound to, if any.
  std::optional<uint32_t> lookup(std::string_view name) const;
  const lang::core::Program& core() const;
  lang::TypeContext& types();
  /// The error text of a diagnostic at `span` (`file:line:col: error: ...` and the caret line).
  std::string error_text(lang::Span span, const std::string& message) const;
  /// `file:line` of a span.
  std::string place(lang::Span span) const;
  /// The image of `entries` (Note [Compiled images]).
  std::string image(std::span<const Entry* const> entries) const;

 private:
  /// Throws the errors as an ndp::Error at the first one's place.
  [[noreturn]] void throw_captured(CapturedErrors errors);
  std::shared_ptr<const Entry> make_entry(uint32_t global, const lang::Type* arg, const lang::Type* result,
                                          std::vector<const lang::Type*> targs, bool flat);
  std::unique_ptr<Session::Impl> impl_;
  std::map<const Entry*, const lang::core::Expr*> calls_;  // each entry's `f(ARG)` (the interpreter runs it)
};

}  // namespace ndp::driver
