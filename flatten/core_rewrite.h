// What the Core rewrites before flattening share (inline_lambdas, merge_tail_calls).
#pragma once

#include <utility>
#include <vector>

#include "lang/core.h"

namespace ndp::flatten {

/// `e` with each argument `a` replaced by `f(a)`: `e` itself when no argument changes (Core
/// nodes are shared, never mutated), else a copy allocated in `prog`.
template <class Fn>
const lang::core::Expr* with_args(lang::core::Program& prog, const lang::core::Expr* e, Fn&& f) {
  std::vector<const lang::core::Expr*> args;
  bool changed = false;
  for (const lang::core::Expr* a : e->args) {
    args.push_back(f(a));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  lang::core::Expr* copy = prog.new_expr(e->kind, e->type, e->span);
  *copy = *e;
  copy->args = std::move(args);
  return copy;
}

}  // namespace ndp::flatten
