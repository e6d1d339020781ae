// Test helper: elementwise chains as Flat IR functions over random inputs (the extremes
// included), and the examples the fusion pass's tests and the kernel loop's tests share: the
// pass's shape is checked in flatten/passes/test_fuse_elementwise.cpp, the fused programs'
// results against the unfused ones in exec/cpu/test_kernels.cpp, their kernels' LLVM code in
// codegen/.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "flatten/flat_ir.h"
#include "tests/unit/flatten/flat_builder.h"

namespace ndp::test::flat_ir {

/// The statements of a block with op `op`.
inline std::vector<const Stmt*> stmts_of(const Block& b, Op op) {
  std::vector<const Stmt*> r;
  for (const Stmt& s : b.stmts)
    if (s.op == op) r.push_back(&s);
  return r;
}

inline size_t prim_nodes(const flatten::KernelBody& k) {
  size_t c = 0;
  for (const auto& n : k.nodes) c += n.kind == flatten::KernelNode::Kind::Prim;
  return c;
}

inline flatten::Program program_of(flatten::Function f) {
  flatten::Program p;
  p.functions.push_back(std::move(f));
  return p;
}

/// Random values of a flat scalar type, with the extremes (wrap-around, NaN, infinities, -0).
inline std::vector<Value> random_values(const Type* t, size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Value> v;
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = 0; i < n; ++i) {
    uint64_t r = rng();
    bool special = r % 7 == 0;
    switch (t->kind) {
      case lang::TypeKind::Int: {
        static const int64_t ex[] = {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(), -1, 0, 1};
        v.push_back(I(special ? ex[(r >> 8) % 5] : static_cast<int64_t>(r >> 3) - (int64_t{1} << 60)));
        break;
      }
      case lang::TypeKind::I32: {
        static const int32_t ex[] = {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), -1, 0, 1};
        v.push_back(Value::i32(special ? ex[(r >> 8) % 5] : static_cast<int32_t>(static_cast<uint32_t>(r >> 7))));
        break;
      }
      case lang::TypeKind::Float: {
        static const double ex[] = {inf, -inf, nan, -0.0, 0.0, 1e308};
        v.push_back(F(special ? ex[(r >> 8) % 6] : (static_cast<double>(r % 2001) - 1000.0) / 7.0));
        break;
      }
      case lang::TypeKind::F32: {
        static const float ex[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(), -0.0f, 3.4e38f};
        v.push_back(Value::f32(special ? ex[(r >> 8) % 5] : (static_cast<float>(r % 2001) - 1000.0f) / 7.0f));
        break;
      }
      case lang::TypeKind::Bool: v.push_back(B((r >> 11) & 1)); break;
      case lang::TypeKind::Char: v.push_back(Value::char_(static_cast<uint8_t>(r >> 17))); break;
      default: FAIL("not a flat scalar type");
    }
  }
  return v;
}

/// A test function: inputs (vectors of n instances), a chain built by `chain`, whose listed
/// results are wrapped into one tuple of sequences (so every one of them is compared).
struct Chain {
  std::vector<const Type*> input_types;
  std::function<std::vector<VarId>(FnBuilder&, Block&, const std::vector<VarId>&)> build;
};

inline flatten::Function make_function(lang::TypeContext& T, const Chain& c, size_t n, uint64_t seed) {
  // The result type is known only after building; build once into a scratch builder for it.
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  std::vector<VarId> ins;
  for (size_t j = 0; j < c.input_types.size(); ++j) {
    const Type* t = c.input_types[j];
    ins.push_back(b.instances(body, T.seq(t), seq(random_values(t, n, seed * 31 + j))));
  }
  std::vector<VarId> outs = c.build(b, body, ins);
  VarId acc = 0;
  const Type* at = nullptr;
  for (size_t i = 0; i < outs.size(); ++i) {
    VarId w = b.wrap(body, T, outs[i], static_cast<int64_t>(n));
    const Type* wt = b.fn.vars[w].type;
    if (i == 0) {
      acc = w;
      at = wt;
      continue;
    }
    const Type* pt = T.pair(at, wt);
    VarId p = b.vec(pt);
    b.emit(body, Op::Tuple, p, {acc, w});
    acc = p;
    at = pt;
  }
  body.result = acc;
  b.fn.result_type = at;
  return std::move(b.fn);
}

inline VarId prim(FnBuilder& b, Block& body, PrimId p, const Type* r, std::vector<VarId> args) {
  return b.prim(body, p, r, std::move(args));
}

/// Five elementwise ops over four int inputs, one result: fusion makes them one kernel.
inline Chain five_op_chain(lang::TypeContext& T) {
  return Chain{{T.int_(), T.int_(), T.int_(), T.int_()}, [&T](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                 VarId s = prim(b, body, PrimId::Add, T.int_(), {in[0], in[1]});
                 VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, in[2]});
                 VarId d = prim(b, body, PrimId::Sub, T.int_(), {m, in[3]});
                 VarId g = prim(b, body, PrimId::Negate, T.int_(), {d});
                 return std::vector<VarId>{prim(b, body, PrimId::Lt, T.bool_(), {g, in[0]})};
               }};
}

/// Scalar literals read by elementwise ops (2.5, NaN and max_int beside inputs; 6 and 7 alone):
/// fusion makes two kernels and the literals only they read their constants.
inline Chain literal_chain(lang::TypeContext& T) {
  return Chain{{T.float_(), T.int_()}, [&T](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                 VarId n = b.host();
                 b.emit(body, Op::Length, n, {in[0]});
                 VarId k = b.lit(body, T.float_(), F(2.5), n);
                 VarId nan = b.lit(body, T.float_(), F(std::numeric_limits<double>::quiet_NaN()), n);
                 VarId big = b.lit(body, T.int_(), I(std::numeric_limits<int64_t>::max()), n);
                 VarId m = prim(b, body, PrimId::Mul, T.float_(), {in[0], k});
                 VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {m, nan});
                 VarId s0 = prim(b, body, PrimId::Add, T.int_(), {in[1], big});
                 VarId s = prim(b, body, PrimId::Select, T.int_(), {lt, s0, in[1]});
                 // Only literals: the kernel keeps them as inputs (its n comes from them).
                 VarId l1 = b.lit(body, T.int_(), I(6), n);
                 VarId l2 = b.lit(body, T.int_(), I(7), n);
                 VarId p = prim(b, body, PrimId::Mul, T.int_(), {l1, l2});
                 VarId q = prim(b, body, PrimId::Negate, T.int_(), {p});
                 return std::vector<VarId>{m, lt, s, q, k};
               }};
}

/// A chain whose values are read after it: s by a division, sel by a nested block, m only
/// inside. On x = 1 2 3, y = 4 5 6 the function's result is -s = -5 -7 -9.
struct ReadAfterGroup {
  flatten::Function fn;
  VarId s, sel;
};

inline ReadAfterGroup read_after_group(lang::TypeContext& T) {
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId x = b.instances(body, T.seq(T.int_()), ints({1, 2, 3}));
  VarId y = b.instances(body, T.seq(T.int_()), ints({4, 5, 6}));
  VarId s = prim(b, body, PrimId::Add, T.int_(), {x, y});
  VarId m = prim(b, body, PrimId::Mul, T.int_(), {s, y});
  VarId g = prim(b, body, PrimId::Gt, T.bool_(), {m, x});
  VarId sel = prim(b, body, PrimId::Select, T.int_(), {g, s, x});
  VarId q = b.vec(T.pair(T.int_(), T.int_()));  // reads s after the group
  b.emit(body, Op::Tuple, q, {s, y});
  VarId c = b.host();
  b.emit(body, Op::Length, c, {q});
  VarId r = b.vec(T.int_());
  Stmt& iff = b.emit(body, Op::IfNonEmpty, r, {c});
  iff.then_block = std::make_unique<Block>();
  iff.else_block = std::make_unique<Block>();
  VarId inner = b.prim(*iff.then_block, PrimId::Negate, T.int_(), {sel});
  iff.then_block->result = inner;
  iff.else_block->result = sel;
  VarId w = b.wrap(body, T, r, 3);
  b.fn.result_type = T.seq(T.int_());
  body.result = w;
  return ReadAfterGroup{std::move(b.fn), s, sel};
}

}  // namespace ndp::test::flat_ir
