// Pass: inlining of small functions that call nothing.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after recursion_to_loops. Guarantees: every `r = call f(a)` of a
/// function f whose body makes no call and no recursion loop and holds at most
/// kInlineStatements statements is replaced by a copy of f's body (fresh variables, f's
/// parameter and path read as the call's operands), and r's readers read the copy's result;
/// repeated until no such call is left, so a function whose calls were all inlined can be
/// inlined in turn. The copied statements run in the call's place, in their order, with their
/// spans, so results, effects and errors are unchanged. Why: a call is a boundary that no
/// fusion crosses, and NESL programs are made of small functions (`abs`, a cumulative normal
/// distribution inside an option price): inlined, a formula written across functions becomes
/// one fused kernel.
Program inline_calls(Program p);

/// The largest callee body (statements, nested blocks included) that inline_calls copies.
inline constexpr size_t kInlineStatements = 200;

}  // namespace ndp::flatten
