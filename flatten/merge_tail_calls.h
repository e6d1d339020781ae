// Core rewrite before flattening: an if whose every branch ends in a call of one function.
#pragma once

#include "lang/core.h"

namespace ndp::flatten {

/// Returns `e` with every `if` whose tail positions are all calls of one function `f` (the same
/// function at the same type arguments; through lets and nested ifs) on arguments made of
/// scalars alone, rewritten to one call of f on the argument the branches compute: `if c then (let x = a in f(x + 1)) else f(b)` becomes
/// `f(if c then (let x = a in x + 1) else b)`. Unchanged nodes are shared with `e`; new ones
/// live in `prog`. Why: the two calls would be two lifted calls on the two halves of the
/// instances, and a loop written with a call in each branch (a tree walk that skips or
/// descends) would split its instances at every step and could not become a recursion loop,
/// which takes a single self-call (Note [Recursion as loops] in flatten/flat_ir.h). The
/// condition, the lets and the argument are evaluated in the same order as before, and the call
/// runs last in both, so results, effects and errors are unchanged. Arguments that carry
/// sequences are left alone: a sequence that every instance receives (a tree each body walks)
/// is copied per instance, and one loop over all instances would hold all the copies at once
/// (Barnes-Hut's walk: the tree times the bodies, gigabytes), where the split calls hold a few.
const lang::core::Expr* merge_tail_calls(lang::core::Program& prog, const lang::core::Expr* e);

}  // namespace ndp::flatten
