// Free-slot analysis of Core IR (used to move exactly the live variables into a new context).
#include "flatten/free_slots.h"

namespace ndp::flatten {

using lang::core::Expr;
using lang::core::Kind;
using lang::core::Pattern;
using lang::core::PatternKind;

void pattern_slots(const Pattern* p, std::set<uint32_t>& out) {
  if (!p) return;
  switch (p->kind) {
    case PatternKind::Var: out.insert(p->slot); return;
    case PatternKind::Tuple: pattern_slots(p->left, out); pattern_slots(p->right, out); return;
    case PatternKind::Con: pattern_slots(p->left, out); return;
  }
}

namespace {

void collect(const Expr* e, std::set<uint32_t>& out) {
  switch (e->kind) {
    case Kind::Local: out.insert(e->slot); return;
    case Kind::Lambda: out.insert(e->captures.begin(), e->captures.end()); return;
    case Kind::Let: {
      collect(e->args[0], out);
      std::set<uint32_t> body;
      collect(e->args[1], body);
      std::set<uint32_t> bound;
      pattern_slots(e->pattern, bound);
      for (uint32_t s : body)
        if (!bound.count(s)) out.insert(s);
      return;
    }
    case Kind::Map: {
      size_t g = e->gens.size();
      for (size_t i = 0; i < g; ++i) collect(e->args[i], out);
      std::set<uint32_t> inner, bound;
      for (size_t i = g; i < e->args.size(); ++i) collect(e->args[i], inner);
      for (const Pattern* p : e->gens) pattern_slots(p, bound);
      for (uint32_t s : inner)
        if (!bound.count(s)) out.insert(s);
      return;
    }
    default:
      for (const Expr* a : e->args) collect(a, out);
      return;
  }
}

}  // namespace

std::set<uint32_t> free_slots(const Expr* e) {
  std::set<uint32_t> out;
  collect(e, out);
  return out;
}

}  // namespace ndp::flatten
