// Kernel statements on the cpu executor: the interpretive loop over a kernel's nodes gives the
// unfused primitives' results for every fusable op and type, and keeps uniform inputs uniform.
#include <doctest/doctest.h>

#include <vector>

#include "exec/cpu/kernels.h"
#include "flatten/passes/fuse_elementwise.h"
#include "tests/unit/exec/exec_helpers.h"
#include "tests/unit/flatten/passes/elementwise_chains.h"

using namespace ndp;
using namespace ndp::test::exec_test;

namespace {

/// Runs the chain unfused and fused on the same inputs; both must agree exactly (NaN = NaN).
/// Returns the number of kernels fusion made.
size_t check_chain(const Chain& c, size_t n, uint64_t seed) {
  ExecFixture fx;
  flatten::Program plain = program_of(make_function(fx.T, c, n, seed));
  flatten::Program fused = flatten::fuse_elementwise(program_of(make_function(fx.T, c, n, seed)));
  auto problems = flatten::verify(fused);
  CHECK_MESSAGE(problems.empty(), (problems.empty() ? "" : problems[0]) << "\n" << flatten::print_program(fused));
  auto a = fx.run(plain);
  auto b = fx.run(fused);
  REQUIRE(a.ok);
  REQUIRE(b.ok);
  CHECK_MESSAGE(close_values(a.value, b.value, 0), "n = " << n);
  return stmts_of(fused.functions[0].body, Op::Kernel).size();
}

}  // namespace

TEST_CASE("exec: a kernel of uniform inputs gives uniform outputs") {
  lang::core::Program prog;
  auto& T = prog.types;
  // out0 = in0 < in1, out1 = in0 + in1.
  flatten::KernelBody k;
  k.inputs = {T.int_(), T.int_()};
  flatten::KernelNode a, b, lt, add;
  a.kind = b.kind = flatten::KernelNode::Kind::Input;
  a.type = b.type = T.int_();
  b.input = 1;
  lt.kind = add.kind = flatten::KernelNode::Kind::Prim;
  lt.prim = PrimId::Lt;
  lt.type = T.bool_();
  add.prim = PrimId::Add;
  add.type = T.int_();
  lt.args = add.args = {0, 1};
  k.nodes = {a, b, lt, add};
  k.outputs = {2, 3};
  const Type* outs[2] = {T.bool_(), T.int_()};
  for (int64_t n : {int64_t{2}, int64_t{100000}}) {
    CAPTURE(n);
    Vec x = exec::host::broadcast_first(exec::host::from_values(T, T.int_(), std::vector<Value>{I(3)}), n);
    Vec y = exec::host::broadcast_first(exec::host::from_values(T, T.int_(), std::vector<Value>{I(5)}), n);
    Vec ins[2] = {x, y};
    auto r = exec::cpu::run_kernel(k, ins, outs);
    REQUIRE(r.size() == 2);
    CHECK(r[0].is_uniform());
    CHECK(r[0].uniform_value<bool>() == true);
    CHECK(r[1].is_uniform());
    CHECK(r[1].data<int64_t>()[n - 1] == 8);
    // One input per instance: per instance as usual.
    std::vector<Value> ys;
    for (int64_t i = 0; i < n; ++i) ys.push_back(I(i));
    Vec mixed[2] = {x, exec::host::from_values(T, T.int_(), ys)};
    auto m = exec::cpu::run_kernel(k, mixed, outs);
    CHECK(!m[1].is_uniform());
    CHECK(m[1].data<int64_t>()[n - 1] == n + 2);
    CHECK(m[0].data<bool>()[0] == false);
  }
}

TEST_CASE("kernels: results equal unfused execution for every fusable op and type") {
  ExecFixture fx;
  auto& T = fx.T;
  std::vector<Chain> chains;
  // int: wrap-around arithmetic, logic, comparisons, select, conversions.
  chains.push_back({{T.int_(), T.int_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.int_();
                      VarId s = prim(b, body, PrimId::Add, t, {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, t, {s, in[2]});
                      VarId d = prim(b, body, PrimId::Sub, t, {m, in[0]});
                      VarId ng = prim(b, body, PrimId::Negate, t, {d});
                      VarId o = prim(b, body, PrimId::Or, t, {ng, in[1]});
                      VarId a = prim(b, body, PrimId::And, t, {o, in[2]});
                      VarId x = prim(b, body, PrimId::Xor, t, {a, m});
                      VarId no = prim(b, body, PrimId::Nor, t, {x, in[0]});
                      VarId na = prim(b, body, PrimId::Nand, t, {no, s});
                      VarId nt = prim(b, body, PrimId::Not, t, {na});
                      std::vector<VarId> r{nt};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        VarId cmp = prim(b, body, c, T.bool_(), {m, in[0]});
                        r.push_back(prim(b, body, PrimId::Select, t, {cmp, s, nt}));
                      }
                      VarId cmp = prim(b, body, PrimId::Lt, T.bool_(), {in[0], in[1]});
                      r.push_back(prim(b, body, PrimId::Btoi, t, {cmp}));
                      r.push_back(prim(b, body, PrimId::ToFloat, T.float_(), {m}));
                      r.push_back(prim(b, body, PrimId::ToI32, T.i32(), {m}));
                      r.push_back(prim(b, body, PrimId::ToF32, T.f32(), {m}));
                      r.push_back(prim(b, body, PrimId::ToF64, T.float_(), {d}));
                      r.push_back(prim(b, body, PrimId::ToI64, t, {d}));
                      return r;
                    }});
  // float: IEEE arithmetic, NaN/inf comparisons, conversions.
  chains.push_back({{T.float_(), T.float_(), T.float_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.float_();
                      VarId s = prim(b, body, PrimId::Add, t, {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, t, {s, in[2]});
                      VarId d = prim(b, body, PrimId::Sub, t, {m, in[0]});
                      VarId q = prim(b, body, PrimId::Div, t, {d, in[1]});
                      VarId ng = prim(b, body, PrimId::Negate, t, {q});
                      std::vector<VarId> r{ng};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        r.push_back(prim(b, body, c, T.bool_(), {in[0], in[1]}));
                        VarId cmp = prim(b, body, c, T.bool_(), {q, in[2]});
                        r.push_back(prim(b, body, PrimId::Select, t, {cmp, ng, in[0]}));
                      }
                      r.push_back(prim(b, body, PrimId::ToF32, T.f32(), {q}));
                      r.push_back(prim(b, body, PrimId::ToF64, t, {q}));
                      return r;
                    }});
  // bool logic and comparisons; char codes and comparisons.
  chains.push_back({{T.bool_(), T.bool_(), T.char_(), T.char_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      auto* t = T.bool_();
                      VarId o = prim(b, body, PrimId::Or, t, {in[0], in[1]});
                      VarId a = prim(b, body, PrimId::And, t, {o, in[1]});
                      VarId x = prim(b, body, PrimId::Xor, t, {a, in[0]});
                      VarId no = prim(b, body, PrimId::Nor, t, {x, in[1]});
                      VarId na = prim(b, body, PrimId::Nand, t, {no, o});
                      VarId nt = prim(b, body, PrimId::Not, t, {na});
                      std::vector<VarId> r{nt};
                      for (PrimId c : {PrimId::Eq, PrimId::Ne, PrimId::Lt, PrimId::Gt, PrimId::Le, PrimId::Ge}) {
                        r.push_back(prim(b, body, c, t, {nt, in[1]}));
                        VarId cc = prim(b, body, c, t, {in[2], in[3]});
                        r.push_back(prim(b, body, PrimId::Select, T.char_(), {cc, in[2], in[3]}));
                      }
                      VarId code = prim(b, body, PrimId::CharCode, T.int_(), {in[2]});
                      r.push_back(prim(b, body, PrimId::Add, T.int_(), {code, code}));
                      return r;
                    }});
  // i32 and f32: 32-bit wrap-around and single-precision rounding.
  chains.push_back({{T.i32(), T.i32(), T.f32(), T.f32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
                      VarId s = prim(b, body, PrimId::Add, T.i32(), {in[0], in[1]});
                      VarId m = prim(b, body, PrimId::Mul, T.i32(), {s, in[1]});
                      VarId ng = prim(b, body, PrimId::Negate, T.i32(), {m});
                      VarId fs = prim(b, body, PrimId::Add, T.f32(), {in[2], in[3]});
                      VarId fm = prim(b, body, PrimId::Mul, T.f32(), {fs, in[3]});
                      VarId fq = prim(b, body, PrimId::Div, T.f32(), {fm, in[2]});
                      VarId cf = prim(b, body, PrimId::ToF32, T.f32(), {ng});
                      VarId sum = prim(b, body, PrimId::Sub, T.f32(), {fq, cf});
                      VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {sum, in[2]});
                      return std::vector<VarId>{ng, prim(b, body, PrimId::ToI64, T.int_(), {m}),
                                                prim(b, body, PrimId::ToF64, T.float_(), {sum}),
                                                prim(b, body, PrimId::Select, T.i32(), {lt, m, s}),
                                                prim(b, body, PrimId::Ge, T.bool_(), {in[0], in[1]})};
                    }});
  // 0 and 1 instances, a small context, and one large enough to take the compiled path and
  // several parallel chunks.
  for (size_t ci = 0; ci < chains.size(); ++ci)
    for (size_t n : {size_t{0}, size_t{1}, size_t{17}, size_t{70001}}) {
      INFO("chain " << ci << ", n = " << n);
      CHECK(check_chain(chains[ci], n, ci * 100 + n) >= 1);
    }
}

// The examples of flatten/passes/test_fuse_elementwise.cpp, run: what the pass made of them
// gives the unfused results.
TEST_CASE("kernels: the fusion pass's examples give the unfused results") {
  ExecFixture fx;
  auto& T = fx.T;
  Chain five = five_op_chain(T);
  for (size_t n : {0, 1, 5, 1000, 40000}) CHECK(check_chain(five, n, n + 3) == 1);
  Chain literals = literal_chain(T);
  for (size_t n : {size_t{0}, size_t{5}, size_t{50000}}) CHECK(check_chain(literals, n, n + 11) == 2);
  flatten::Program p = flatten::fuse_elementwise(program_of(read_after_group(T).fn));
  REQUIRE(stmts_of(p.functions[0].body, Op::Kernel).size() == 1);
  auto res = fx.run(p);
  REQUIRE(res.ok);
  // s = 5 7 9; m = 20 35 54; m > x everywhere: sel = s; result = -s.
  CHECK(lang::values_equal(res.value, ints({-5, -7, -9})));
}
