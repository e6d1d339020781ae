// The session behind one Program of the embedding API (include/ndp/ndp.hpp): source compiled
// with its errors kept, functions prepared for calls, and calls whose argument and result are
// vectors in the executors' flat layout.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "driver/session.h"
#include "exec/host/vec.h"

namespace ndp::driver {

class EmbeddedSession {
 public:
  EmbeddedSession(Backend backend, std::FILE* out);
  ~EmbeddedSession();
  EmbeddedSession(const EmbeddedSession&) = delete;
  EmbeddedSession& operator=(const EmbeddedSession&) = delete;

  /// Evaluates every form of `text` without answers; throws ndp::Error at the first error.
  void compile(std::string name, std::string text);

  /// A function prepared for calls: `f(ARG)` for a global ARG that each call binds.
  struct Entry;
  /// Function `name` at the argument and result types spelled in NESL syntax ("[float]",
  /// "(int, [char])"); a polymorphic function is instantiated at them. Flattens it for the flat
  /// backends. Throws ndp::Error when there is no such function or its type does not fit.
  std::shared_ptr<const Entry> entry(std::string_view name, std::string_view arg_type, std::string_view result_type);
  /// Runs the entry on one argument instance; returns its one result. Throws ndp::Error for a
  /// runtime error.
  exec::host::Vec call(const Entry& e, const exec::host::Vec& argument);

  /// The printed value of one expression (`%test`'s format); throws ndp::Error.
  std::string eval(std::string_view expression);

 private:
  [[noreturn]] void throw_captured();
  std::unique_ptr<Session::Impl> impl_;
};

}  // namespace ndp::driver
