// The lifted primitives of the cpu backend: every PrimId of lang/prims.def applied
// instance-wise to Vecs of n instances (Note [Lifted primitives]).
//
// Note [Lifted primitives]
// * `apply_lifted_prim` tries the native implementation first (lifted_prims_scalar.cpp:
//   elementwise ops on scalar elements; lifted_prims_seq.cpp: sequence primitives on the
//   runtime kernels, for any element type where the operation only moves data, and identity /
//   prim_default, computed once per statement from the static type) and falls back
//   to the interpreter's `apply_prim` run once per instance, in instance order
//   (lifted_fallback.cpp). The fallback is therefore also the semantics the natives are tested
//   against.
// * Errors are lang::eval::EvalError with the statement's span and the interpreter's message.
//   When several instances fail, the first failing instance (in order) decides the message.
// * rand: the fallback draws per instance through the interpreter's RandState, whose key is
//   (seed, call site, apply-to-each index path, draw count). The flat program does not carry
//   the index path, so every instance draws at the path of the top-level form and the count
//   distinguishes them: deterministic, and equal to the interpreter at top level and in serial
//   code, but not inside an apply-to-each.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "exec/host/vec.h"
#include "runtime/cpu/ops.h"
#include "runtime/cpu/status.h"
#include "lang/core.h"
#include "lang/eval/prim_call.h"

namespace ndp::exec::host {

/// The state primitives may read or change (the executor's types, streams, rand, output).
struct PrimContext {
  lang::TypeContext* types = nullptr;
  lang::eval::PrimEnv* env = nullptr;
};

/// One lifted application: the primitive, its statement's span, its closed type arguments and
/// its closed result element type.
// Note [Updates in place]
// `rep(s, x, i)` in a loop (a counting loop's `rep(counts, counts[d] + 1, d)`) would copy its
// whole sequence operand at every step, where the step itself changes one element per instance.
// When the executor hands the operand over (its last read: Note [Releasing dead vectors] in
// flatten/passes/mark_releases.h) and no other vector shares its element buffer, the primitive
// writes the new elements into that buffer and returns it: O(instances), not O(elements). Shared
// buffers (use counts above one), uniform buffers and operands still held by a variable are
// copied as before, so no other value can see the change.
struct LiftedCall {
  lang::core::PrimId id = lang::core::PrimId::Count_;
  lang::Span span;
  const std::vector<const lang::Type*>* type_args = nullptr;
  const lang::Type* result = nullptr;
  /// The executor handed the first operand over: no variable holds it any more, so a primitive
  /// may write into its buffers where nothing else shares them (Note [Updates in place]).
  bool owns_first = false;

  [[noreturn]] void fail(std::string message) const { throw lang::eval::EvalError{std::move(message), span}; }
};

/// Native where there is a native version for these element types, else the fallback.
Vec apply_lifted_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args);
/// The native version only; nullopt where there is none for these element types.
std::optional<Vec> apply_native_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args);
/// The interpreter's primitive, once per instance in instance order.
/// `before_instance(i)`, when given, runs before instance i is applied (rand sets the instance's
/// path hash there).
Vec apply_fallback_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args,
                        const std::function<void(int64_t)>& before_instance = {});

/// The runtime operator of a scan, reduction or combine primitive (sum: plus, ...): the one
/// place where lang's PrimOperator becomes runtime::Op (which shares ndp_op's values).
std::optional<runtime::Op> scan_op(lang::core::PrimId id);

/// Throws an internal error when a runtime call the executor set up correctly fails.
void check_rt(const runtime::Status& st, const char* what);

// The groups apply_native_prim dispatches to: native_scalar_prim takes the Elementwise family
// (lang/core.h), native_seq_prim the rest.
std::optional<Vec> native_scalar_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args);
std::optional<Vec> native_seq_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args);

}  // namespace ndp::exec::host
