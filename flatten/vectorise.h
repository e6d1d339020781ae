// Vectorisation (Blelloch flattening): Core IR -> Flat IR of lifted functions.
//
// Assumes: a type-checked Core program (lang/core.h). Guarantees: a flatten::Program whose entry
// function computes the given top-level body in a context of one instance; every Core function
// reached is instantiated once per closed type instantiation (monomorphisation on demand) and
// exists only in lifted form. Apply-to-each becomes operations on the concatenated elements of
// its generators, with free variables replicated into the new context; `if` runs each branch
// on the packed subset of instances that takes it and merges the results; recursion inside an
// apply-to-each becomes a lifted call on all the instances of one recursion depth at once.
#pragma once

#include <stdexcept>
#include <string>

#include "flatten/flat_ir.h"
#include "lang/core.h"

namespace ndp::flatten {

/// A construct the flat backends cannot run yet (e.g. a function passed as a value); reported
/// to the user as an error at `span`.
struct Unsupported {
  std::string message;
  lang::Span span;
};

/// Flattens the body of a top-level form. Throws Unsupported.
Program vectorise(lang::core::Program& core, const lang::core::Expr* body);

}  // namespace ndp::flatten
