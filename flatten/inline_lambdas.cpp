// Substitution of lambdas into their calls (see inline_lambdas.h).
#include "flatten/inline_lambdas.h"

#include <map>

#include "flatten/core_rewrite.h"

namespace ndp::flatten {

using lang::core::Expr;
using lang::core::Kind;

namespace {

/// Whether every read of `slot` in `e` is the callee of a call.
bool only_called(uint32_t slot, const Expr* e) {
  if (e->kind == Kind::Local) return e->slot != slot;
  if (e->kind == Kind::Call && e->args[0]->kind == Kind::Local && e->args[0]->slot == slot)
    return only_called(slot, e->args[1]);
  if (e->kind == Kind::Lambda) {  // inside another lambda, a read is a capture
    for (uint32_t s : e->captures)
      if (s == slot) return false;
    return true;
  }
  for (const Expr* a : e->args)
    if (!only_called(slot, a)) return false;
  return true;
}

class Inliner {
 public:
  explicit Inliner(lang::core::Program& prog) : prog_(prog) {}

  const Expr* rewrite(const Expr* e) {
    if (e->kind == Kind::Let && e->pattern->kind == lang::core::PatternKind::Var && e->args[0]->kind == Kind::Lambda &&
        only_called(e->pattern->slot, e->args[1])) {
      bound_[e->pattern->slot] = rewrite(e->args[0]);
      return rewrite(e->args[1]);
    }
    if (e->kind == Kind::Call) {
      const Expr* lambda = nullptr;
      if (e->args[0]->kind == Kind::Lambda) lambda = rewrite(e->args[0]);
      if (e->args[0]->kind == Kind::Local)
        if (auto it = bound_.find(e->args[0]->slot); it != bound_.end()) lambda = it->second;
      if (lambda) {
        Expr* let = prog_.new_expr(Kind::Let, e->type, e->span);
        let->pattern = lambda->pattern;
        let->args = {rewrite(e->args[1]), lambda->args[0]};
        return let;
      }
    }
    return with_args(prog_, e, [&](const Expr* a) { return rewrite(a); });
  }

 private:
  lang::core::Program& prog_;
  std::map<uint32_t, const Expr*> bound_;  // let-bound lambdas whose every use is a call
};

}  // namespace

const Expr* inline_lambdas(lang::core::Program& prog, const Expr* e) { return Inliner(prog).rewrite(e); }

}  // namespace ndp::flatten
