// One call for an if whose branches all end in calls of one function (see merge_tail_calls.h).
#include "flatten/merge_tail_calls.h"

#include "flatten/core_rewrite.h"

#include <memory>
#include <vector>

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

/// Whether every tail position of `e` is a direct call of one function; the calls are
/// appended to `calls` in order.
bool collect_tail_calls(const Expr* e, std::vector<const Expr*>& calls) {
  switch (e->kind) {
    case Kind::Call:
      if (e->args[0]->kind != Kind::FnRef) return false;
      if (!calls.empty() && !same_callee(calls[0]->args[0], e->args[0])) return false;
      calls.push_back(e);
      return true;
    case Kind::Let: return collect_tail_calls(e->args[1], calls);
    case Kind::If: return collect_tail_calls(e->args[1], calls) && collect_tail_calls(e->args[2], calls);
    default: return false;
  }
}

/// How the calls' arguments line up: a tuple in every call (both halves line up in turn), the
/// same variable in every call (invariant: passed as it is, outside the if), or a component
/// that varies (computed by the if).
struct Shape {
  enum class Kind { Tuple, Invariant, Varying } kind;
  const Expr* invariant = nullptr;  // Invariant: the variable
  std::unique_ptr<Shape> left, right;
};

std::unique_ptr<Shape> shape_of(const std::vector<const Expr*>& args) {
  auto s = std::make_unique<Shape>();
  bool tuples = true, same_local = args[0]->kind == Kind::Local;
  for (const Expr* a : args) {
    tuples = tuples && a->kind == Kind::Tuple;
    same_local = same_local && a->kind == Kind::Local && a->slot == args[0]->slot;
  }
  if (tuples) {
    std::vector<const Expr*> lefts, rights;
    for (const Expr* a : args) {
      lefts.push_back(a->args[0]);
      rights.push_back(a->args[1]);
    }
    s->kind = Shape::Kind::Tuple;
    s->left = shape_of(lefts);
    s->right = shape_of(rights);
  } else if (same_local) {
    s->kind = Shape::Kind::Invariant;
    s->invariant = args[0];
  } else {
    s->kind = Shape::Kind::Varying;
  }
  return s;
}

/// The varying components of an argument, in order (`arg` follows `s`).
void varying_parts(const Shape& s, const Expr* arg, std::vector<const Expr*>& out) {
  if (s.kind == Shape::Kind::Tuple) {
    varying_parts(*s.left, arg->args[0], out);
    varying_parts(*s.right, arg->args[1], out);
  } else if (s.kind == Shape::Kind::Varying) {
    out.push_back(arg);
  }
}

/// Whether merging keeps every sequence out of the if: a varying component made of scalars
/// alone (a sequence component must be invariant), and at least one varying component (the
/// if then computes it, keeping its condition's evaluation).
bool mergeable(const Shape& s, const Expr* arg, int& varying) {
  switch (s.kind) {
    case Shape::Kind::Tuple: return mergeable(*s.left, arg->args[0], varying) && mergeable(*s.right, arg->args[1], varying);
    case Shape::Kind::Invariant: return true;
    case Shape::Kind::Varying: ++varying; return scalars_only(arg->type);
  }
  return false;
}

class Merger {
 public:
  explicit Merger(lang::core::Program& prog) : prog_(prog) {}

  const Expr* rewrite(const Expr* e) {
    std::vector<const Expr*> calls;
    if (e->kind == Kind::If && collect_tail_calls(e, calls)) {
      std::vector<const Expr*> args;
      for (const Expr* c : calls) args.push_back(c->args[1]);
      std::unique_ptr<Shape> shape = shape_of(args);
      int varying = 0;
      if (mergeable(*shape, args[0], varying) && varying > 0) return merged(e, calls[0], *shape);
    }
    return with_args(prog_, e, [&](const Expr* a) { return rewrite(a); });
  }

 private:
  /// `let (v1, ..., vk) = IF in f(ARG)`: the if computes the varying components, and the
  /// argument rebuilds the tuple with the invariant ones in place.
  const Expr* merged(const Expr* e, const Expr* first_call, const Shape& shape) {
    std::vector<const Expr*> parts;
    varying_parts(shape, first_call->args[1], parts);
    std::vector<lang::core::Pattern*> vars;
    for (const Expr* part : parts) {
      lang::core::Pattern* v = prog_.new_pattern(lang::core::PatternKind::Var, part->type, e->span);
      v->slot = next_slot_++;
      v->name = "merged_arg";
      vars.push_back(v);
    }
    const lang::core::Pattern* pattern = vars.back();
    for (size_t i = vars.size() - 1; i-- > 0;) {
      lang::core::Pattern* t = prog_.new_pattern(lang::core::PatternKind::Tuple,
                                                  prog_.types.pair(vars[i]->type, pattern->type), e->span);
      t->left = vars[i];
      t->right = pattern;
      pattern = t;
    }
    size_t next = 0;
    Expr* let = prog_.new_expr(Kind::Let, e->type, e->span);
    let->pattern = pattern;
    Expr* call = prog_.new_expr(Kind::Call, e->type, e->span);
    call->args = {first_call->args[0], rebuild(shape, first_call->args[1], vars, next)};
    let->args = {computed(e, shape), call};
    return let;
  }

  /// The argument with each varying component read from its variable.
  const Expr* rebuild(const Shape& s, const Expr* arg, const std::vector<lang::core::Pattern*>& vars, size_t& next) {
    if (s.kind == Shape::Kind::Invariant) return s.invariant;
    if (s.kind == Shape::Kind::Varying) {
      Expr* local = prog_.new_expr(Kind::Local, arg->type, arg->span);
      local->slot = vars[next++]->slot;
      return local;
    }
    Expr* t = prog_.new_expr(Kind::Tuple, arg->type, arg->span);
    t->args = {rebuild(*s.left, arg->args[0], vars, next), rebuild(*s.right, arg->args[1], vars, next)};
    return t;
  }

  /// `e` with each tail call replaced by the tuple of its argument's varying components.
  const Expr* computed(const Expr* e, const Shape& shape) {
    if (e->kind == Kind::Call) {
      std::vector<const Expr*> parts;
      varying_parts(shape, e->args[1], parts);
      const Expr* t = rewrite(parts.back());
      for (size_t i = parts.size() - 1; i-- > 0;) {
        Expr* pair = prog_.new_expr(Kind::Tuple, prog_.types.pair(parts[i]->type, t->type), e->span);
        pair->args = {rewrite(parts[i]), t};
        t = pair;
      }
      return t;
    }
    Expr* copy = prog_.new_expr(e->kind, nullptr, e->span);
    *copy = *e;
    if (e->kind == Kind::Let) {
      copy->args = {rewrite(e->args[0]), computed(e->args[1], shape)};
    } else {  // If
      copy->args = {rewrite(e->args[0]), computed(e->args[1], shape), computed(e->args[2], shape)};
    }
    copy->type = copy->args.back()->type;
    return copy;
  }

  lang::core::Program& prog_;
  // Slots for the merged arguments' variables, above every frame's own (and below vectorise's).
  uint32_t next_slot_ = 0x60000000u;
};

}  // namespace

const Expr* merge_tail_calls(lang::core::Program& prog, const Expr* e) { return Merger(prog).rewrite(e); }

}  // namespace ndp::flatten
