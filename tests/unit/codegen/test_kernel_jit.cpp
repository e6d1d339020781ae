// The host code of kernel bodies (ORC JIT): bit for bit the interpretive loop's results, and the
// interpreter's for the operations that can fail and the math functions.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "codegen/kernel_jit.h"
#include "exec/cpu/kernels.h"
#include "flatten/kernel_abi.h"
#include "flatten/passes/fuse_elementwise.h"
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

// Every primitive a kernel may hold that can fail, and every math function, as a one-node
// kernel, compiled and interpreted: each instance the interpreter computes gets its value bit for
// bit (the host calls the same C library), and the failure record names the first instance the
// interpreter fails on (Note [Kernels that can fail]).
namespace {

struct OneNodeCase {
  PrimId prim;
  std::vector<const lang::Type*> args;
  const lang::Type* result;
  std::vector<std::vector<lang::Value>> instances;  // each instance's arguments
};

/// The raw storage of values of a flat scalar type.
std::vector<uint64_t> store(const lang::Type* t, const std::vector<lang::Value>& vs) {
  std::vector<uint64_t> words(vs.size() + 1);
  exec::host::with_scalar(t->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = reinterpret_cast<T*>(words.data());
    for (size_t i = 0; i < vs.size(); ++i) {
      const lang::Value& v = vs[i];
      if constexpr (std::is_same_v<T, double>) p[i] = v.as_float();
      else if constexpr (std::is_same_v<T, float>) p[i] = v.as_f32();
      else if constexpr (std::is_same_v<T, bool>) p[i] = v.as_bool();
      else if constexpr (std::is_same_v<T, uint8_t>) p[i] = v.as_char();
      else if constexpr (std::is_same_v<T, int32_t>) p[i] = v.as_i32();
      else p[i] = v.as_int();
    }
  });
  return words;
}

/// Value i of raw storage, bit for bit comparable (NaNs compare equal to NaNs of the same bits).
std::vector<uint8_t> bytes_of(const lang::Type* t, const std::vector<uint64_t>& words, size_t i) {
  size_t w = exec::host::storage_width(t->kind);
  const auto* p = reinterpret_cast<const uint8_t*>(words.data()) + i * w;
  return std::vector<uint8_t>(p, p + w);
}

}  // namespace

TEST_CASE("kernels: primitives that can fail and math functions equal the interpreter, failures included") {
  lang::TypeContext T;
  const lang::Type *I = T.int_(), *F = T.float_(), *I32 = T.i32(), *F32 = T.f32(), *C = T.char_();
  const int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  auto ints = [](std::vector<int64_t> xs) {
    std::vector<lang::Value> v;
    for (int64_t x : xs) v.push_back(lang::Value::int_(x));
    return v;
  };
  auto floats = [](std::vector<double> xs) {
    std::vector<lang::Value> v;
    for (double x : xs) v.push_back(lang::Value::float_(x));
    return v;
  };
  auto pairs = [](const std::vector<lang::Value>& xs, const std::vector<lang::Value>& ys) {
    std::vector<std::vector<lang::Value>> out;
    for (const lang::Value& x : xs)
      for (const lang::Value& y : ys) out.push_back({x, y});
    return out;
  };
  auto singles = [](const std::vector<lang::Value>& xs) {
    std::vector<std::vector<lang::Value>> out;
    for (const lang::Value& x : xs) out.push_back({x});
    return out;
  };
  std::vector<lang::Value> some_ints = ints({0, 1, -1, 7, -7, 13, kMin, kMax, kMin + 1, 1000000007});
  std::vector<lang::Value> counts = ints({1, 0, 5, 63, 64, -1, 31});
  std::vector<lang::Value> some_floats = floats({0.5, 0.0, -0.0, 1.0, -0.5, 2.5, -3.25, 1e300, -1e19, 1e19, 7.75e18, nan, inf, -inf, 1e-310});
  std::vector<lang::Value> i32s = {lang::Value::i32(7), lang::Value::i32(0), lang::Value::i32(-1),
                                   lang::Value::i32(std::numeric_limits<int32_t>::min()), lang::Value::i32(3)};
  std::vector<lang::Value> f32s = {lang::Value::f32(1.5f), lang::Value::f32(-2.5f), lang::Value::f32(3e9f),
                                   lang::Value::f32(-3e9f), lang::Value::f32(0.0f), lang::Value::f32(1e20f)};
  std::vector<lang::Value> powers = ints({2, 0, 1, 3, 7, 10, -1, 62});
  std::vector<OneNodeCase> cases = {
      {PrimId::Div, {I, I}, I, pairs(some_ints, some_ints)},
      {PrimId::Rem, {I, I}, I, pairs(some_ints, some_ints)},
      {PrimId::Lshift, {I, I}, I, pairs(some_ints, counts)},
      {PrimId::Rshift, {I, I}, I, pairs(some_ints, counts)},
      {PrimId::Div, {I32, I32}, I32, pairs(i32s, i32s)},
      {PrimId::Power, {I, I}, I, pairs(some_ints, powers)},
      {PrimId::Power, {F, I}, F, pairs(some_floats, powers)},
      {PrimId::Power, {I32, I}, I32, pairs(i32s, powers)},
      {PrimId::Power, {F32, I}, F32, pairs(f32s, powers)},
      {PrimId::Expt, {F, F}, F, pairs(some_floats, floats({0.5, 2.0, -1.0, 0.0, nan}))},
      {PrimId::CodeChar, {I}, C, singles(ints({65, 0, 255, 256, -1, kMin}))},
      {PrimId::ToI64, {F}, I, singles(some_floats)},
      {PrimId::ToI32, {F}, I32, singles(some_floats)},
      {PrimId::ToI64, {F32}, I, singles(f32s)},
      {PrimId::ToI32, {F32}, I32, singles(f32s)},
      {PrimId::Hash, {I, I}, I, pairs(some_ints, ints({7, 1, 1000003, 0, -3}))},
      {PrimId::Hash, {F, I}, I, pairs(some_floats, ints({7, 1000003, 0}))},
      {PrimId::Hash, {I32, I}, I, pairs(i32s, ints({5, -1}))},
      {PrimId::Hash, {F32, I}, I, pairs(f32s, ints({5, 0}))},
      {PrimId::Hash, {T.bool_(), I}, I, pairs({lang::Value::bool_(true), lang::Value::bool_(false)}, ints({3, 0}))},
      {PrimId::Hash, {C, I}, I, pairs({lang::Value::char_('a'), lang::Value::char_(200)}, ints({11, -2}))},
      {PrimId::Eql, {F, F}, T.bool_(), pairs(some_floats, some_floats)},
      {PrimId::Eql, {I, I}, T.bool_(), pairs(some_ints, some_ints)},
  };
  for (PrimId p : {PrimId::Sqrt, PrimId::Ln, PrimId::Exp, PrimId::Sin, PrimId::Cos, PrimId::Tan, PrimId::Asin,
                   PrimId::Acos, PrimId::Atan, PrimId::Sinh, PrimId::Cosh, PrimId::Tanh})
    cases.push_back({p, {F}, F, singles(some_floats)});
  for (PrimId p : {PrimId::Ceil, PrimId::Floor, PrimId::Trunc, PrimId::Round}) cases.push_back({p, {F}, I, singles(some_floats)});

  codegen::HostKernelCompiler compiler;
  lang::eval::PrimEnv env;
  env.types = &T;
  std::vector<const lang::Type*> targs;
  for (const OneNodeCase& c : cases) {
    CAPTURE(lang::core::prim_info(c.prim).name);
    REQUIRE((flatten::kernel_prim_ok(c.prim, c.args, c.result) || flatten::kernel_prim_fallible(c.prim, c.args, c.result)));
    flatten::KernelBody k = flatten::one_node_kernel(c.prim, c.args, c.result);
    const size_t n = c.instances.size();
    std::vector<std::vector<uint64_t>> in_words;
    std::vector<const void*> ins;
    for (size_t j = 0; j < c.args.size(); ++j) {
      std::vector<lang::Value> column;
      for (const auto& inst : c.instances) column.push_back(inst[j]);
      in_words.push_back(store(c.args[j], column));
    }
    for (const auto& w : in_words) ins.push_back(w.data());
    // The interpreter's value of each instance, or its failure.
    lang::eval::PrimCall call{c.prim, lang::Span{}, &targs, nullptr, &env};
    std::vector<std::optional<lang::Value>> expect;
    int64_t first_failure = -1;
    for (size_t i = 0; i < n; ++i) {
      try {
        expect.push_back(lang::eval::apply_prim(call, c.instances[i].data()));
      } catch (const lang::eval::EvalError&) {
        expect.push_back(std::nullopt);
        if (first_failure < 0) first_failure = static_cast<int64_t>(i);
      }
    }
    CHECK((first_failure >= 0) == k.can_fail());  // every case has a failing instance where it can fail
    flatten::HostKernelFn fn = compiler.compile(k);
    REQUIRE(static_cast<bool>(fn));
    for (bool compiled : {true, false}) {
      CAPTURE(compiled);
      std::vector<uint64_t> out(n + 1);
      uint64_t record = flatten::kNoKernelFailure;
      void* outs[2] = {out.data(), &record};
      if (compiled) flatten::call_host_kernel(fn, 0, static_cast<int64_t>(n), ins.data(), outs);
      else exec::cpu::interpret_kernel(k, 0, static_cast<int64_t>(n), ins.data(), outs);
      if (first_failure >= 0) {
        CHECK(record == flatten::kernel_failure_record(c.args.size(), static_cast<uint64_t>(first_failure)));
      } else {
        CHECK(record == flatten::kNoKernelFailure);
      }
      for (size_t i = 0; i < n; ++i) {
        if (!expect[i]) continue;
        CAPTURE(i);
        CHECK(bytes_of(c.result, out, i) == bytes_of(c.result, store(c.result, {*expect[i]}), 0));
      }
    }
  }
}

// Strided inputs (flatten/kernel_abi.h): input j of instance i read at (i / c)·stride + offset +
// i % c, the numbers after the inputs; from any begin (a chunk that starts inside a row).
TEST_CASE("kernels: strided inputs read their rows where they are") {
  lang::TypeContext T;
  Chain c{{T.int_(), T.int_()}, [&](FnBuilder& b, Block& body, const std::vector<VarId>& in) {
            VarId d = prim(b, body, PrimId::Sub, T.int_(), {in[0], in[1]});
            VarId r = prim(b, body, PrimId::Mul, T.int_(), {d, in[0]});
            return std::vector<VarId>{r};
          }};
  codegen::HostKernelCompiler compiler;
  // A source of 40 rows of 3 in pairs (the halves of 20 instances): x the first of each pair,
  // y the second, as elt(halves, 0) and elt(halves, 1) of a regular nested vector.
  const int64_t c3 = 3, n = 60;
  std::vector<int64_t> source(120);
  for (size_t p = 0; p < source.size(); ++p) source[p] = static_cast<int64_t>((p * 37) % 101);
  BodyCase bc = kernel_of(T, c, static_cast<size_t>(n), static_cast<size_t>(n));
  const flatten::KernelBody& k = *bc.body;
  REQUIRE(k.inputs.size() == 2);
  for (uint64_t mask : {uint64_t{1}, uint64_t{3}}) {
    CAPTURE(mask);
    flatten::HostKernelFn fn = compiler.compile(k, mask);
    REQUIRE(static_cast<bool>(fn));
    // y: strided too where the mask says, else a copy of its elements.
    std::vector<int64_t> y_copy(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) y_copy[static_cast<size_t>(i)] = source[static_cast<size_t>((i / c3) * 2 * c3 + c3 + i % c3)];
    std::vector<const void*> in{source.data(), mask & 2 ? static_cast<const void*>(source.data()) : y_copy.data()};
    for (int64_t x : {c3, 2 * c3, int64_t{0}}) in.push_back(reinterpret_cast<const void*>(static_cast<intptr_t>(x)));
    if (mask & 2)
      for (int64_t x : {c3, 2 * c3, c3}) in.push_back(reinterpret_cast<const void*>(static_cast<intptr_t>(x)));
    std::vector<int64_t> r(static_cast<size_t>(n), -1);
    void* outs[] = {r.data()};
    for (int64_t begin : {int64_t{0}, int64_t{4}}) {  // a start inside a row
      flatten::call_host_kernel(fn, begin, n, in.data(), outs);
      for (int64_t i = begin; i < n; ++i) {
        const int64_t x = source[static_cast<size_t>((i / c3) * 2 * c3 + i % c3)], y = y_copy[static_cast<size_t>(i)];
        CHECK(r[static_cast<size_t>(i)] == (x - y) * x);
      }
    }
  }
  CHECK(compiler.compiled() == 2);  // a kernel a mask
}
