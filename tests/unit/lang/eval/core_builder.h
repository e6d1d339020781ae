// Test helper: builds Core IR by hand (no front end) and runs it on the reference interpreter.
#pragma once

#include <cstdio>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "lang/core.h"
#include "lang/eval/interp.h"
#include "lang/value.h"

namespace ndp::test {

using lang::Type;
using lang::Value;
using lang::core::Expr;
using lang::core::Kind;
using lang::core::Pattern;
using lang::core::PatternKind;
using lang::core::PrimId;

inline Value ints(std::vector<int64_t> xs) {
  std::vector<Value> v;
  for (int64_t x : xs) v.push_back(Value::int_(x));
  return Value::seq(std::move(v));
}

inline Value floats(std::vector<double> xs) {
  std::vector<Value> v;
  for (double x : xs) v.push_back(Value::float_(x));
  return Value::seq(std::move(v));
}

inline Value bools(std::vector<bool> xs) {
  std::vector<Value> v;
  for (bool x : xs) v.push_back(Value::bool_(x));
  return Value::seq(std::move(v));
}

inline Value seqs(std::vector<Value> xs) { return Value::seq(std::move(xs)); }

/// Owns a Program, its Interpreter (created on first use) and a temporary output file.
class CoreBuilder {
 public:
  explicit CoreBuilder(lang::eval::InterpOptions opts = {}) : opts_(opts) {
    out_ = std::tmpfile();
    opts_.out = out_;
  }
  ~CoreBuilder() {
    interp_.reset();
    std::fclose(out_);
  }

  lang::core::Program prog;

  lang::eval::Interpreter& interp() {
    if (!interp_) interp_ = std::make_unique<lang::eval::Interpreter>(prog, opts_);
    return *interp_;
  }

  lang::eval::RunResult run(const Expr* body, uint32_t slots = 0) {
    lang::core::TopExpr top;
    top.body = body;
    top.num_slots = slots;
    return interp().run(top);
  }

  /// Everything the program wrote to its output so far.
  std::string output() {
    std::fflush(out_);
    std::string s;
    std::rewind(out_);
    int ch;
    while ((ch = std::fgetc(out_)) != EOF) s += static_cast<char>(ch);
    return s;
  }

  // ---- nodes ----
  /// Each node gets its own span, so rand call sites differ as they do in real code.
  Expr* node(Kind k, const Type* t = nullptr) { return prog.new_expr(k, t, lang::Span{1, next_pos_++, next_pos_}); }
  const Expr* lit(Value v) {
    Expr* e = node(Kind::Lit);
    e->lit = std::move(v);
    return e;
  }
  const Expr* i(int64_t x) { return lit(Value::int_(x)); }
  const Expr* f(double x) { return lit(Value::float_(x)); }
  const Expr* bool_(bool x) { return lit(Value::bool_(x)); }
  const Expr* ch(char c) { return lit(Value::char_(static_cast<uint8_t>(c))); }
  const Expr* str(std::string_view s) { return lit(Value::string(s)); }
  const Expr* local(uint32_t slot) {
    Expr* e = node(Kind::Local);
    e->slot = slot;
    return e;
  }
  const Expr* global(uint32_t id) {
    Expr* e = node(Kind::Global);
    e->id = id;
    return e;
  }
  const Expr* fnref(uint32_t id, std::vector<const Type*> targs = {}) {
    Expr* e = node(Kind::FnRef);
    e->id = id;
    e->type_args = std::move(targs);
    return e;
  }
  Expr* prim(PrimId p, std::vector<const Expr*> args, std::vector<const Type*> targs = {}) {
    Expr* e = node(Kind::Prim);
    e->prim = p;
    e->args = std::move(args);
    e->type_args = std::move(targs);
    return e;
  }
  const Expr* call(const Expr* callee, const Expr* arg) {
    Expr* e = node(Kind::Call);
    e->args = {callee, arg};
    return e;
  }
  const Expr* tuple(const Expr* a, const Expr* b) {
    Expr* e = node(Kind::Tuple);
    e->args = {a, b};
    return e;
  }
  const Expr* if_(const Expr* c, const Expr* t, const Expr* f) {
    Expr* e = node(Kind::If);
    e->args = {c, t, f};
    return e;
  }
  const Expr* let(const Pattern* p, const Expr* rhs, const Expr* body) {
    Expr* e = node(Kind::Let);
    e->pattern = p;
    e->args = {rhs, body};
    return e;
  }
  const Expr* map(std::vector<const Pattern*> pats, std::vector<const Expr*> gens, const Expr* body,
                  const Expr* filter = nullptr) {
    Expr* e = node(Kind::Map);
    e->gens = std::move(pats);
    e->args = std::move(gens);
    e->args.push_back(body);
    if (filter) {
      e->args.push_back(filter);
      e->has_filter = true;
    }
    return e;
  }

  // ---- patterns ----
  const Pattern* pvar(uint32_t slot) {
    Pattern* p = prog.new_pattern(PatternKind::Var, nullptr, {});
    p->slot = slot;
    return p;
  }
  const Pattern* ptuple(const Pattern* a, const Pattern* b) {
    Pattern* p = prog.new_pattern(PatternKind::Tuple, nullptr, {});
    p->left = a;
    p->right = b;
    return p;
  }
  const Pattern* pcon(const lang::DataDef* d, const Pattern* arg) {
    Pattern* p = prog.new_pattern(PatternKind::Con, nullptr, {});
    p->data = d;
    p->left = arg;
    return p;
  }

  // ---- globals ----
  uint32_t function(std::string name, const Pattern* param, uint32_t slots, const Expr* body) {
    auto* g = prog.new_global(lang::core::Global::Kind::Function, name);
    uint32_t id = static_cast<uint32_t>(prog.globals.size() - 1);
    g->fn.name = std::move(name);
    g->fn.global = id;
    g->fn.param = param;
    g->fn.num_slots = slots;
    g->fn.body = body;
    return id;
  }
  uint32_t variable(std::string name, Value v) {
    auto* g = prog.new_global(lang::core::Global::Kind::Variable, std::move(name));
    g->set_value(std::move(v));
    return static_cast<uint32_t>(prog.globals.size() - 1);
  }
  uint32_t prim_global(PrimId p) {
    auto* g = prog.new_global(lang::core::Global::Kind::Prim, lang::core::prim_info(p).name);
    g->prim = p;
    return static_cast<uint32_t>(prog.globals.size() - 1);
  }
  uint32_t constructor(const lang::DataDef* d) {
    auto* g = prog.new_global(lang::core::Global::Kind::Constructor, d->name);
    g->data = d;
    return static_cast<uint32_t>(prog.globals.size() - 1);
  }

  /// Applies one primitive to literal arguments.
  lang::eval::RunResult apply(PrimId p, std::vector<Value> args, std::vector<const Type*> targs = {}) {
    std::vector<const Expr*> as;
    for (Value& v : args) as.push_back(lit(std::move(v)));
    return run(prim(p, std::move(as), std::move(targs)));
  }

 private:
  lang::eval::InterpOptions opts_;
  std::FILE* out_ = nullptr;
  std::unique_ptr<lang::eval::Interpreter> interp_;
  uint32_t next_pos_ = 1;
};

}  // namespace ndp::test
