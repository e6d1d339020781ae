// The host code of kernel bodies (ORC JIT): bit for bit the interpretive loop's results, and the
// interpreter's for the checked integer operations.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "codegen/kernel_jit.h"
#include "exec/cpu/kernels.h"
#include "lang/eval/prim_call.h"
#include "tests/unit/codegen/kernel_bodies.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("kernels: compiled code equals the interpretive loop, bit for bit") {
  lang::TypeContext T;
  Chain c{{T.int_(), T.float_(), T.float_(), T.i32()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId fi = prim(b, body, PrimId::ToFloat, T.float_(), {in[0]});
            VarId s = prim(b, body, PrimId::Add, T.float_(), {fi, in[1]});
            VarId q = prim(b, body, PrimId::Div, T.float_(), {s, in[2]});
            VarId lt = prim(b, body, PrimId::Lt, T.bool_(), {q, in[1]});
            VarId ne = prim(b, body, PrimId::Ne, T.bool_(), {q, q});  // NaN test
            VarId o = prim(b, body, PrimId::Or, T.bool_(), {lt, ne});
            VarId w = prim(b, body, PrimId::Mul, T.int_(), {in[0], in[0]});
            VarId i3 = prim(b, body, PrimId::ToI64, T.int_(), {in[3]});
            VarId sel = prim(b, body, PrimId::Select, T.int_(), {o, w, i3});
            return std::vector<VarId>{sel, o, q};
          }};
  codegen::HostKernelCompiler compiler;
  for (size_t n : {size_t{0}, size_t{3}, size_t{1000}, size_t{100003}}) {
    BodyCase bc = kernel_of(T, c, n, n);
    const flatten::KernelBody& k = *bc.body;
    REQUIRE(k.outputs.size() == 3);
    std::vector<const void*> in;
    for (const Vec& v : bc.ins) in.push_back(v.buffer().get());
    std::vector<std::vector<uint64_t>> ra(3, std::vector<uint64_t>(n + 1)), rb(3, std::vector<uint64_t>(n + 1));
    std::vector<void*> oa, ob;
    for (size_t o = 0; o < 3; ++o) {
      oa.push_back(ra[o].data());
      ob.push_back(rb[o].data());
    }
    exec::cpu::interpret_kernel(k, 0, static_cast<int64_t>(n), in.data(), oa.data());
    flatten::HostKernelFn fn = compiler.compile(k);
    REQUIRE(static_cast<bool>(fn));
    exec::cpu::run_chunks(fn, static_cast<int64_t>(n), in.data(), ob.data());
    CHECK(ra == rb);
  }
  CHECK(compiler.compiled() == 1);  // one body, compiled once (cached by its key)
}

// Integer /, rem and the shifts, which the cuda backend runs as one-node kernels after a check
// kernel has excluded the failing operands: the generated code must give the interpreter's
// results for every operand pair the check lets through (min_int / -1 wraps, rem(x, -1) = 0).
TEST_CASE("kernels: checked integer division, rem and shifts equal the interpreter") {
  lang::TypeContext T;
  const lang::Type* I = T.int_();
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> xs = {0, 1, -1, 7, -7, 13, -13, kMin, kMax, kMin + 1, 1000000007, -99};
  codegen::HostKernelCompiler compiler;
  for (lang::core::PrimId p : {lang::core::PrimId::Div, lang::core::PrimId::Rem, lang::core::PrimId::Lshift,
                               lang::core::PrimId::Rshift}) {
    bool shift = p == lang::core::PrimId::Lshift || p == lang::core::PrimId::Rshift;
    std::vector<int64_t> a, b;
    for (int64_t x : xs)
      for (int64_t y : shift ? std::vector<int64_t>{0, 1, 5, 31, 32, 63} : xs)
        if (y != 0 || shift) {
          a.push_back(x);
          b.push_back(y);
        }
    REQUIRE(flatten::kernel_prim_checked_ok(p, {I, I}, I));
    flatten::HostKernelFn fn = compiler.compile(flatten::one_node_kernel(p, {I, I}, I));
    REQUIRE(static_cast<bool>(fn));
    std::vector<int64_t> out(a.size());
    const void* ins[2] = {a.data(), b.data()};
    void* outs[1] = {out.data()};
    flatten::call_host_kernel(fn, 0, static_cast<int64_t>(a.size()), ins, outs);
    lang::eval::PrimEnv env;
    env.types = &T;
    std::vector<const lang::Type*> targs;
    lang::eval::PrimCall call{p, lang::Span{}, &targs, nullptr, &env};
    for (size_t i = 0; i < a.size(); ++i) {
      lang::Value args[2] = {lang::Value::int_(a[i]), lang::Value::int_(b[i])};
      CAPTURE(static_cast<int>(p));
      CAPTURE(a[i]);
      CAPTURE(b[i]);
      CHECK(out[i] == lang::eval::apply_prim(call, args).as_int());
    }
  }
  // i32 division, min_int32 / -1 included.
  const lang::Type* I32 = T.i32();
  REQUIRE(flatten::kernel_prim_checked_ok(lang::core::PrimId::Div, {I32, I32}, I32));
  flatten::HostKernelFn div32 = compiler.compile(flatten::one_node_kernel(lang::core::PrimId::Div, {I32, I32}, I32));
  REQUIRE(static_cast<bool>(div32));
  const int32_t m32 = std::numeric_limits<int32_t>::min();
  std::vector<int32_t> a32, b32;
  for (int32_t x : {0, 1, -1, 7, -7, m32, m32 + 1, std::numeric_limits<int32_t>::max()})
    for (int32_t y : {1, -1, 2, -3, m32}) {
      a32.push_back(x);
      b32.push_back(y);
    }
  std::vector<int32_t> out32(a32.size());
  const void* ins32[2] = {a32.data(), b32.data()};
  void* outs32[1] = {out32.data()};
  flatten::call_host_kernel(div32, 0, static_cast<int64_t>(a32.size()), ins32, outs32);
  lang::eval::PrimEnv env;
  env.types = &T;
  std::vector<const lang::Type*> targs;
  lang::eval::PrimCall call{lang::core::PrimId::Div, lang::Span{}, &targs, nullptr, &env};
  for (size_t i = 0; i < a32.size(); ++i) {
    lang::Value args[2] = {lang::Value::i32(a32[i]), lang::Value::i32(b32[i])};
    CAPTURE(a32[i]);
    CAPTURE(b32[i]);
    CHECK(out32[i] == lang::eval::apply_prim(call, args).as_i32());
  }
}

