// Core rewrite before flattening: an if whose every branch ends in a call of one function.
#pragma once

#include "lang/core.h"

namespace ndp::flatten {

/// Returns `e` with every `if` whose tail positions are all calls of one function `f` (the same
/// function at the same type arguments; through lets and nested ifs) rewritten to one call of
/// f: the if computes the components of the argument that differ between the calls, and the
/// components every call passes as the same variable stay outside it. `if c then (let x = a in
/// f(x + 1, t)) else f(b, t)` becomes `let v = (if c then (let x = a in x + 1) else b) in
/// f(v, t)`. Unchanged nodes are shared with `e`; new ones live in `prog`.
///
/// Why: the two calls would be two lifted calls on the two halves of the instances, and a loop
/// written with a call in each branch (a binary search, a tree walk that skips or descends)
/// would split its instances at every step and could not become a recursion loop, which takes
/// a single self-call (Note [Recursion as loops] in flatten/flat_ir.h). The condition, the lets
/// and the varying components are evaluated in the same order as before, and the call runs
/// last in both, so results, effects and errors are unchanged.
///
/// Left alone: an if where a varying component carries a sequence (each instance's copy would
/// go through the merge, and one loop would hold them all at once), or where nothing varies.
/// A sequence passed unchanged stays a variable, which the call can pass shared (Note [Shared
/// arguments]): the tree of Barnes-Hut's walk.
const lang::core::Expr* merge_tail_calls(lang::core::Program& prog, const lang::core::Expr* e);

}  // namespace ndp::flatten
