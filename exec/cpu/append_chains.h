// Running an AppendChain statement (Note [Append chains] in flatten/flat_ir.h) on host vectors.
#pragma once

#include <functional>

#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

/// The value of the chain `s`: `operand(v)` is the value of variable v; `result` the type of
/// s.dst. Throws the first failing elt's error.
Vec run_append_chain(const flatten::Stmt& s, const std::function<const Vec&(flatten::VarId)>& operand,
                     const lang::Type* result);

}  // namespace ndp::exec::cpu
