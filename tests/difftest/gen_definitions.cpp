// Top-level definitions (datatypes, helpers, recursive functions) and whole programs.
#include "tests/difftest/generator.h"

#include "tests/difftest/gen_nodes.h"

namespace ndp::difftest {

using namespace gen_nodes;

namespace {

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
