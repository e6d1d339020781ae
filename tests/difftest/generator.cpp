// Typed random generation: every production builds an expression of a requested type, so the
// programs type-check by construction; guards (`mod`, appended elements) keep most of them
// free of runtime errors, and a few unguarded forms fail on purpose.
#include "tests/difftest/generator.h"

#include <fmt/format.h>

#include <cmath>

#include "tests/difftest/gen_nodes.h"

namespace ndp::difftest {

using namespace gen_nodes;

namespace {

std::string float_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
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

Entropy::Entropy(std::span<const uint8_t> bytes) : bytes_(bytes), prng_(0x9e3779b97f4a7c15ULL) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the input seeds what comes after it
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  prng_.seed(h);
}

uint64_t Entropy::operator()() {
  uint64_t low = prng_();
  if (used_ + 2 > bytes_.size()) return low;
  uint64_t top = uint64_t{bytes_[used_]} << 8 | bytes_[used_ + 1];
  used_ += 2;
  return top << 48 | low >> 16;
}

Generator::Generator(Entropy entropy, GenOptions opts) : rng_(std::move(entropy)), opts_(opts) {}

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


}  // namespace ndp::difftest
