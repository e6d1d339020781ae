// Core rewrite before flattening: calls of lambdas written in the same function, substituted.
#pragma once

#include "lang/core.h"

namespace ndp::flatten {

/// Returns `e` with every call of a lambda written in the same frame replaced by its body:
/// `(p => b)(a)` becomes `let p = a in b`, and in `let h = p => b in e'` where every use of h
/// in e' is a call, each `h(a)` becomes `let p = a in b` and the binding goes. Nodes that do
/// not change are shared with `e`; new ones live in `prog`. Why: the flattener then sees the
/// variables the body captures where they are read, so it carries them into nested
/// apply-to-each contexts like any other variable (Note [Lambdas on the flat backends] in
/// flatten/vectorise.cpp). Results, effects and errors are unchanged: evaluating a lambda has
/// no effect, and a call evaluates its argument before the body, as a let does.
const lang::core::Expr* inline_lambdas(lang::core::Program& prog, const lang::core::Expr* e);

}  // namespace ndp::flatten
