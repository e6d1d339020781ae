// Test helpers for the cpu backend: a builder for hand-written Flat IR functions, an executor
// fixture, and a harness that compares native lifted primitives with the fallback.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "exec/host/convert.h"
#include "exec/cpu/executor.h"
#include "exec/host/lifted_prims.h"
#include "flatten/flat_ir.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"

namespace ndp::test::cpu {

using exec::host::Vec;
using flat::Block;
using flat::Op;
using flat::Stmt;
using flat::VarId;
using lang::Type;
using lang::Value;
using lang::core::PrimId;

inline Value I(int64_t x) { return Value::int_(x); }
inline Value F(double x) { return Value::float_(x); }
inline Value B(bool x) { return Value::bool_(x); }
inline Value ints(std::vector<int64_t> xs) {
  std::vector<Value> v;
  for (int64_t x : xs) v.push_back(I(x));
  return Value::seq(std::move(v));
}
inline Value seq(std::vector<Value> xs) { return Value::seq(std::move(xs)); }

/// v in the representation of Note [Uniform buffers] (exec/host/vec.h) wherever it allows:
/// scalars whose instances are all equal over a uniform buffer, sequences whose lengths are all
/// equal regular, at every level. The values are v's.
inline Vec uniform_form(const Vec& v) {
  using exec::host::with_scalar;
  const Type* t = v.type();
  int64_t n = v.size();
  switch (t->kind) {
    case lang::TypeKind::Seq: {
      Vec elems = uniform_form(v.elems());
      bool equal = true;
      for (int64_t i = 1; i < n && equal; ++i) equal = v.length(i) == v.length(0);
      if (equal && n > 0) return Vec::seq(t, n, exec::host::uniform_buffer(v.length(0), n), elems);
      return Vec::seq(t, n, v.shared_buffer(), v.offsets_buffer(), elems);
    }
    case lang::TypeKind::Pair: return Vec::pair(t, uniform_form(v.first()), uniform_form(v.second()));
    case lang::TypeKind::Data: return Vec::data(t, uniform_form(v.fields()));
    case lang::TypeKind::Var: return v;
    default:
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* d = v.template data<T>();
        for (int64_t i = 1; i < n; ++i)
          if (std::memcmp(&d[i], &d[0], sizeof(T)) != 0) return v;
        return n > 0 ? exec::host::broadcast_first(v, n) : v;
      });
  }
}

/// Builds one flat::Function statement by statement.
class FnBuilder {
 public:
  FnBuilder(std::string name, const Type* arg, const Type* result) {
    fn.name = std::move(name);
    fn.arg_type = arg;
    fn.result_type = result;
    fn.param = vec(arg, "x");
  }

  flat::Function fn;

  VarId vec(const Type* t, std::string hint = "v") {
    fn.vars.push_back(flat::Var{std::move(hint), t});
    return static_cast<VarId>(fn.vars.size() - 1);
  }
  VarId host(std::string hint = "n") { return vec(nullptr, std::move(hint)); }

  Stmt& emit(Block& b, Op op, VarId dst, std::vector<VarId> uses, lang::Span span = {}) {
    Stmt s;
    s.op = op;
    s.dst = dst;
    s.uses = std::move(uses);
    s.span = span;
    b.stmts.push_back(std::move(s));
    return b.stmts.back();
  }
  Stmt& emit(Op op, VarId dst, std::vector<VarId> uses, lang::Span span = {}) {
    return emit(fn.body, op, dst, std::move(uses), span);
  }

  /// dst(host) = the integer k.
  VarId konst(Block& b, int64_t k) {
    VarId d = host();
    emit(b, Op::Const, d, {}).lit = I(k);
    return d;
  }
  /// dst = n copies of a literal.
  VarId lit(Block& b, const Type* t, Value v, VarId n) {
    VarId d = vec(t);
    Stmt& s = emit(b, Op::Lit, d, {n});
    s.lit = std::move(v);
    s.type = t;
    return d;
  }
  VarId unary(Block& b, Op op, const Type* t, VarId a) {
    VarId d = vec(t);
    emit(b, op, d, {a});
    return d;
  }
  VarId prim(Block& b, PrimId p, const Type* result, std::vector<VarId> args, std::vector<const Type*> targs = {},
             lang::Span span = {}) {
    VarId d = vec(result);
    Stmt& s = emit(b, Op::Prim, d, std::move(args), span);
    s.prim = p;
    s.type = result;
    s.type_args = std::move(targs);
    return d;
  }
  /// The elements of a literal sequence as a vector of #elems instances (in block b).
  VarId instances(Block& b, const Type* seq_type, Value elems) {
    VarId one = konst(b, 1);
    VarId s = lit(b, seq_type, std::move(elems), one);
    return unary(b, Op::Elements, seq_type->a, s);
  }
  /// Wraps a vector of k instances into one instance of a sequence of k elements.
  VarId wrap(Block& b, lang::TypeContext& T, VarId v, int64_t k) {
    VarId one = konst(b, 1);
    VarId kv = lit(b, T.int_(), I(k), one);
    VarId d = vec(T.seq(fn.vars[v].type));
    emit(b, Op::Nest, d, {kv, v});
    return d;
  }
};

/// A Core program (types, globals), an output file and a CpuExecutor over them.
struct ExecFixture {
  lang::core::Program prog;
  lang::TypeContext& T = prog.types;
  std::FILE* out = std::tmpfile();
  ~ExecFixture() { std::fclose(out); }

  lang::eval::RunResult run(flat::Program& p) {
    exec::cpu::CpuExecutor ex(prog, out);
    return ex.run(p);
  }
  /// Runs a program of one function.
  lang::eval::RunResult run(flat::Function f) {
    flat::Program p;
    p.functions.push_back(std::move(f));
    return run(p);
  }
  Value ok(flat::Function f) {
    auto r = run(std::move(f));
    if (!r.ok) FAIL("unexpected runtime error: " << r.error.message);
    return r.value;
  }
  std::string output() {
    std::fflush(out);
    std::string s;
    std::rewind(out);
    int ch;
    while ((ch = std::fgetc(out)) != EOF) s += static_cast<char>(ch);
    return s;
  }
};

/// Deep equality with a relative tolerance on floats (reductions and scans may reassociate,
/// extensions.md §4); NaN equals NaN.
inline bool close_values(const Value& a, const Value& b, double tol) {
  if (a.kind() != b.kind()) return false;
  auto close = [&](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (x == y) return true;
    return std::fabs(x - y) <= tol * std::max(std::fabs(x), std::fabs(y));
  };
  switch (a.kind()) {
    case lang::ValueKind::Float: return close(a.as_float(), b.as_float());
    case lang::ValueKind::F32: return close(a.as_f32(), b.as_f32());
    case lang::ValueKind::Seq:
      if (a.length() != b.length()) return false;
      for (size_t i = 0; i < a.length(); ++i)
        if (!close_values(a.elems()[i], b.elems()[i], tol)) return false;
      return true;
    case lang::ValueKind::Pair: return close_values(a.first(), b.first(), tol) && close_values(a.second(), b.second(), tol);
    case lang::ValueKind::Data: return close_values(a.data().fields, b.data().fields, tol);
    default: return lang::values_equal(a, b);
  }
}

/// Runs lifted primitives natively and through the fallback on the same arguments.
struct PrimHarness {
  lang::core::Program prog;
  lang::TypeContext& T = prog.types;
  std::FILE* out = std::tmpfile();
  lang::eval::StreamTable streams{out};
  lang::eval::RandState rand;
  lang::eval::PrimEnv env{&prog.types, out, &streams, &rand};
  exec::host::PrimContext ctx{&prog.types, &env};
  lang::Span span{1, 5, 9};
  ~PrimHarness() { std::fclose(out); }

  Vec make(const Type* t, const std::vector<Value>& vs) { return exec::host::from_values(T, t, vs); }

  struct Outcome {
    bool native = false;  // a native version ran
    std::optional<Vec> value;
    std::string error;
  };

  /// Which entry point runs the primitive: its native version (if any), the per-instance
  /// fallback, or apply_lifted_prim (native where there is one, with its shortcuts).
  enum class Path { native, fallback, lifted };

  /// Runs the primitive; an error must carry the call's span.
  Outcome apply(Path path, PrimId id, const std::vector<const Type*>& targs, const Type* result,
                const std::vector<Vec>& args) {
    exec::host::LiftedCall c{id, span, &targs, result};
    Outcome o;
    try {
      switch (path) {
        case Path::native:
          o.value = exec::host::apply_native_prim(ctx, c, args);
          o.native = o.value.has_value();
          break;
        case Path::fallback: o.value = exec::host::apply_fallback_prim(ctx, c, args); break;
        case Path::lifted: o.value = exec::host::apply_lifted_prim(ctx, c, args); break;
      }
    } catch (lang::eval::EvalError& e) {
      o.native = path == Path::native;
      o.error = e.message;
      CHECK(e.span.file == span.file);
      CHECK(e.span.begin == span.begin);
    }
    return o;
  }

  /// Native and fallback agree (same error, or close values). Returns the error ("" if none).
  std::string same(PrimId id, const std::vector<const Type*>& targs, const Type* result, const std::vector<Vec>& args,
                   double tol = 0) {
    Outcome n = apply(Path::native, id, targs, result, args);
    INFO("primitive " << lang::core::prim_info(id).name);
    REQUIRE_MESSAGE(n.native, "no native version");
    Outcome f = apply(Path::fallback, id, targs, result, args);
    CHECK(n.error == f.error);
    if (n.error.empty() && f.error.empty()) {
      REQUIRE(n.value->size() == f.value->size());
      CHECK(n.value->type() == result);
      auto nv = exec::host::to_values(*n.value), fv = exec::host::to_values(*f.value);
      size_t bad = 0;
      for (size_t i = 0; i < nv.size(); ++i)
        if (!close_values(nv[i], fv[i], tol)) ++bad;
      CHECK_MESSAGE(bad == 0, bad << " of " << nv.size() << " instances differ");
    }
    return n.error;
  }
};

}  // namespace ndp::test::cpu
