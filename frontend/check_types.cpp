// Unification with type classes, and conversion of inference types to interned types.
#include "frontend/check_types.h"

#include "lang/diagnostics.h"

namespace ndp::frontend {

using lang::Type;
using lang::TypeClass;
using lang::TypeKind;

Unifier::Unifier() {
  for (int k = 0; k <= static_cast<int>(TypeKind::Stream); ++k) bases_[k] = node(static_cast<IKind>(k));
  error_ = node(IKind::Error);
}

IType* Unifier::node(IKind k) {
  nodes_.emplace_back();
  IType* t = &nodes_.back();
  t->kind = k;
  return t;
}

IType* Unifier::fresh(TypeClass cls) {
  IType* t = node(IKind::Var);
  t->cls = cls;
  return t;
}

IType* Unifier::base(TypeKind k) {
  NDP_ASSERT(k <= TypeKind::Stream, "base() takes a scalar kind");
  return bases_[static_cast<int>(k)];
}

IType* Unifier::seq(IType* elem) {
  IType* t = node(IKind::Seq);
  t->a = elem;
  return t;
}

IType* Unifier::pair(IType* a, IType* b) {
  IType* t = node(IKind::Pair);
  t->a = a;
  t->b = b;
  return t;
}

IType* Unifier::fn(IType* arg, IType* result) {
  IType* t = node(IKind::Fn);
  t->a = arg;
  t->b = result;
  return t;
}

IType* Unifier::data(const lang::DataDef* def, std::vector<IType*> args) {
  IType* t = node(IKind::Data);
  t->data = def;
  t->args = std::move(args);
  return t;
}

IType* Unifier::find(IType* t) const {
  while (t->kind == IKind::Var && t->link) t = t->link;
  return t;
}

void Unifier::set_cls(IType* v, TypeClass c) {
  if (v->cls == c) return;
  trail_.push_back({v, v->link, v->cls});
  v->cls = c;
}

void Unifier::rollback(size_t mark) {
  while (trail_.size() > mark) {
    TrailEntry e = trail_.back();
    trail_.pop_back();
    e.var->link = e.old_link;
    e.var->cls = e.old_cls;
  }
}

bool Unifier::occurs(IType* v, IType* t) const {
  t = find(t);
  if (t == v) return true;
  switch (t->kind) {
    case IKind::Seq: return occurs(v, t->a);
    case IKind::Pair:
    case IKind::Fn: return occurs(v, t->a) || occurs(v, t->b);
    case IKind::Data:
      for (IType* a : t->args)
        if (occurs(v, a)) return true;
      return false;
    default: return false;
  }
}

static bool kind_in_class(IKind k, TypeClass c) {
  switch (c) {
    case TypeClass::Any: return true;
    case TypeClass::Number: return k == IKind::Int || k == IKind::Float || k == IKind::I32 || k == IKind::F32;
    case TypeClass::Ordinal: return kind_in_class(k, TypeClass::Number) || k == IKind::Char;
    case TypeClass::Logical: return k == IKind::Int || k == IKind::Bool || k == IKind::I32;
  }
  return false;
}

bool Unifier::constrain(IType* t, TypeClass cls) {
  t = find(t);
  if (t->kind == IKind::Error) return true;
  if (t->kind == IKind::Var) {
    TypeClass met;
    if (!lang::meet_class(t->cls, cls, &met)) return false;
    set_cls(t, met);
    return true;
  }
  return kind_in_class(t->kind, cls);
}

bool Unifier::bind(IType* v, IType* t) {
  // v is an unbound variable, t a representative different from v.
  if (t->kind == IKind::Var) {
    TypeClass met;
    if (!lang::meet_class(v->cls, t->cls, &met)) return false;
    set_cls(t, met);
  } else {
    if (occurs(v, t)) return false;
    if (!kind_in_class(t->kind, v->cls)) return false;
  }
  trail_.push_back({v, v->link, v->cls});
  v->link = t;
  return true;
}

bool Unifier::unify(IType* a, IType* b) {
  a = find(a);
  b = find(b);
  if (a == b) return true;
  if (a->kind == IKind::Error || b->kind == IKind::Error) return true;
  if (a->kind == IKind::Var) return bind(a, b);
  if (b->kind == IKind::Var) return bind(b, a);
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case IKind::Seq: return unify(a->a, b->a);
    case IKind::Pair:
    case IKind::Fn: return unify(a->a, b->a) && unify(a->b, b->b);
    case IKind::Data:
      if (a->data != b->data || a->args.size() != b->args.size()) return false;
      for (size_t i = 0; i < a->args.size(); ++i)
        if (!unify(a->args[i], b->args[i])) return false;
      return true;
    default: return true;  // equal scalar kinds
  }
}

std::vector<IType*> Unifier::fresh_vars(const std::vector<TypeClass>& classes) {
  std::vector<IType*> out;
  out.reserve(classes.size());
  for (TypeClass c : classes) out.push_back(fresh(c));
  return out;
}

IType* Unifier::from_type(const Type* t, const std::vector<IType*>& vars) {
  switch (t->kind) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Char:
    case TypeKind::I32:
    case TypeKind::F32:
    case TypeKind::Stream: return base(t->kind);
    case TypeKind::Var:
      NDP_ASSERT(t->index < vars.size(), "scheme variable without an instance");
      return vars[t->index];
    case TypeKind::Seq: return seq(from_type(t->a, vars));
    case TypeKind::Pair: return pair(from_type(t->a, vars), from_type(t->b, vars));
    case TypeKind::Fn: return fn(from_type(t->a, vars), from_type(t->b, vars));
    case TypeKind::Data: {
      std::vector<IType*> args;
      for (const Type* a : t->args) args.push_back(from_type(a, vars));
      return data(t->data, std::move(args));
    }
  }
  lang::ndp_unreachable("type kind");
}

// ---- TypeOut ----

void TypeOut::number_var(IType* v) {
  if (index_.count(v)) return;
  index_.emplace(v, static_cast<uint32_t>(vars_.size()));
  vars_.push_back(v);
}

void TypeOut::number(IType* t) {
  t = u_.find(t);
  switch (t->kind) {
    case IKind::Var: number_var(t); return;
    case IKind::Seq: number(t->a); return;
    case IKind::Pair:
    case IKind::Fn:
      number(t->a);
      number(t->b);
      return;
    case IKind::Data:
      for (IType* a : t->args) number(a);
      return;
    default: return;
  }
}

std::vector<TypeClass> TypeOut::classes() const {
  std::vector<TypeClass> out;
  for (IType* v : vars_) out.push_back(u_.find(v)->cls);
  return out;
}

const Type* TypeOut::get(IType* t) {
  t = u_.find(t);
  switch (t->kind) {
    case IKind::Int: return tc_.int_();
    case IKind::Float: return tc_.float_();
    case IKind::Bool: return tc_.bool_();
    case IKind::Char: return tc_.char_();
    case IKind::I32: return tc_.i32();
    case IKind::F32: return tc_.f32();
    case IKind::Stream: return tc_.stream();
    case IKind::Error: return tc_.int_();
    case IKind::Var: {
      auto it = index_.find(t);
      if (it == index_.end()) {
        if (default_) {
          u_.unify(t, u_.base(TypeKind::Int));
          return tc_.int_();
        }
        number_var(t);
        it = index_.find(t);
      }
      return tc_.var(it->second, t->cls);
    }
    case IKind::Seq: return tc_.seq(get(t->a));
    case IKind::Pair: {
      const Type* a = get(t->a);
      return tc_.pair(a, get(t->b));
    }
    case IKind::Fn: {
      const Type* a = get(t->a);
      return tc_.fn(a, get(t->b));
    }
    case IKind::Data: {
      std::vector<const Type*> args;
      for (IType* a : t->args) args.push_back(get(a));
      return tc_.data(t->data, std::move(args));
    }
  }
  lang::ndp_unreachable("itype kind");
}

std::string itype_to_string(Unifier& u, lang::TypeContext& tc, IType* t) {
  TypeOut out(u, tc, false);
  out.number(t);
  const Type* ty = out.get(t);
  return lang::type_to_string(ty, out.classes());
}

// ---- Schemes ----

static void collect_vars(const Type* t, std::vector<uint32_t>& order, std::vector<TypeClass>& cls) {
  switch (t->kind) {
    case TypeKind::Var:
      for (uint32_t i : order)
        if (i == t->index) return;
      order.push_back(t->index);
      cls.push_back(t->cls);
      return;
    case TypeKind::Seq: collect_vars(t->a, order, cls); return;
    case TypeKind::Pair:
    case TypeKind::Fn:
      collect_vars(t->a, order, cls);
      collect_vars(t->b, order, cls);
      return;
    case TypeKind::Data:
      for (const Type* a : t->args) collect_vars(a, order, cls);
      return;
    default: return;
  }
}

lang::TypeScheme canonical_scheme(lang::TypeContext& tc, const lang::TypeScheme& s) {
  std::vector<uint32_t> order;
  std::vector<TypeClass> cls;
  collect_vars(s.type, order, cls);
  uint32_t n = 0;
  for (uint32_t i : order) n = std::max(n, i + 1);
  std::vector<const Type*> sub(n, nullptr);
  for (uint32_t k = 0; k < order.size(); ++k) sub[order[k]] = tc.var(k, cls[k]);
  // Substitution maps old indices to new ones; Var nodes carry their class, so classes of
  // the result are read from `cls` (the scheme's own vector may list unused variables).
  return lang::TypeScheme{cls, tc.subst(s.type, sub)};
}

bool same_scheme(lang::TypeContext& tc, const lang::TypeScheme& a, const lang::TypeScheme& b) {
  if (!a.type || !b.type) return false;
  lang::TypeScheme ca = canonical_scheme(tc, a);
  lang::TypeScheme cb = canonical_scheme(tc, b);
  return ca.type == cb.type && ca.vars == cb.vars;
}

}  // namespace ndp::frontend
