// Typed random generation: every production builds an expression of a requested type, so the
// programs type-check by construction; guards (`mod`, appended elements) keep most of them
// free of runtime errors, and a few unguarded forms fail on purpose.
#include "tests/difftest/generator.h"

#include <fmt/format.h>

#include <cmath>

namespace ndp::difftest {

namespace {

ExprP mk(Expr::Kind k, TypeP t, std::string text, std::vector<ExprP> kids) {
  auto e = std::make_shared<Expr>();
  e->kind = k;
  e->type = std::move(t);
  e->text = std::move(text);
  e->kids = std::move(kids);
  return e;
}

ExprP lit(TypeP t, std::string s) { return mk(Expr::Kind::Lit, std::move(t), std::move(s), {}); }
ExprP ilit(int64_t v) { return lit(t_int(), std::to_string(v)); }
ExprP var(TypeP t, std::string n) { return mk(Expr::Kind::Var, std::move(t), std::move(n), {}); }
ExprP call(TypeP t, std::string f, std::vector<ExprP> args) {
  return mk(Expr::Kind::Call, std::move(t), std::move(f), std::move(args));
}
ExprP bin(TypeP t, std::string op, ExprP a, ExprP b) {
  return mk(Expr::Kind::Binop, std::move(t), std::move(op), {std::move(a), std::move(b)});
}
ExprP pre(TypeP t, std::string op, ExprP a) { return mk(Expr::Kind::Prefix, std::move(t), std::move(op), {std::move(a)}); }
ExprP length(ExprP s) { return pre(t_int(), "#", std::move(s)); }
ExprP index(ExprP s, ExprP i) {
  TypeP t = s->type->a;
  return mk(Expr::Kind::Index, t, "", {std::move(s), std::move(i)});
}
ExprP ite(ExprP c, ExprP a, ExprP b) {
  TypeP t = a->type;
  return mk(Expr::Kind::If, t, "", {std::move(c), std::move(a), std::move(b)});
}
ExprP let_(Pattern p, ExprP bound, ExprP body) {
  TypeP t = body->type;
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::Let;
  e->type = t;
  e->pats = {std::move(p)};
  e->kids = {std::move(bound), std::move(body)};
  return e;
}
ExprP let_var(const std::string& name, ExprP bound, ExprP body) { return let_(pat_var(name), std::move(bound), std::move(body)); }
ExprP tup(ExprP a, ExprP b) {
  TypeP t = t_pair(a->type, b->type);
  return mk(Expr::Kind::Tuple, t, "", {std::move(a), std::move(b)});
}
ExprP seqlit(std::vector<ExprP> elems) {
  TypeP t = t_seq(elems.front()->type);
  return mk(Expr::Kind::SeqLit, t, "", std::move(elems));
}
ExprP empty(TypeP elem) { return mk(Expr::Kind::Empty, t_seq(std::move(elem)), "", {}); }
ExprP each(TypeP elem, ExprP body, std::vector<Pattern> pats, std::vector<ExprP> seqs, ExprP filter) {
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
ExprP frozen(ExprP e) {
  auto c = std::make_shared<Expr>(*e);
  c->frozen = true;
  return c;
}

std::string float_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

bool has_int_like(const TypeP& t) {
  switch (t->kind) {
    case Type::Kind::Int:
    case Type::Kind::I32: return true;
    case Type::Kind::Seq: return has_int_like(t->a);
    case Type::Kind::Pair: return has_int_like(t->a) || has_int_like(t->b);
    default: return false;
  }
}

// Untyped, a parameter used both arithmetically (number) and bitwise (logical) is a type
// error even when the caller passes an int (language.md §3.6); a signature pins it down.
bool needs_signature(const FunctionDef& f) {
  if (has_int_like(f.result)) return true;
  for (const TypeP& p : f.param_types)
    if (has_int_like(p)) return true;
  return false;
}

}  // namespace

ExprP minimal_literal(const TypeP& t, const std::vector<DatatypeDef>& datatypes) {
  switch (t->kind) {
    case Type::Kind::Int: return lit(t, "0");
    case Type::Kind::Float: return lit(t, "0.0");
    case Type::Kind::Bool: return lit(t, "f");
    case Type::Kind::Char: return lit(t, "`a");
    case Type::Kind::I32: return lit(t, "0i32");
    case Type::Kind::F32: return lit(t, "0.0f32");
    case Type::Kind::Seq: return t->a->kind == Type::Kind::Char ? lit(t, "\"\"") : empty(t->a);
    case Type::Kind::Pair: return tup(minimal_literal(t->a, datatypes), minimal_literal(t->b, datatypes));
    case Type::Kind::Data: {
      std::vector<ExprP> args;
      for (const TypeP& c : tuple_components(t->fields)) args.push_back(minimal_literal(c, datatypes));
      return call(t, t->name, std::move(args));
    }
  }
  return lit(t_int(), "0");
}

Generator::Generator(uint64_t seed, GenOptions opts) : rng_(seed), opts_(opts) {}

int Generator::uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
bool Generator::chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }
std::string Generator::fresh(const char* prefix) { return prefix + std::to_string(++counter_); }

ExprP Generator::choose(std::vector<Choice>& cs, const TypeP& t) {
  for (;;) {
    double total = 0;
    for (const Choice& c : cs) total += c.weight;
    if (total <= 0) return literal(t);
    double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
    size_t i = 0;
    for (; i + 1 < cs.size(); ++i) {
      if (r < cs[i].weight) break;
      r -= cs[i].weight;
    }
    if (cs[i].weight <= 0) continue;
    if (ExprP e = cs[i].make()) return e;
    cs[i].weight = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Types

TypeP Generator::random_scalar(bool sized) {
  int r = uniform(0, sized && opts_.sized_types ? 11 : 9);
  if (r < 4) return t_int();
  if (r < 6) return t_float();
  if (r < 8) return t_bool();
  if (r < 10) return t_char();
  return r == 10 ? t_i32() : t_f32();
}

TypeP Generator::random_ordinal() {
  int r = uniform(0, opts_.sized_types ? 9 : 7);
  if (r < 4) return t_int();
  if (r < 6) return t_float();
  if (r < 8) return t_char();
  return r == 8 ? t_i32() : t_f32();
}

TypeP Generator::random_number() {
  int r = uniform(0, opts_.sized_types ? 7 : 5);
  if (r < 4) return t_int();
  if (r < 6) return t_float();
  return r == 6 ? t_i32() : t_f32();
}

TypeP Generator::random_type(int max_seq, int max_pair) {
  int r = uniform(0, 19);
  if (r < 9 || (max_seq <= 0 && r < 16)) return random_scalar(true);
  if (r < 16) return t_seq(random_type(max_seq - 1, max_pair));
  if (r < 18 && max_pair > 0) return t_pair(random_type(std::min(max_seq, 1), 0), random_type(std::min(max_seq, 1), max_pair - 1));
  if (!datatypes_.empty()) {
    const DatatypeDef& d = datatypes_[uniform(0, static_cast<int>(datatypes_.size()) - 1)];
    return t_data(d.name, d.fields);
  }
  return random_scalar(true);
}

// ---------------------------------------------------------------------------------------------
// Leaves

ExprP Generator::var_of(const TypeP& t) {
  std::vector<const Binding*> found;
  for (const Binding& b : scope_)
    if (same_type(b.type, t)) found.push_back(&b);
  if (found.empty()) return nullptr;
  // The innermost binding is the one a human would use: it makes lets and generators matter.
  const Binding* b = chance(0.5) ? found.back() : found[uniform(0, static_cast<int>(found.size()) - 1)];
  return var(b->type, b->name);
}

ExprP Generator::leaf(const TypeP& t) {
  if (ExprP v = var_of(t); v && chance(0.65)) return v;
  return literal(t);
}

ExprP Generator::literal(const TypeP& t) {
  switch (t->kind) {
    case Type::Kind::Int: {
      int r = uniform(0, 99);
      if (r < 70) return ilit(uniform(0, 9));
      if (r < 85) return ilit(-uniform(1, 9));
      if (r < 97) return ilit(uniform(10, 1000));
      static const char* big[] = {"9223372036854775807", "4611686018427387904", "3037000500", "2147483648"};
      return lit(t, big[uniform(0, 3)]);
    }
    case Type::Kind::Float: {
      if (chance(0.05)) {
        static const char* odd[] = {"0.1", "1.0e10", "1.0e-3", "3.14159", "1.0e-7"};
        return lit(t, odd[uniform(0, 4)]);
      }
      // Quarter-integers add and multiply exactly, so reassociated float reductions rarely
      // round differently and tolerance issues stay rare.
      return lit(t, float_text(uniform(-40, 40) / 4.0));
    }
    case Type::Kind::Bool: return lit(t, chance(0.5) ? "t" : "f");
    case Type::Kind::Char: {
      static const char alphabet[] = "abcdefxyzABCXYZ0123456789";
      return lit(t, std::string("`") + alphabet[uniform(0, static_cast<int>(sizeof alphabet) - 2)]);
    }
    case Type::Kind::I32: return lit(t, std::to_string(uniform(-9, 30)) + "i32");
    case Type::Kind::F32: return lit(t, float_text(uniform(-40, 40) / 4.0) + "f32");
    case Type::Kind::Seq: {
      int n = uniform(0, 4);
      if (t->a->kind == Type::Kind::Char && chance(0.6)) {
        static const char letters[] = "abcxyzAB01 ";
        std::string s = "\"";
        for (int i = 0; i < n; ++i) s += letters[uniform(0, static_cast<int>(sizeof letters) - 2)];
        return lit(t, s + "\"");
      }
      if (n == 0) return empty(t->a);
      std::vector<ExprP> elems;
      for (int i = 0; i < n; ++i) elems.push_back(leaf(t->a));
      return seqlit(std::move(elems));
    }
    case Type::Kind::Pair: return tup(leaf(t->a), leaf(t->b));
    case Type::Kind::Data: {
      std::vector<ExprP> args;
      for (const TypeP& c : tuple_components(t->fields)) args.push_back(leaf(c));
      return call(t, t->name, std::move(args));
    }
  }
  return ilit(0);
}

// ---------------------------------------------------------------------------------------------
// Helpers for guarded forms

ExprP Generator::bounded_count(int d, int limit) { return call(t_int(), "mod", {gen(t_int(), d - 1), ilit(limit)}); }

ExprP Generator::guard_divisor(const TypeP& t, int d) {
  ExprP m = bounded_count(d, 5);
  if (t->kind == Type::Kind::I32) return bin(t, "+", call(t, "i32", {m}), lit(t, "1i32"));
  return bin(t, "+", m, ilit(1));
}

ExprP Generator::clamp_seq(ExprP e) {
  std::string w = fresh("v");
  TypeP t = e->type;
  ExprP body = call(t, "take", {var(t, w), call(t_int(), "min", {length(var(t, w)), ilit(6)})});
  return let_var(w, std::move(e), body);
}

Pattern Generator::pattern_for(const TypeP& t, std::vector<Binding>& bound) {
  if (t->kind == Type::Kind::Pair && chance(0.75)) {
    Pattern a = pattern_for(t->a, bound);
    Pattern b = pattern_for(t->b, bound);
    return pat_tuple(std::move(a), std::move(b));
  }
  if (t->kind == Type::Kind::Data && chance(0.75)) {
    // A constructor pattern takes the whole field tuple apart.
    std::vector<TypeP> comps = tuple_components(t->fields);
    std::vector<Pattern> ps;
    for (const TypeP& c : comps) {
      std::string n = fresh("v");
      bound.push_back({n, c});
      ps.push_back(pat_var(n));
    }
    Pattern fields = ps.back();
    for (size_t i = ps.size() - 1; i-- > 0;) fields = pat_tuple(ps[i], fields);
    return pat_con(t->name, fields);
  }
  std::string n = fresh("v");
  bound.push_back({n, t});
  return pat_var(n);
}

ExprP Generator::gen_let(const TypeP& t, int d, const TypeP& bound_type) {
  ExprP b = gen(bound_type, d - 1);
  std::vector<Binding> bound;
  Pattern p = pattern_for(bound_type, bound);
  size_t mark = scope_.size();
  scope_.insert(scope_.end(), bound.begin(), bound.end());
  ExprP body = gen(t, d - 1);
  scope_.resize(mark);
  return let_(std::move(p), std::move(b), std::move(body));
}

// ---------------------------------------------------------------------------------------------
// Expressions

ExprP Generator::gen(const TypeP& t, int d) {
  ++nodes_;
  if (d <= 0 || nodes_ > node_limit_) return leaf(t);
  std::vector<Choice> cs;
  // Leaves get likelier near the depth limit, so trees thin out instead of all reaching it.
  cs.push_back({d <= 1 ? 8.0 : d == 2 ? 4.0 : 1.5, [=, this] { return leaf(t); }});
  add_common(cs, t, d);
  switch (t->kind) {
    case Type::Kind::Int:
      add_number(cs, t, d);
      add_int(cs, d);
      break;
    case Type::Kind::Float:
      add_number(cs, t, d);
      add_float(cs, d);
      break;
    case Type::Kind::I32:
    case Type::Kind::F32:
      add_number(cs, t, d);
      add_sized(cs, t, d);
      break;
    case Type::Kind::Bool: add_bool(cs, d); break;
    case Type::Kind::Char: add_char(cs, d); break;
    case Type::Kind::Seq: add_seq(cs, t, d); break;
    case Type::Kind::Pair: add_pair(cs, t, d); break;
    case Type::Kind::Data:
      cs.push_back({4, [=, this] {
                      std::vector<ExprP> args;
                      for (const TypeP& c : tuple_components(t->fields)) args.push_back(gen(c, d - 1));
                      return call(t, t->name, std::move(args));
                    }});
      break;
  }
  return choose(cs, t);
}

void Generator::add_common(std::vector<Choice>& cs, const TypeP& t, int d) {
  if (var_of(t)) cs.push_back({2.5, [=, this] { return var_of(t); }});
  cs.push_back({1.5, [=, this] {
                  ExprP c = gen(t_bool(), d - 1);
                  ExprP a = gen(t, d - 1);
                  return ite(c, a, gen(t, d - 1));
                }});
  cs.push_back({1.5, [=, this] { return gen_let(t, d, related_type(t)); }});
  cs.push_back({0.6, [=, this] { return gen_let(t, d, t_pair(random_type(1, 0), random_type(1, 0))); }});
  if (!datatypes_.empty())
    cs.push_back({0.6, [=, this] {
                    const DatatypeDef& dt = datatypes_[uniform(0, static_cast<int>(datatypes_.size()) - 1)];
                    return gen_let(t, d, t_data(dt.name, dt.fields));
                  }});
  if (seq_depth(t) < 3) {
    // s[i] with the index folded into range by `mod` on a sequence made non-empty.
    cs.push_back({1.2, [=, this] {
                    TypeP st = t_seq(t);
                    ExprP s = gen(st, d - 1);
                    ExprP e = gen(t, d - 2);
                    ExprP i = gen(t_int(), d - 1);
                    std::string v = fresh("v");
                    ExprP body = index(var(st, v), call(t_int(), "mod", {i, length(var(st, v))}));
                    return let_var(v, bin(st, "++", s, seqlit({e})), body);
                  }});
    // Unguarded: fails when the sequence is too short.
    cs.push_back({0.08, [=, this] { return index(gen(t_seq(t), d - 1), ilit(uniform(0, 3))); }});
  }
  std::vector<FunctionDef> fns;
  for (const FunctionDef& f : callable_)
    if (same_type(f.result, t)) fns.push_back(f);
  for (const FunctionDef& f : fns)
    cs.push_back({3.0 / static_cast<double>(fns.size()), [=, this] {
                    std::vector<ExprP> args;
                    for (const TypeP& p : f.param_types) args.push_back(gen(p, d - 1));
                    return call(t, f.name, std::move(args));
                  }});
  cs.push_back({0.3, [=, this] {
                  ExprP c = gen(t_bool(), d - 1);
                  ExprP a = gen(t, d - 1);
                  return call(t, "select", {c, a, gen(t, d - 1)});
                }});
}

void Generator::add_number(std::vector<Choice>& cs, const TypeP& t, int d) {
  cs.push_back({3, [=, this] {
                  static const char* ops[] = {"+", "-", "*"};
                  ExprP a = gen(t, d - 1);
                  return bin(t, ops[uniform(0, 2)], a, gen(t, d - 1));
                }});
  cs.push_back({0.8, [=, this] { return pre(t, "-", gen(t, d - 1)); }});
  cs.push_back({0.8, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "max" : "min", {a, gen(t, d - 1)});
                }});
  cs.push_back({0.4, [=, this] { return call(t, chance(0.7) ? "abs" : "negate", {gen(t, d - 1)}); }});
  cs.push_back({1.5, [=, this] {
                  static const char* red[] = {"sum", "sum", "max_val", "min_val", "product"};
                  return call(t, red[uniform(0, 4)], {gen(t_seq(t), d - 1)});
                }});
  cs.push_back({0.4, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return bin(t, "^", a, bounded_count(d, 4));
                }});
  if (opts_.rand && (t->kind == Type::Kind::Int || t->kind == Type::Kind::Float))
    cs.push_back({0.5, [=, this] {
                    // rand needs a positive bound.
                    ExprP bound = t->kind == Type::Kind::Int ? bin(t, "+", bounded_count(d, 100), ilit(1))
                                                             : bin(t, "+", call(t, "abs", {gen(t, d - 1)}), lit(t, "1.0"));
                    return call(t, "rand", {bound});
                  }});
  bool integral = t->kind == Type::Kind::Int || t->kind == Type::Kind::I32;
  cs.push_back({integral ? 1.5 : 1.0, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return bin(t, "/", a, integral ? guard_divisor(t, d) : gen(t, d - 1));
                }});
  if (integral)
    cs.push_back({0.05, [=, this] {
                    ExprP a = gen(t, d - 1);
                    return bin(t, "/", a, gen(t, d - 1));
                  }});
}

void Generator::add_int(std::vector<Choice>& cs, int d) {
  TypeP t = t_int();
  cs.push_back({1.0, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "rem" : "mod", {a, guard_divisor(t, d)});
                }});
  cs.push_back({0.04, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "rem" : "mod", {a, gen(t, d - 1)});
                }});
  cs.push_back({0.8, [=, this] {
                  static const char* ops[] = {"and", "or", "xor"};
                  ExprP a = gen(t, d - 1);
                  return bin(t, ops[uniform(0, 2)], a, gen(t, d - 1));
                }});
  cs.push_back({0.2, [=, this] { return call(t, "not", {gen(t, d - 1)}); }});
  cs.push_back({0.4, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "lshift" : "rshift", {a, bounded_count(d, 8)});
                }});
  cs.push_back({2.0, [=, this] { return length(gen(t_seq(random_type(2)), d - 1)); }});
  cs.push_back({0.8, [=, this] { return call(t, "count", {gen(t_seq(t_bool()), d - 1)}); }});
  cs.push_back({0.4, [=, this] { return call(t, "btoi", {gen(t_bool(), d - 1)}); }});
  cs.push_back({0.4, [=, this] { return call(t, "char_code", {gen(t_char(), d - 1)}); }});
  cs.push_back({0.7, [=, this] {
                  static const char* conv[] = {"trunc", "round", "floor", "ceil"};
                  return call(t, conv[uniform(0, 3)], {gen(t_float(), d - 1)});
                }});
  if (opts_.sized_types) cs.push_back({0.2, [=, this] { return call(t, "i64", {gen(t_i32(), d - 1)}); }});
  cs.push_back({0.7, [=, this] {
                  TypeP e = random_ordinal();
                  ExprP s = gen(t_seq(e), d - 1);
                  ExprP x = gen(e, d - 2);
                  return call(t, chance(0.5) ? "max_index" : "min_index", {bin(t_seq(e), "++", s, seqlit({x}))});
                }});
  cs.push_back({0.3, [=, this] {
                  static const char* red[] = {"parity", "any", "all"};
                  return call(t, red[uniform(0, 2)], {gen(t_seq(t), d - 1)});
                }});
  cs.push_back({0.25, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "gcd" : "diff", {a, gen(t, d - 1)});
                }});
  cs.push_back({0.2, [=, this] { return call(t, "isqrt", {bounded_count(d, 1000)}); }});
  cs.push_back({0.4, [=, this] {
                  TypeP e = random_type(1, 0);
                  ExprP x = gen(e, d - 1);
                  return call(t, "find", {x, gen(t_seq(e), d - 1)});
                }});
}

void Generator::add_float(std::vector<Choice>& cs, int d) {
  TypeP t = t_float();
  cs.push_back({1.5, [=, this] { return call(t, "float", {gen(t_int(), d - 1)}); }});
  cs.push_back({0.5, [=, this] { return call(t, "sqrt", {call(t, "abs", {gen(t, d - 1)})}); }});
  cs.push_back({0.2, [=, this] {
                  static const char* fns[] = {"sin", "cos", "exp", "atan"};
                  return call(t, fns[uniform(0, 3)], {gen(t, d - 1)});
                }});
  if (opts_.sized_types) cs.push_back({0.2, [=, this] { return call(t, "f64", {gen(t_f32(), d - 1)}); }});
}

void Generator::add_sized(std::vector<Choice>& cs, const TypeP& t, int d) {
  bool i32 = t->kind == Type::Kind::I32;
  cs.push_back({2.0, [=, this] { return call(t, i32 ? "i32" : "f32", {gen(i32 ? t_int() : t_float(), d - 1)}); }});
}

void Generator::add_bool(std::vector<Choice>& cs, int d) {
  TypeP t = t_bool();
  cs.push_back({4, [=, this] {
                  static const char* ops[] = {"==", "/=", "<", ">", "<=", ">="};
                  TypeP u = random_ordinal();
                  ExprP a = gen(u, d - 1);
                  return bin(t, ops[uniform(0, 5)], a, gen(u, d - 1));
                }});
  cs.push_back({2, [=, this] {
                  static const char* ops[] = {"and", "or", "xor", "nor", "nand"};
                  ExprP a = gen(t, d - 1);
                  return bin(t, ops[uniform(0, 4)], a, gen(t, d - 1));
                }});
  cs.push_back({0.7, [=, this] { return call(t, "not", {gen(t, d - 1)}); }});
  cs.push_back({0.5, [=, this] { return call(t, chance(0.5) ? "evenp" : "oddp", {gen(t_int(), d - 1)}); }});
  cs.push_back({0.5, [=, this] {
                  static const char* ps[] = {"plusp", "minusp", "zerop"};
                  return call(t, ps[uniform(0, 2)], {gen(random_number(), d - 1)});
                }});
  cs.push_back({0.8, [=, this] {
                  static const char* red[] = {"any", "all", "parity"};
                  return call(t, red[uniform(0, 2)], {gen(t_seq(t), d - 1)});
                }});
  cs.push_back({0.6, [=, this] {
                  TypeP u = random_type(2);
                  ExprP a = gen(u, d - 1);
                  return call(t, "eql", {a, gen(u, d - 1)});
                }});
  cs.push_back({0.2, [=, this] { return call(t, "digitp", {gen(t_char(), d - 1)}); }});
}

void Generator::add_char(std::vector<Choice>& cs, int d) {
  TypeP t = t_char();
  cs.push_back({1, [=, this] {
                  // Codes 38..126: printable, `\` and backquote included, but no `%`, which
                  // would end the `%test` comment of a reproducer.
                  ExprP code = bin(t_int(), "+", bounded_count(d, 89), ilit(38));
                  return call(t, "code_char", {code});
                }});
  cs.push_back({1, [=, this] { return call(t, chance(0.5) ? "lowercase" : "uppercase", {gen(t, d - 1)}); }});
  cs.push_back({0.5, [=, this] {
                  ExprP a = gen(t, d - 1);
                  return call(t, chance(0.5) ? "max" : "min", {a, gen(t, d - 1)});
                }});
  cs.push_back({0.3, [=, this] {
                  ExprP s = gen(t_seq(t), d - 1);
                  ExprP x = gen(t, d - 2);
                  return call(t, chance(0.5) ? "max_val" : "min_val", {bin(t_seq(t), "++", s, seqlit({x}))});
                }});
}

void Generator::add_pair(std::vector<Choice>& cs, const TypeP& t, int d) {
  cs.push_back({4, [=, this] {
                  ExprP a = gen(t->a, d - 1);
                  return tup(a, gen(t->b, d - 1));
                }});
  if (t->a->kind == Type::Kind::Seq && t->b->kind == Type::Kind::Seq)
    cs.push_back({0.8, [=, this] { return call(t, "unzip", {gen(t_seq(t_pair(t->a->a, t->b->a)), d - 1)}); }});
  if (t->b->kind == Type::Kind::Seq && same_type(t->a, t->b->a) && seq_depth(t) < 3)
    cs.push_back({0.4, [=, this] {
                    ExprP s = gen(t->b, d - 1);
                    ExprP x = gen(t->a, d - 2);
                    return call(t, "head_rest", {bin(t->b, "++", s, seqlit({x}))});
                  }});
  if (same_type(t->a, t_seq(t_int())) && same_type(t->b, t_seq(t_int())))
    cs.push_back({0.3, [=, this] { return call(t, "split_index", {gen(t_seq(t_bool()), d - 1)}); }});
}

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

// ---------------------------------------------------------------------------------------------
// Definitions

ExprP Generator::gen_body(const std::vector<Binding>& params, const TypeP& result, int depth) {
  std::vector<Binding> saved = scope_;
  scope_ = params;
  node_limit_ = nodes_ + 35;
  ExprP body = gen(result, depth);
  scope_ = saved;
  return body;
}

void Generator::gen_datatype() {
  DatatypeDef d;
  d.name = fresh("dt");
  static const int kinds = 6;
  auto field = [&]() -> TypeP {
    switch (uniform(0, kinds - 1)) {
      case 0: return t_float();
      case 1: return t_bool();
      case 2: return t_char();
      case 3: return t_seq(t_int());
      case 4: return t_seq(t_char());
      default: return t_int();
    }
  };
  int n = uniform(2, 3);
  TypeP fields = field();
  for (int i = 1; i < n; ++i) fields = t_pair(field(), fields);
  d.fields = fields;
  datatypes_.push_back(d);
  Program::Def def;
  def.kind = Program::Def::Kind::Datatype;
  def.data = d;
  prog_.defs.push_back(def);
}

void Generator::gen_helper() {
  FunctionDef f;
  f.name = fresh("fun");
  std::vector<Binding> params;
  int n = uniform(1, 2);
  for (int i = 0; i < n; ++i) {
    params.push_back({fresh("v"), random_type(2)});
    f.params.push_back(params.back().name);
    f.param_types.push_back(params.back().type);
  }
  f.result = random_type(2);
  f.body = gen_body(params, f.result, std::min(opts_.max_depth, 3));
  f.typed = chance(0.3) || needs_signature(f);
  callable_.push_back(f);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, f});
}

void Generator::gen_int_recursion() {
  FunctionDef f;
  f.name = fresh("fun");
  f.recursive = true;
  TypeP r = chance(0.5) ? random_scalar(true) : t_seq(random_type(1, 0));
  f.result = r;
  std::string n = fresh("v");
  int k = uniform(3, 6);
  ExprP cond = frozen(bin(t_bool(), "<=", var(t_int(), n), ilit(0)));
  ExprP dec = frozen(bin(t_int(), "-", call(t_int(), "min", {var(t_int(), n), ilit(k)}), ilit(1)));
  auto clamp = [&](ExprP e) { return r->kind == Type::Kind::Seq ? clamp_seq(std::move(e)) : e; };
  if (chance(0.6)) {
    // Tail recursion with an accumulator.
    std::string acc = fresh("v");
    std::vector<Binding> params = {{n, t_int()}, {acc, r}};
    ExprP base = chance(0.5) ? var(r, acc) : gen_body(params, r, 2);
    ExprP step = clamp(gen_body(params, r, 3));
    f.body = ite(cond, base, call(r, f.name, {dec, step}));
    f.params = {n, acc};
    f.param_types = {t_int(), r};
  } else {
    // The recursive result is used after the call returns.
    std::vector<Binding> params = {{n, t_int()}};
    if (chance(0.5)) params.push_back({fresh("v"), random_type(1)});
    ExprP base = gen_body(params, r, 2);
    std::vector<ExprP> args = {dec};
    for (size_t i = 1; i < params.size(); ++i) args.push_back(var(params[i].type, params[i].name));
    std::string rv = fresh("v");
    std::vector<Binding> inner = params;
    inner.push_back({rv, r});
    ExprP step = clamp(gen_body(inner, r, 3));
    f.body = ite(cond, base, let_var(rv, call(r, f.name, args), step));
    for (const Binding& b : params) {
      f.params.push_back(b.name);
      f.param_types.push_back(b.type);
    }
  }
  f.typed = chance(0.3) || needs_signature(f);
  callable_.push_back(f);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, f});
}

void Generator::gen_halving() {
  FunctionDef f;
  f.name = fresh("fun");
  f.recursive = true;
  TypeP elem = random_type(1, 0);
  TypeP st = t_seq(elem);
  TypeP r = chance(0.5) ? random_scalar(true) : t_seq(random_type(1, 0));
  f.result = r;
  std::string s = fresh("v");
  ExprP cond = frozen(bin(t_bool(), "<=", length(var(st, s)), ilit(1)));
  ExprP base = gen_body({{s, st}}, r, 2);
  // Both halves are strictly shorter because #s >= 2 here.
  ExprP halves;
  if (chance(0.5)) {
    halves = call(t_seq(st), "bottop", {var(st, s)});
  } else {
    ExprP half = bin(t_int(), "/", length(var(st, s)), ilit(2));
    halves = seqlit({call(st, "take", {var(st, s), half}), call(st, "drop", {var(st, s), half})});
  }
  std::string v = fresh("v"), rs = fresh("v"), a = fresh("v"), b = fresh("v");
  ExprP rec = frozen(each(r, call(r, f.name, {var(st, v)}), {pat_var(v)}, {halves}, nullptr));
  ExprP combine;
  if (is_number(r) && chance(0.5)) {
    combine = chance(0.5) ? bin(r, "+", var(r, a), var(r, b)) : call(r, "max", {var(r, a), var(r, b)});
  } else if (r->kind == Type::Kind::Seq && chance(0.5)) {
    combine = bin(r, "++", var(r, a), var(r, b));
  } else {
    combine = gen_body({{s, st}, {a, r}, {b, r}}, r, 3);
  }
  ExprP split = let_var(a, index(var(t_seq(r), rs), ilit(0)), let_var(b, index(var(t_seq(r), rs), ilit(1)), combine));
  f.body = ite(cond, base, let_var(rs, rec, split));
  f.params = {s};
  f.param_types = {st};
  f.typed = chance(0.3) || needs_signature(f);
  callable_.push_back(f);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, f});
}

void Generator::gen_quicksort() {
  FunctionDef f;
  f.name = fresh("fun");
  f.recursive = true;
  TypeP e = random_ordinal();
  TypeP st = t_seq(e);
  f.result = st;
  std::string a = fresh("v"), p = fresh("v"), l = fresh("v"), m = fresh("v"), g = fresh("v"), r = fresh("v");
  ExprP va = var(st, a);
  ExprP cond = frozen(bin(t_bool(), "<", length(va), ilit(2)));
  ExprP pivot = frozen(index(va, bin(t_int(), "/", length(va), ilit(2))));
  auto part = [&](const char* op) {
    std::string x = fresh("v");
    return frozen(each(e, var(e, x), {pat_var(x)}, {va}, bin(t_bool(), op, var(e, x), var(e, p))));
  };
  std::string v = fresh("v");
  ExprP rec = frozen(each(st, call(st, f.name, {var(st, v)}), {pat_var(v)}, {seqlit({var(st, l), var(st, g)})}, nullptr));
  ExprP mid = var(st, m);
  if (chance(0.4)) {
    std::string x = fresh("v");
    ExprP body = gen_body({{x, e}, {p, e}}, e, 2);
    mid = each(e, body, {pat_var(x)}, {var(st, m)}, nullptr);
  }
  bool down = chance(0.3);
  ExprP lo = index(var(t_seq(st), r), ilit(down ? 1 : 0));
  ExprP hi = index(var(t_seq(st), r), ilit(down ? 0 : 1));
  ExprP result = bin(st, "++", bin(st, "++", lo, mid), hi);
  ExprP body = let_var(p, pivot,
                       let_var(l, part("<"), let_var(m, part("=="), let_var(g, part(">"), let_var(r, rec, result)))));
  f.body = ite(cond, va, body);
  f.params = {a};
  f.param_types = {st};
  f.typed = chance(0.3) || needs_signature(f);
  callable_.push_back(f);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, f});
}

void Generator::gen_mutual() {
  // `ev` is declared first (a typed definition without a body) so that `od` can call it.
  std::string ev = fresh("fun"), od = fresh("fun");
  FunctionDef decl;
  decl.name = ev;
  decl.params = {"n"};
  decl.param_types = {t_int()};
  decl.result = t_bool();
  decl.typed = true;
  decl.recursive = true;
  prog_.defs.push_back({Program::Def::Kind::Function, {}, decl});
  auto make = [&](const std::string& name, const std::string& other) {
    FunctionDef f;
    f.name = name;
    f.recursive = true;
    std::string n = fresh("v");
    f.params = {n};
    f.param_types = {t_int()};
    f.result = t_bool();
    ExprP cond = frozen(bin(t_bool(), "<=", var(t_int(), n), ilit(0)));
    ExprP dec = frozen(bin(t_int(), "-", call(t_int(), "min", {var(t_int(), n), ilit(12)}), ilit(1)));
    ExprP base = gen_body({{n, t_int()}}, t_bool(), 1);
    f.body = ite(cond, base, call(t_bool(), other, {dec}));
    f.typed = true;
    return f;
  };
  FunctionDef fo = make(od, ev);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, fo});
  FunctionDef fe = make(ev, od);
  prog_.defs.push_back({Program::Def::Kind::Function, {}, fe});
  callable_.push_back(fo);
  callable_.push_back(fe);
}

Program Generator::program() {
  if (chance(0.3)) gen_datatype();
  if (chance(0.08)) gen_datatype();
  int r = uniform(0, 19);
  int nfun = r < 6 ? 0 : r < 13 ? 1 : r < 18 ? 2 : 3;
  for (int i = 0; i < nfun; ++i) {
    int k = uniform(0, 19);
    if (k < 7) gen_helper();
    else if (k < 12) gen_int_recursion();
    else if (k < 16) gen_halving();
    else if (k < 19) gen_quicksort();
    else gen_mutual();
  }
  scope_.clear();
  node_limit_ = nodes_ + opts_.max_nodes;
  if (!callable_.empty() && chance(0.5)) {
    // Call a defined function from inside an apply-to-each, the pattern the flattening
    // backend has to vectorise.
    const FunctionDef f = callable_[uniform(0, static_cast<int>(callable_.size()) - 1)];
    TypeP u = chance(0.7) && seq_depth(f.param_types[0]) < 3 ? f.param_types[0] : random_type(2);
    ExprP s = gen(t_seq(u), opts_.max_depth - 1);
    std::vector<Binding> bound;
    Pattern pat = pattern_for(u, bound);
    scope_ = bound;
    std::vector<ExprP> args;
    for (const TypeP& p : f.param_types) args.push_back(gen(p, std::max(1, opts_.max_depth - 2)));
    ExprP filter = chance(0.25) ? gen(t_bool(), 2) : nullptr;
    scope_.clear();
    prog_.expr = each(f.result, call(f.result, f.name, std::move(args)), {pat}, {s}, filter);
  } else {
    TypeP t = chance(0.55) ? t_seq(random_type(2)) : random_type(3);
    prog_.expr = gen(t, opts_.max_depth);
  }
  return prog_;
}

}  // namespace ndp::difftest
