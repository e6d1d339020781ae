// Sequence-typed productions: apply-to-each and the library functions that build sequences.
#include "tests/difftest/generator.h"

#include "tests/difftest/gen_nodes.h"

namespace ndp::difftest {

using namespace gen_nodes;

TypeP Generator::related_type(const TypeP& t) {
  int r = uniform(0, 9);
  if (r < 3 && seq_depth(t) < 3) return t;
  if (r < 5 && t->kind == Type::Kind::Seq) return t->a;
  if (r < 6 && seq_depth(t) < 2) return t_seq(t);
  if (r < 7) return t_int();
  return random_type(2);
}

ExprP Generator::gen_each(const TypeP& elem, int d) {
  TypeP u = related_type(elem);
  TypeP su = t_seq(u);
  ExprP s = gen(su, d - 1);
  std::vector<ExprP> seqs;
  std::vector<Pattern> pats;
  std::vector<Binding> bound;
  std::string shared;  // the let-bound first sequence when there are two generators
  if (chance(0.3)) {
    shared = fresh("v");
    ExprP v = var(su, shared);
    TypeP u2 = u;
    ExprP s2;
    int r = uniform(0, 19);
    if (r < 4) {
      s2 = v;
    } else if (r < 8) {
      s2 = call(su, "reverse", {v});
    } else if (r < 10) {
      s2 = call(su, "rotate", {v, gen(t_int(), 1)});
    } else if (r < 12 && is_number(u)) {
      s2 = call(su, "plus_scan", {v});
    } else if (r == 19) {
      // Independent sequence: a length mismatch here is an error on purpose.
      u2 = random_type(1);
      s2 = gen(t_seq(u2), d - 1);
    } else {
      u2 = random_type(1);
      std::string z = fresh("v");
      size_t mark = scope_.size();
      scope_.push_back({z, u});
      ExprP body = gen(u2, d - 2);
      scope_.resize(mark);
      s2 = each(u2, body, {pat_var(z)}, {v}, nullptr);
    }
    seqs = {v, s2};
    pats.push_back(pattern_for(u, bound));
    pats.push_back(pattern_for(u2, bound));
  } else {
    seqs = {s};
    pats.push_back(pattern_for(u, bound));
  }
  size_t mark = scope_.size();
  scope_.insert(scope_.end(), bound.begin(), bound.end());
  ExprP filter = chance(0.3) ? gen(t_bool(), d - 1) : nullptr;
  ExprP body = gen(elem, d - 1);
  scope_.resize(mark);
  ExprP e = each(elem, body, std::move(pats), std::move(seqs), filter);
  if (!shared.empty()) return let_var(shared, s, e);
  return e;
}

void Generator::add_seq(std::vector<Choice>& cs, const TypeP& t, int d) {
  const TypeP e = t->a;
  const int depth = seq_depth(t);
  cs.push_back({2.5, [=, this] {
                  std::vector<ExprP> elems;
                  int n = uniform(1, 4);
                  for (int i = 0; i < n; ++i) elems.push_back(gen(e, d - 1));
                  return seqlit(std::move(elems));
                }});
  cs.push_back({5, [=, this] { return gen_each(e, d); }});
  cs.push_back({0.7, [=, this] { return call(t, "reverse", {gen(t, d - 1)}); }});
  cs.push_back({0.5, [=, this] {
                  ExprP s = gen(t, d - 1);
                  return call(t, "rotate", {s, gen(t_int(), d - 1)});
                }});
  cs.push_back({1.2, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return bin(t, "++", a, gen(t, d - 1));
                }});
  if (depth < 3) cs.push_back({1, [=, this] { return call(t, "flatten", {gen(t_seq(t), d - 1)}); }});
  cs.push_back({0.8, [=, this] {
                  // take/drop with a count folded into 0..#v (negative counts from the end).
                  ExprP s = gen(t, d - 1);
                  std::string v = fresh("v");
                  ExprP k = call(t_int(), "mod", {gen(t_int(), d - 1), bin(t_int(), "+", length(var(t, v)), ilit(1))});
                  if (chance(0.3)) k = pre(t_int(), "-", k);
                  return let_var(v, s, call(t, chance(0.5) ? "take" : "drop", {var(t, v), k}));
                }});
  cs.push_back({0.05, [=, this] {
                  ExprP s = gen(t, d - 1);
                  return call(t, chance(0.5) ? "take" : "drop", {s, ilit(uniform(1, 4))});
                }});
  cs.push_back({0.8, [=, this] {
                  ExprP x = gen(e, d - 1);
                  return call(t, "dist", {x, bounded_count(d, 5)});
                }});
  if (depth < 3) {
    cs.push_back({0.6, [=, this] {
                    // Gather with every index folded into range.
                    ExprP s = gen(t, d - 1);
                    ExprP x = gen(e, d - 2);
                    ExprP idx = gen(t_seq(t_int()), d - 1);
                    std::string v = fresh("v"), j = fresh("v");
                    ExprP folded = each(t_int(), call(t_int(), "mod", {var(t_int(), j), length(var(t, v))}), {pat_var(j)},
                                        {idx}, nullptr);
                    return let_var(v, bin(t, "++", s, seqlit({x})), bin(t, "->", var(t, v), folded));
                  }});
    cs.push_back({0.6, [=, this] {
                    // Scatter (`<-` or put) with folded indices; collisions exercise "last wins".
                    ExprP s = gen(t, d - 1);
                    ExprP x = gen(e, d - 2);
                    ExprP ys = gen(t, d - 1);
                    std::string v = fresh("v"), w = fresh("v"), k = fresh("v"), y = fresh("v");
                    ExprP pos = call(t_int(), "mod",
                                     {bin(t_int(), "+", bin(t_int(), "*", var(t_int(), k), ilit(uniform(1, 3))), ilit(uniform(0, 4))),
                                      length(var(t, v))});
                    ExprP ks = call(t_seq(t_int()), "index", {length(var(t, w))});
                    ExprP body;
                    if (chance(0.6)) {
                      ExprP pairs = each(t_pair(t_int(), e), tup(pos, var(e, y)), {pat_var(k), pat_var(y)}, {ks, var(t, w)}, nullptr);
                      body = bin(t, "<-", var(t, v), pairs);
                    } else {
                      ExprP idx = each(t_int(), pos, {pat_var(k)}, {ks}, nullptr);
                      body = call(t, "put", {var(t, w), idx, var(t, v)});
                    }
                    return let_var(v, bin(t, "++", s, seqlit({x})), let_var(w, ys, body));
                  }});
  }
  cs.push_back({0.5, [=, this] {
                  // permute by the rank of a key computed per element: always a permutation.
                  ExprP s = gen(t, d - 1);
                  std::string v = fresh("v"), z = fresh("v");
                  TypeP kt = chance(0.7) ? t_int() : t_float();
                  size_t mark = scope_.size();
                  scope_.push_back({z, e});
                  ExprP key = gen(kt, d - 2);
                  scope_.resize(mark);
                  ExprP keys = each(kt, key, {pat_var(z)}, {var(t, v)}, nullptr);
                  return let_var(v, s, call(t, "permute", {var(t, v), call(t_seq(t_int()), "rank", {keys})}));
                }});
  if (e->kind == Type::Kind::Int || e->kind == Type::Kind::Float)
    cs.push_back({0.6, [=, this] { return call(t, "sort", {gen(t, d - 1)}); }});
  if (is_number(e) || is_ordinal(e) || is_logical(e))
    cs.push_back({0.8, [=, this] {
                    std::vector<const char*> scans;
                    if (is_number(e)) scans.insert(scans.end(), {"plus_scan", "plus_scan", "mult_scan"});
                    if (is_ordinal(e)) scans.insert(scans.end(), {"max_scan", "min_scan"});
                    if (is_logical(e)) scans.insert(scans.end(), {"or_scan", "and_scan", "xor_scan"});
                    return call(t, scans[uniform(0, static_cast<int>(scans.size()) - 1)], {gen(t, d - 1)});
                  }});
  cs.push_back({0.4, [=, this] { return call(t, "remove_duplicates", {gen(t, d - 1)}); }});
  cs.push_back({0.4, [=, this] { return call(t, chance(0.5) ? "odd_elts" : "even_elts", {gen(t, d - 1)}); }});
  cs.push_back({0.2, [=, this] {
                  std::string v = fresh("v");
                  return let_var(v, gen(t, d - 1), call(t, "interleave", {var(t, v), var(t, v)}));
                }});
  cs.push_back({0.5, [=, this] {
                  ExprP x = gen(e, d - 1);
                  ExprP s = gen(t, d - 1);
                  return chance(0.5) ? call(t, "cons", {x, s}) : call(t, "snoc", {s, x});
                }});
  if (depth < 3)
    cs.push_back({0.4, [=, this] {
                    TypeP other = random_type(1, 0);
                    ExprP ps = gen(t_seq(t_pair(e, other)), d - 1);
                    std::string a = fresh("v"), b = fresh("v");
                    return let_(pat_tuple(pat_var(a), pat_var(b)), call(t_pair(t, t_seq(other)), "unzip", {ps}), var(t, a));
                  }});
  cs.push_back({0.4, [=, this] {
                  ExprP s = gen(t, d - 1);
                  std::string v = fresh("v"), z = fresh("v");
                  size_t mark = scope_.size();
                  scope_.push_back({z, e});
                  ExprP flag = gen(t_bool(), d - 2);
                  scope_.resize(mark);
                  ExprP pairs = each(t_pair(e, t_bool()), tup(var(e, z), flag), {pat_var(z)}, {var(t, v)}, nullptr);
                  return let_var(v, s, call(t, "pack", {pairs}));
                }});
  if (e->kind == Type::Kind::Seq) {
    const TypeP& inner = e;  // t = [[u]]: the nesting functions
    cs.push_back({0.6, [=, this] {
                    ExprP s = gen(inner, d - 1);
                    std::string v = fresh("v"), k = fresh("v");
                    if (chance(0.3)) {
                      std::string x = fresh("v");
                      ExprP ones = each(t_int(), ilit(1), {pat_var(x)}, {var(inner, v)}, nullptr);
                      return let_var(v, s, call(t, "partition", {var(inner, v), ones}));
                    }
                    ExprP kk = call(t_int(), "mod", {gen(t_int(), d - 1), bin(t_int(), "+", length(var(inner, v)), ilit(1))});
                    ExprP lens = seqlit({var(t_int(), k), bin(t_int(), "-", length(var(inner, v)), var(t_int(), k))});
                    return let_var(v, s, let_var(k, kk, call(t, "partition", {var(inner, v), lens})));
                  }});
    cs.push_back({0.4, [=, this] {
                    ExprP s = gen(inner, d - 1);
                    std::string v = fresh("v"), z = fresh("v");
                    size_t mark = scope_.size();
                    scope_.push_back({z, inner->a});
                    ExprP flag = gen(t_bool(), d - 2);
                    scope_.resize(mark);
                    ExprP flags = each(t_bool(), flag, {pat_var(z)}, {var(inner, v)}, nullptr);
                    return let_var(v, s, call(t, "split", {var(inner, v), flags}));
                  }});
    cs.push_back({0.3, [=, this] { return call(t, "bottop", {gen(inner, d - 1)}); }});
    cs.push_back({0.3, [=, this] {
                    ExprP s = gen(inner, d - 1);
                    return call(t, "group_by", {s, ilit(uniform(1, 3))});
                  }});
    cs.push_back({0.4, [=, this] {
                    // transpose of a rectangular nest: every row has the same length.
                    TypeP u = random_type(1);
                    ExprP rows = gen(t_seq(u), d - 1);
                    std::string x = fresh("v");
                    size_t mark = scope_.size();
                    scope_.push_back({x, u});
                    ExprP cell = gen(inner->a, d - 2);
                    scope_.resize(mark);
                    ExprP rect = each(inner, call(inner, "dist", {cell, ilit(uniform(0, 3))}), {pat_var(x)}, {rows}, nullptr);
                    return call(t, "transpose", {rect});
                  }});
    cs.push_back({0.04, [=, this] { return call(t, "transpose", {gen(t, d - 1)}); }});
  }
  if (e->kind == Type::Kind::Int) {
    cs.push_back({1, [=, this] {
                    int a = uniform(-3, 6);
                    if (chance(0.3)) return mk(Expr::Kind::Range, t, "", {ilit(a), ilit(a + uniform(0, 8)), ilit(uniform(1, 3))});
                    return mk(Expr::Kind::Range, t, "", {ilit(a), ilit(a + uniform(0, 6))});
                  }});
    cs.push_back({1.2, [=, this] { return call(t, "index", {bounded_count(d, 7)}); }});
    cs.push_back({0.8, [=, this] {
                    int a = uniform(-2, 4);
                    return mk(Expr::Kind::Range, t, "", {ilit(a), bin(t_int(), "+", ilit(a), bounded_count(d, 6))});
                  }});
    cs.push_back({0.05, [=, this] {
                    ExprP a = gen(t_int(), d - 1);
                    return mk(Expr::Kind::Range, t, "", {a, gen(t_int(), d - 1)});
                  }});
    cs.push_back({0.5, [=, this] {
                    TypeP kt = chance(0.7) ? t_int() : t_float();
                    return call(t, chance(0.7) ? "rank" : "rank_down", {gen(t_seq(kt), d - 1)});
                  }});
  }
  if (e->kind == Type::Kind::Char)
    cs.push_back({1, [=, this] {
                    TypeP u = random_scalar(false);
                    // `@` prints floats with 8 digits, where a reassociated sum could show.
                    if (u->kind == Type::Kind::Float) u = t_int();
                    if (chance(0.3)) u = t_seq(u);
                    return pre(t, "@", gen(u, d - 1));
                  }});
  if (e->kind == Type::Kind::Pair && depth < 3)
    cs.push_back({0.8, [=, this] {
                    ExprP s = gen(t_seq(e->a), d - 1);
                    std::string v = fresh("v"), z = fresh("v");
                    size_t mark = scope_.size();
                    scope_.push_back({z, e->a});
                    ExprP second = gen(e->b, d - 2);
                    scope_.resize(mark);
                    ExprP seconds = each(e->b, second, {pat_var(z)}, {var(t_seq(e->a), v)}, nullptr);
                    return let_var(v, s, call(t, "zip", {var(t_seq(e->a), v), seconds}));
                  }});
}

}  // namespace ndp::difftest
