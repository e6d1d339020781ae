// Builders for typed expression nodes, shared by the generator's source files.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/difftest/program.h"

namespace ndp::difftest::gen_nodes {


inline ExprP mk(Expr::Kind k, TypeP t, std::string text, std::vector<ExprP> kids) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->type = std::move(t);
  e->text = std::move(text);
  e->kids = std::move(kids);
  return e;
}

inline ExprP lit(TypeP t, std::string s) { return mk(Expr::Kind::Lit, std::move(t), std::move(s), {}); }
inline ExprP ilit(int64_t v) { return lit(t_int(), std::to_string(v)); }
inline ExprP var(TypeP t, std::string n) { return mk(Expr::Kind::Var, std::move(t), std::move(n), {}); }
inline ExprP call(TypeP t, std::string f, std::vector<ExprP> args) {
  return mk(Expr::Kind::Call, std::move(t), std::move(f), std::move(args));
}
inline ExprP bin(TypeP t, std::string op, ExprP a, ExprP b) {
  return mk(Expr::Kind::Binop, std::move(t), std::move(op), {std::move(a), std::move(b)});
}
inline ExprP pre(TypeP t, std::string op, ExprP a) { return mk(Expr::Kind::Prefix, std::move(t), std::move(op), {std::move(a)}); }
inline ExprP length(ExprP s) { return pre(t_int(), "#", std::move(s)); }
inline ExprP index(ExprP s, ExprP i) {
  TypeP t = s->type->a;
  return mk(Expr::Kind::Index, t, "", {std::move(s), std::move(i)});
}
inline ExprP ite(ExprP c, ExprP a, ExprP b) {
  TypeP t = a->type;
  return mk(Expr::Kind::If, t, "", {std::move(c), std::move(a), std::move(b)});
}
inline ExprP let_(Pattern p, ExprP bound, ExprP body) {
  TypeP t = body->type;
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Let;
  e->type = t;
  e->pats = {std::move(p)};
  e->kids = {std::move(bound), std::move(body)};
  return e;
}
inline ExprP let_var(const std::string& name, ExprP bound, ExprP body) { return let_(pat_var(name), std::move(bound), std::move(body)); }
inline ExprP tup(ExprP a, ExprP b) {
  TypeP t = t_pair(a->type, b->type);
  return mk(Expr::Kind::Tuple, t, "", {std::move(a), std::move(b)});
}
inline ExprP seqlit(std::vector<ExprP> elems) {
  TypeP t = t_seq(elems.front()->type);
  return mk(Expr::Kind::SeqLit, t, "", std::move(elems));
}
inline ExprP empty(TypeP elem) { return mk(Expr::Kind::Empty, t_seq(std::move(elem)), "", {}); }
inline ExprP each(TypeP elem, ExprP body, std::vector<Pattern> pats, std::vector<ExprP> seqs, ExprP filter) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Each;
  e->type = t_seq(std::move(elem));
  e->pats = std::move(pats);
  e->kids.push_back(std::move(body));
  for (ExprP& s : seqs) e->kids.push_back(std::move(s));
  if (filter) {
    e->kids.push_back(std::move(filter));
    e->has_filter = true;
  }
  return e;
}
inline ExprP frozen(ExprP e) {
  auto c = std::make_shared<Expr>(*e);
  c->frozen = true;
  return c;
}


}  // namespace ndp::difftest::gen_nodes
