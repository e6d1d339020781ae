// Internal interface between the interpreter and the native primitives of lang/prims.def.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "lang/core.h"
#include "include/ndp/interrupt.h"
#include "lang/runtime_errors.h"
#include "lang/source.h"
#include "lang/value.h"

namespace ndp::lang::eval {

class RandState;
class StreamTable;

/// Thrown inside the evaluator for a user-visible runtime error; `Interpreter::run` catches it
/// and returns it as `RunResult::error`. Never escapes the interpreter. Fixed messages come from
/// lang/runtime_errors.def (`message(RuntimeErrorId::...)`).
struct EvalError {
  std::string message;
  Span span;
};

/// Interpreter state that primitives read or change.
struct PrimEnv {
  TypeContext* types = nullptr;
  std::FILE* out = nullptr;
  StreamTable* streams = nullptr;
  RandState* rand = nullptr;
};

/// One application of a primitive: where it is (for errors and rand call sites) and the types
/// that instantiate its scheme.
struct PrimCall {
  core::PrimId id = core::PrimId::Count_;
  Span span;
  const std::vector<const Type*>* type_args = nullptr;    // may mention the frame's Var(i)
  const std::vector<const Type*>* frame_targs = nullptr;  // closes them; may be null
  PrimEnv* env = nullptr;

  /// The closed type of scheme variable `i` (e.g. `a` of `sum : [a] -> a`).
  const Type* type_arg(size_t i) const;
  [[noreturn]] void fail(std::string message) const { throw EvalError{std::move(message), span}; }
  /// Called every 2^16 elements by a primitive's long loops: Ctrl-C stops them too (Note
  /// [Cancellation] in include/ndp/interrupt.h).
  void poll_interrupt(uint64_t element) const {
    if ((element & 0xffff) == 0 && interrupt_pending() && take_interrupt()) fail(message(RuntimeErrorId::Interrupted));
  }
};

/// Applies a primitive to its `arity` evaluated arguments (lang/prims.def's arity).
Value apply_prim(const PrimCall& call, const Value* args);

// The groups apply_prim dispatches to by the primitive's family (lang/core.h): scalar (Elementwise,
// Random), sequence (Sequence, Scan, Reduce, Combine) and I/O.
Value apply_scalar_prim(const PrimCall& call, const Value* args);
Value apply_seq_prim(const PrimCall& call, const Value* args);
Value apply_io_prim(const PrimCall& call, const Value* args);

/// The neutral value of `identity` (library.md §7): 0, 0.0, F, space, empty sequences,
/// componentwise for tuples and datatypes; streams become nullstr.
Value identity_of(const Value& v);

/// The same neutral value chosen from a closed type alone (datatype fields instantiated).
Value identity_of_type(const PrimCall& call, const Type* t);

/// A short text for a Value's kind, used only in internal-error messages.
const char* kind_name(ValueKind k);

}  // namespace ndp::lang::eval
