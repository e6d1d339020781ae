// The C++ header `ndp compile` writes: a typed function for each exported ndp function, calling
// it through the embedding API (include/ndp/ndp.hpp) in the compiled program.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lang/core.h"

namespace ndp::driver {

/// The C++ type of a value of closed type `t` (Note [Embedding values] in include/ndp/ndp.hpp),
/// as a parameter (a flat sequence is a span, read in place) or as a result; nullopt for the
/// types the API cannot carry (streams, functions, datatypes).
std::optional<std::string> cpp_type(const lang::Type* t, bool parameter);

/// One exported function: its definition and its C++ parameters.
struct HeaderFunction {
  const lang::core::Function* fn;
  std::string signature;  // the ndp type, printed (`([float], [float]) -> float`)
  std::string place;      // `file:line` of the definition
  std::vector<std::pair<std::string, std::string>> params;  // C++ type and name
  std::string result;     // C++ type
};

/// The parameters of `fn` as C++ declares them: one per component of its argument tuple (a
/// `function f(a, b)` takes a and b), named as in the source where they are variables. Empty
/// optional when a type has no C++ form.
std::optional<HeaderFunction> header_function(const lang::core::Function& fn);

/// The whole header for the program `symbol` (its symbols and namespace) built for `cpu_only`
/// (the cpu backend) or for either backend.
std::string header_text(const std::string& symbol, const std::string& source, const std::vector<HeaderFunction>& fns,
                        bool cpu_only);

}  // namespace ndp::driver
