// One call for an if whose branches all end in calls of one function (see merge_tail_calls.h).
#include "flatten/merge_tail_calls.h"

#include "flatten/core_rewrite.h"

namespace ndp::flatten {

using lang::core::Expr;
using lang::core::Kind;

namespace {

bool same_callee(const Expr* a, const Expr* b) { return a->id == b->id && a->type_args == b->type_args; }

/// Whether values of type t are made of scalars alone (no sequence, no type variable that
/// could be one).
bool scalars_only(const lang::Type* t) {
  switch (t->kind) {
    case lang::TypeKind::Seq:
    case lang::TypeKind::Var: return false;
    case lang::TypeKind::Pair: return scalars_only(t->a) && scalars_only(t->b);
    case lang::TypeKind::Data:
      for (const lang::Type* a : t->args)
        if (!scalars_only(a)) return false;
      return t->data->fields == nullptr || scalars_only(t->data->fields);
    default: return true;
  }
}

/// Whether every tail position of `e` is a direct call of one function; `callee` is set from the
/// first one found.
bool all_tail_calls(const Expr* e, const Expr*& callee) {
  switch (e->kind) {
    case Kind::Call:
      if (e->args[0]->kind != Kind::FnRef || !scalars_only(e->args[1]->type)) return false;
      if (!callee) callee = e->args[0];
      return same_callee(callee, e->args[0]);
    case Kind::Let: return all_tail_calls(e->args[1], callee);
    case Kind::If: return all_tail_calls(e->args[1], callee) && all_tail_calls(e->args[2], callee);
    default: return false;
  }
}

class Merger {
 public:
  explicit Merger(lang::core::Program& prog) : prog_(prog) {}

  const Expr* rewrite(const Expr* e) {
    const Expr* callee = nullptr;
    if (e->kind == Kind::If && all_tail_calls(e, callee)) {
      Expr* call = prog_.new_expr(Kind::Call, e->type, e->span);
      const Expr* arg = arguments(e);
      call->args = {callee, arg};
      return call;
    }
    return with_args(prog_, e, [&](const Expr* a) { return rewrite(a); });
  }

 private:
  /// `e` with each tail call replaced by its argument (rewritten in turn).
  const Expr* arguments(const Expr* e) {
    if (e->kind == Kind::Call) return rewrite(e->args[1]);
    Expr* copy = prog_.new_expr(e->kind, nullptr, e->span);
    *copy = *e;
    if (e->kind == Kind::Let) {
      copy->args = {rewrite(e->args[0]), arguments(e->args[1])};
    } else {  // If
      copy->args = {rewrite(e->args[0]), arguments(e->args[1]), arguments(e->args[2])};
    }
    copy->type = copy->args.back()->type;  // the argument's type (both branches have it)
    return copy;
  }

  lang::core::Program& prog_;
};

}  // namespace

const Expr* merge_tail_calls(lang::core::Program& prog, const Expr* e) { return Merger(prog).rewrite(e); }

}  // namespace ndp::flatten
