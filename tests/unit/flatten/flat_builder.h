// Test helper: builds Flat IR functions by hand, statement by statement (no front end), and
// the Values their literals hold. The flatten, exec and codegen tests share it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flatten/flat_ir.h"
#include "lang/types.h"
#include "lang/value.h"

namespace ndp::test::flat_ir {

using flatten::Block;
using flatten::Op;
using flatten::Stmt;
using flatten::VarId;
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

/// Builds one flatten::Function statement by statement.
class FnBuilder {
 public:
  FnBuilder(std::string name, const Type* arg, const Type* result) {
    fn.name = std::move(name);
    fn.arg_type = arg;
    fn.result_type = result;
    fn.param = vec(arg, "x");
  }

  flatten::Function fn;

  VarId vec(const Type* t, std::string hint = "v") {
    fn.vars.push_back(flatten::Var{std::move(hint), t});
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

}  // namespace ndp::test::flat_ir
