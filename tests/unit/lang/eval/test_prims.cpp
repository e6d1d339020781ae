// Every native primitive on the reference interpreter: library.md's examples and edge cases.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "tests/unit/lang/eval/core_builder.h"

using namespace ndp::lang;
using namespace ndp::test;
using core::PrimId;

namespace {

constexpr int64_t kMinInt = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
const double kInf = std::numeric_limits<double>::infinity();

struct P {
  CoreBuilder b;
  TypeContext& T = b.prog.types;

  Value ok(PrimId p, std::vector<Value> args, std::vector<const Type*> targs = {}) {
    auto r = b.apply(p, std::move(args), std::move(targs));
    if (!r.ok) FAIL("unexpected runtime error: " << r.error.message);
    return r.value;
  }
  std::string err(PrimId p, std::vector<Value> args, std::vector<const Type*> targs = {}) {
    auto r = b.apply(p, std::move(args), std::move(targs));
    if (r.ok) FAIL("expected a runtime error");
    return r.error.message;
  }
  int64_t i(PrimId p, std::vector<Value> args) { return ok(p, std::move(args)).as_int(); }
  double f(PrimId p, std::vector<Value> args) { return ok(p, std::move(args)).as_float(); }
};

Value I(int64_t x) { return Value::int_(x); }
Value F(double x) { return Value::float_(x); }
Value B(bool x) { return Value::bool_(x); }
Value C(char x) { return Value::char_(static_cast<uint8_t>(x)); }
Value S(std::string_view s) { return Value::string(s); }
Value pairs(std::vector<std::pair<int64_t, int64_t>> xs) {
  std::vector<Value> v;
  for (auto [a, b] : xs) v.push_back(Value::pair(I(a), I(b)));
  return Value::seq(std::move(v));
}

}  // namespace

TEST_CASE("logical operators: bool and bitwise int") {
  P t;
  CHECK(t.i(PrimId::Not, {I(5)}) == -6);
  CHECK(t.ok(PrimId::Not, {B(true)}).as_bool() == false);
  CHECK(t.i(PrimId::Xor, {I(5), I(3)}) == 6);
  CHECK(t.i(PrimId::And, {I(5), I(3)}) == 1);
  CHECK(t.i(PrimId::Or, {I(5), I(3)}) == 7);
  CHECK(t.i(PrimId::Nor, {I(5), I(3)}) == -8);
  CHECK(t.i(PrimId::Nand, {I(5), I(3)}) == -2);
  CHECK(t.ok(PrimId::Nor, {B(true), B(false)}).as_bool() == false);
  CHECK(t.ok(PrimId::Nand, {B(true), B(false)}).as_bool() == true);
  CHECK(t.ok(PrimId::Xor, {B(true), B(true)}).as_bool() == false);
  CHECK(t.ok(PrimId::Xor, {Value::i32(5), Value::i32(3)}).as_i32() == 6);
}

TEST_CASE("comparisons: int, float, char; NaN compares false") {
  P t;
  CHECK(t.ok(PrimId::Lt, {C('a'), C('b')}).as_bool());
  CHECK(t.ok(PrimId::Ge, {I(3), I(3)}).as_bool());
  CHECK_FALSE(t.ok(PrimId::Gt, {F(-0.0), F(0.0)}).as_bool());
  CHECK(t.ok(PrimId::Eq, {F(-0.0), F(0.0)}).as_bool());
  double nan = std::nan("");
  CHECK_FALSE(t.ok(PrimId::Eq, {F(nan), F(nan)}).as_bool());
  CHECK(t.ok(PrimId::Ne, {F(nan), F(nan)}).as_bool());
  CHECK(t.ok(PrimId::Le, {Value::f32(1.5f), Value::f32(2.0f)}).as_bool());
}

TEST_CASE("int arithmetic wraps; division truncates; min_int / -1; zero divisors") {
  P t;
  CHECK(t.i(PrimId::Add, {I(kMaxInt), I(1)}) == kMinInt);
  CHECK(t.i(PrimId::Sub, {I(kMinInt), I(1)}) == kMaxInt);
  CHECK(t.i(PrimId::Mul, {I(100000), I(100000)}) == 10000000000);
  CHECK(t.i(PrimId::Mul, {I(kMaxInt), I(2)}) == -2);
  CHECK(t.i(PrimId::Negate, {I(kMinInt)}) == kMinInt);
  CHECK(t.i(PrimId::Div, {I(7), I(-2)}) == -3);
  CHECK(t.i(PrimId::Div, {I(-7), I(2)}) == -3);
  CHECK(t.i(PrimId::Div, {I(kMinInt), I(-1)}) == kMinInt);
  CHECK(t.err(PrimId::Div, {I(1), I(0)}) == "Divide by zero.");
  CHECK(t.i(PrimId::Rem, {I(-5), I(3)}) == -2);
  CHECK(t.i(PrimId::Rem, {I(-7), I(2)}) == -1);
  CHECK(t.i(PrimId::Rem, {I(kMinInt), I(-1)}) == 0);
  CHECK(t.err(PrimId::Rem, {I(5), I(0)}) == "Divide by zero in function REM.");
}

TEST_CASE("i32 and f32 arithmetic") {
  P t;
  CHECK(t.ok(PrimId::Add, {Value::i32(2147483647), Value::i32(1)}).as_i32() == -2147483648);
  CHECK(t.ok(PrimId::Mul, {Value::i32(65536), Value::i32(65536)}).as_i32() == 0);
  CHECK(t.ok(PrimId::Div, {Value::i32(-2147483647 - 1), Value::i32(-1)}).as_i32() == -2147483647 - 1);
  CHECK(t.err(PrimId::Div, {Value::i32(1), Value::i32(0)}) == "Divide by zero.");
  CHECK(t.ok(PrimId::Negate, {Value::i32(-2147483647 - 1)}).as_i32() == -2147483647 - 1);
  Value s = t.ok(PrimId::Add, {Value::f32(0.1f), Value::f32(0.2f)});
  CHECK(s.kind() == ValueKind::F32);
  CHECK(s.as_f32() == 0.1f + 0.2f);
  CHECK(t.ok(PrimId::Power, {Value::i32(2), I(31)}).as_i32() == -2147483647 - 1);
  CHECK(t.ok(PrimId::Power, {Value::f32(1.5f), I(2)}).as_f32() == 2.25f);
}

TEST_CASE("float arithmetic is IEEE") {
  P t;
  CHECK(t.f(PrimId::Div, {F(1.0), F(0.0)}) == kInf);
  CHECK(std::isnan(t.f(PrimId::Div, {F(0.0), F(0.0)})));
  CHECK(t.f(PrimId::Negate, {F(2.5)}) == -2.5);
  CHECK(t.f(PrimId::Add, {F(0.1), F(0.2)}) == 0.1 + 0.2);
}

TEST_CASE("power: repeated squaring, wrap, negative power error") {
  P t;
  CHECK(t.i(PrimId::Power, {I(2), I(10)}) == 1024);
  CHECK(t.i(PrimId::Power, {I(2), I(62)}) == 4611686018427387904);
  CHECK(t.i(PrimId::Power, {I(2), I(64)}) == 0);
  CHECK(t.i(PrimId::Power, {I(0), I(0)}) == 1);
  CHECK(t.i(PrimId::Power, {I(-3), I(3)}) == -27);
  CHECK(t.f(PrimId::Power, {F(2.5), I(0)}) == 1.0);
  CHECK(t.f(PrimId::Power, {F(0.5), I(3)}) == 0.125);
  CHECK(t.err(PrimId::Power, {I(2), I(-1)}) == "The power must be nonnegative for ^ .");
  CHECK(t.err(PrimId::Power, {F(2.0), I(-1)}) == "The power must be nonnegative for ^ .");
}

TEST_CASE("shifts: in-range counts and errors") {
  P t;
  CHECK(t.i(PrimId::Lshift, {I(1), I(4)}) == 16);
  CHECK(t.i(PrimId::Rshift, {I(-16), I(2)}) == -4);
  CHECK(t.i(PrimId::Lshift, {I(1), I(63)}) == kMinInt);
  CHECK(t.i(PrimId::Rshift, {I(kMinInt), I(63)}) == -1);
  CHECK(t.err(PrimId::Lshift, {I(1), I(64)}) == "Shift count out of range in function LSHIFT.");
  CHECK(t.err(PrimId::Rshift, {I(5), I(-1)}) == "Shift count out of range in function RSHIFT.");
  CHECK(t.err(PrimId::Lshift, {Value::i32(1), I(32)}) == "Shift count out of range in function LSHIFT.");
  CHECK(t.ok(PrimId::Lshift, {Value::i32(1), I(31)}).as_i32() == -2147483647 - 1);
}

TEST_CASE("roots, logs, trigonometry, expt") {
  P t;
  CHECK(t.f(PrimId::Sqrt, {F(2.0)}) == doctest::Approx(1.4142135623731));
  CHECK(t.err(PrimId::Sqrt, {F(-1.0)}) == "Sqrt of negative number.");
  CHECK(t.f(PrimId::Sqrt, {F(-0.0)}) == 0.0);
  CHECK(t.err(PrimId::Ln, {F(-1.0)}) == "Ln of negative number.");
  CHECK(t.f(PrimId::Ln, {F(0.0)}) == -kInf);
  CHECK(t.f(PrimId::Atan, {F(1.0)}) == doctest::Approx(0.785398163397448));
  CHECK(std::isnan(t.f(PrimId::Asin, {F(2.0)})));
  CHECK(t.f(PrimId::Exp, {F(0.0)}) == 1.0);
  CHECK(t.f(PrimId::Expt, {F(10.0), F(2.0)}) == doctest::Approx(100.0));
  CHECK(t.f(PrimId::Expt, {F(0.0), F(0.0)}) == 1.0);
  CHECK(t.err(PrimId::Expt, {F(-2.0), F(2.0)}) == "Ln of negative number.");
}

TEST_CASE("conversions and their range checks") {
  P t;
  CHECK(t.i(PrimId::Btoi, {B(true)}) == 1);
  CHECK(t.ok(PrimId::CodeChar, {I(65)}).as_char() == 'A');
  CHECK(t.ok(PrimId::CodeChar, {I(255)}).as_char() == 255);
  CHECK(t.err(PrimId::CodeChar, {I(256)}) == "Character code out of range in function CODE_CHAR.");
  CHECK(t.err(PrimId::CodeChar, {I(-1)}) == "Character code out of range in function CODE_CHAR.");
  CHECK(t.i(PrimId::CharCode, {C('a')}) == 97);
  CHECK(t.f(PrimId::ToFloat, {I(3)}) == 3.0);
  CHECK(t.i(PrimId::Floor, {F(-2.1)}) == -3);
  CHECK(t.i(PrimId::Ceil, {F(-2.1)}) == -2);
  CHECK(t.i(PrimId::Trunc, {F(-2.9)}) == -2);
  CHECK(t.i(PrimId::Round, {F(2.5)}) == 3);
  CHECK(t.i(PrimId::Round, {F(-2.5)}) == -2);
  CHECK(t.i(PrimId::Round, {F(-2.6)}) == -3);
  CHECK(t.i(PrimId::Trunc, {F(1.0e10)}) == 10000000000);
  CHECK(t.i(PrimId::Trunc, {F(-9223372036854775808.0)}) == kMinInt);
  CHECK(t.err(PrimId::Trunc, {F(9223372036854775808.0)}) == "Float value out of integer range in function TRUNC.");
  CHECK(t.err(PrimId::Floor, {F(std::nan(""))}) == "Float value out of integer range in function FLOOR.");
  CHECK(t.err(PrimId::Ceil, {F(kInf)}) == "Float value out of integer range in function CEIL.");
  CHECK(t.err(PrimId::Round, {F(-1e300)}) == "Float value out of integer range in function ROUND.");
  // sized conversions
  CHECK(t.ok(PrimId::ToI32, {I(4294967297)}).as_i32() == 1);
  CHECK(t.ok(PrimId::ToI32, {F(-3.7)}).as_i32() == -3);
  CHECK(t.err(PrimId::ToI32, {F(3e9)}) == "Float value out of integer range in function I32.");
  CHECK(t.ok(PrimId::ToI64, {Value::i32(-5)}).as_int() == -5);
  CHECK(t.ok(PrimId::ToI64, {F(2.9)}).as_int() == 2);
  CHECK(t.err(PrimId::ToI64, {F(1e19)}) == "Float value out of integer range in function I64.");
  CHECK(t.ok(PrimId::ToF32, {F(0.1)}).as_f32() == 0.1f);
  CHECK(t.ok(PrimId::ToF64, {Value::f32(0.5f)}).as_float() == 0.5);
  CHECK(t.ok(PrimId::ToF64, {I(7)}).as_float() == 7.0);
}

TEST_CASE("select evaluates both and picks one") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Select, {B(false), S("yes"), S("no")}), S("no")));
  CHECK(t.i(PrimId::Select, {B(true), I(1), I(2)}) == 1);
}

TEST_CASE("rand: range, independence, reproducibility, reseeding") {
  CoreBuilder b;
  // {rand(n) : n in dist(100, 200)}
  auto draws = [&](const ndp::lang::core::Expr* seed_or_null) {
    auto* m = b.map({b.pvar(0)}, {b.prim(PrimId::Dist, {b.i(100), b.i(200)}, {b.prog.types.int_()})},
                    b.prim(PrimId::Rand, {b.local(0)}, {b.prog.types.int_()}));
    const ndp::lang::core::Expr* body = m;
    if (seed_or_null) body = b.let(b.pvar(1), seed_or_null, m);
    return body;
  };
  auto* body = draws(nullptr);
  auto r1 = b.run(body, 2);
  auto r2 = b.run(body, 2);
  REQUIRE(r1.ok);
  REQUIRE(r2.ok);
  // a top-level form is reproducible
  CHECK(values_equal(r1.value, r2.value));
  bool all_in_range = true, some_differ = false;
  for (const Value& v : r1.value.elems()) {
    all_in_range = all_in_range && v.as_int() >= 0 && v.as_int() < 100;
    some_differ = some_differ || v.as_int() != r1.value.elems()[0].as_int();
  }
  CHECK(all_in_range);
  CHECK(some_differ);

  auto* seeded = draws(b.prim(PrimId::RandSeed, {b.i(42)}));
  auto s1 = b.run(seeded, 2);
  auto s2 = b.run(seeded, 2);
  REQUIRE(s1.ok);
  CHECK(values_equal(s1.value, s2.value));
  CHECK_FALSE(values_equal(s1.value, r1.value));
  auto* other = draws(b.prim(PrimId::RandSeed, {b.i(43)}));
  auto o1 = b.run(other, 2);
  CHECK_FALSE(values_equal(o1.value, s1.value));

  // float draws lie in [0, n)
  auto* fm = b.map({b.pvar(0)}, {b.prim(PrimId::Dist, {b.f(0.5), b.i(500)}, {b.prog.types.float_()})},
                   b.prim(PrimId::Rand, {b.local(0)}, {b.prog.types.float_()}));
  auto fr = b.run(fm, 1);
  REQUIRE(fr.ok);
  for (const Value& v : fr.value.elems()) {
    CHECK(v.as_float() >= 0.0);
    CHECK(v.as_float() < 0.5);
  }
  // non-positive arguments
  P t;
  CHECK(t.err(PrimId::Rand, {I(0)}) == "Rand only works with positive numbers.");
  CHECK(t.err(PrimId::Rand, {F(-1.0)}) == "Rand only works with positive numbers.");
  CHECK(t.ok(PrimId::Rand, {I(1)}).as_int() == 0);
  CHECK(t.ok(PrimId::Rand, {Value::i32(7)}).as_i32() < 7);
}

TEST_CASE("rand: successive draws at one site differ (serial recursion)") {
  CoreBuilder b;
  // function draws(n) = if n == 0 then [] int else [rand(1000000)] ++ draws(n - 1)
  const Type* int_t = b.prog.types.int_();
  uint32_t f = b.function("draws", b.pvar(0), 1, nullptr);
  auto* one = b.node(ndp::lang::core::Kind::SeqLit);
  one->args = {b.prim(PrimId::Rand, {b.i(1000000)}, {int_t})};
  auto* rest = b.call(b.fnref(f), b.prim(PrimId::Sub, {b.local(0), b.i(1)}));
  b.prog.globals[f]->fn.body = b.if_(b.prim(PrimId::Eq, {b.local(0), b.i(0)}), b.node(ndp::lang::core::Kind::EmptySeq),
                                     b.prim(PrimId::Append, {one, rest}, {int_t}));
  auto r = b.run(b.call(b.fnref(f), b.i(5)));
  REQUIRE(r.ok);
  REQUIRE(r.value.length() == 5);
  int distinct = 0;
  for (size_t i = 1; i < 5; ++i) distinct += r.value.elems()[i].as_int() != r.value.elems()[0].as_int();
  CHECK(distinct >= 3);
  // the same recursion inside two elements of an apply-to-each gives different streams
  auto* m = b.map({b.pvar(0)}, {b.lit(ints({3, 3}))}, b.call(b.fnref(f), b.local(0)));
  auto rm = b.run(m, 1);
  REQUIRE(rm.ok);
  CHECK_FALSE(values_equal(rm.value.elems()[0], rm.value.elems()[1]));
}

TEST_CASE("length, dist, index, iseq") {
  P t;
  CHECK(t.i(PrimId::Length, {seqs({ints({1, 2}), ints({3})})}) == 2);
  CHECK(values_equal(t.ok(PrimId::Dist, {I(5), I(3)}), ints({5, 5, 5})));
  CHECK(values_equal(t.ok(PrimId::Dist, {S("ab"), I(2)}), seqs({S("ab"), S("ab")})));
  CHECK(t.ok(PrimId::Dist, {I(5), I(0)}).length() == 0);
  CHECK(t.err(PrimId::Dist, {I(5), I(-1)}) == "Negative length in function DIST.");
  CHECK(values_equal(t.ok(PrimId::Index, {I(4)}), ints({0, 1, 2, 3})));
  CHECK(t.ok(PrimId::Index, {I(0)}).length() == 0);
  CHECK(t.err(PrimId::Index, {I(-3)}) == "Negative length in function INDEX.");
  CHECK(values_equal(t.ok(PrimId::Iseq, {I(2), I(3), I(10)}), ints({2, 5, 8})));
  CHECK(values_equal(t.ok(PrimId::Iseq, {I(4), I(3), I(15)}), ints({4, 7, 10, 13})));
  CHECK(t.ok(PrimId::Iseq, {I(5), I(1), I(5)}).length() == 0);
  const char* msg = "In [s:e:l], e must be >= to s, and l must be positive.";
  CHECK(t.err(PrimId::Iseq, {I(5), I(1), I(2)}) == msg);
  CHECK(t.err(PrimId::Iseq, {I(10), I(-1), I(1)}) == msg);
  CHECK(t.err(PrimId::Iseq, {I(0), I(0), I(1)}) == msg);
  CHECK(values_equal(t.ok(PrimId::Iseq, {I(kMaxInt - 2), I(2), I(kMaxInt)}), ints({kMaxInt - 2})));
}

TEST_CASE("elt and rep: bounds") {
  P t;
  auto msg = [](int index, int length) {
    return fmt::format("Sequence reference (a[i]) out of bounds: index {}, length {}.", index, length);
  };
  CHECK(values_equal(t.ok(PrimId::Elt, {seqs({S("ab"), S("cde")}), I(1)}), S("cde")));
  CHECK(t.err(PrimId::Elt, {ints({1, 2}), I(2)}) == msg(2, 2));
  CHECK(t.err(PrimId::Elt, {ints({1, 2}), I(-1)}) == msg(-1, 2));
  CHECK(t.err(PrimId::Elt, {ints({}), I(0)}) == msg(0, 0));
  CHECK(values_equal(t.ok(PrimId::Rep, {ints({1, 2, 3, 4}), I(9), I(2)}), ints({1, 2, 9, 4})));
  CHECK(values_equal(t.ok(PrimId::Rep, {seqs({S("a"), S("bb"), S("c")}), S("zzz"), I(1)}),
                     seqs({S("a"), S("zzz"), S("c")})));
  CHECK(t.err(PrimId::Rep, {ints({1, 2}), I(9), I(2)}) == msg(2, 2));
  CHECK(t.err(PrimId::Rep, {ints({1, 2}), I(9), I(-1)}) == msg(-1, 2));
}

TEST_CASE("scans are exclusive with the right identities") {
  P t;
  CHECK(values_equal(t.ok(PrimId::PlusScan, {ints({1, 3, 5, 7})}), ints({0, 1, 4, 9})));
  CHECK(values_equal(t.ok(PrimId::MultScan, {ints({2, 3, 4})}), ints({1, 2, 6})));
  CHECK(values_equal(t.ok(PrimId::MaxScan, {ints({3, 2, 1, 6, 5, 4, 8})}), ints({kMinInt, 3, 3, 3, 6, 6, 6})));
  CHECK(values_equal(t.ok(PrimId::MinScan, {ints({3, 2, 5})}), ints({kMaxInt, 3, 2})));
  CHECK(values_equal(t.ok(PrimId::OrScan, {bools({false, false, true, false})}), bools({false, false, false, true})));
  CHECK(values_equal(t.ok(PrimId::XorScan, {bools({true, true, false, true})}), bools({false, true, false, false})));
  CHECK(values_equal(t.ok(PrimId::AndScan, {ints({7, 3, 1})}), ints({-1, 7, 3})));
  CHECK(values_equal(t.ok(PrimId::MaxScan, {floats({1.5, -2.0})}), floats({-kInf, 1.5})));
  CHECK(values_equal(t.ok(PrimId::MinScan, {floats({1.5, -2.0})}), floats({kInf, 1.5})));
  // char identities: 0 for max, 255 for min
  Value mx = t.ok(PrimId::MaxScan, {S("abc")});
  CHECK(mx.elems()[0].as_char() == 0);
  CHECK(mx.elems()[2].as_char() == 'b');
  CHECK(t.ok(PrimId::MinScan, {S("abc")}).elems()[0].as_char() == 255);
  CHECK(t.ok(PrimId::PlusScan, {ints({})}).length() == 0);
  CHECK(t.ok(PrimId::PlusScan, {floats({})}).length() == 0);
}

TEST_CASE("scans inside an apply-to-each, with empty segments") {
  CoreBuilder b;
  // {plus_scan(x) : x in [[1,2,3],[] int,[4,5]]}
  auto* m = b.map({b.pvar(0)}, {b.lit(seqs({ints({1, 2, 3}), ints({}), ints({4, 5})}))},
                  b.prim(PrimId::PlusScan, {b.local(0)}, {b.prog.types.int_()}));
  auto r = b.run(m, 1);
  REQUIRE(r.ok);
  CHECK(values_equal(r.value, seqs({ints({0, 1, 3}), ints({}), ints({0, 4})})));
  // {max_val(x) : x in [[1,2,3],[] int,[4,5]]}
  m = b.map({b.pvar(0)}, {b.lit(seqs({ints({1, 2, 3}), ints({}), ints({4, 5})}))},
            b.prim(PrimId::MaxVal, {b.local(0)}, {b.prog.types.int_()}));
  r = b.run(m, 1);
  REQUIRE(r.ok);
  CHECK(values_equal(r.value, ints({3, kMinInt, 5})));
}

TEST_CASE("reductions, including the identities of empty sequences per type") {
  P t;
  auto& T = t.T;
  CHECK(t.ok(PrimId::Sum, {ints({7, 2, 9, 11, 3})}, {T.int_()}).as_int() == 32);
  CHECK(t.ok(PrimId::Sum, {ints({kMaxInt, 1})}, {T.int_()}).as_int() == kMinInt);
  Value s = t.ok(PrimId::Sum, {ints({})}, {T.int_()});
  CHECK(s.kind() == ValueKind::Int);
  CHECK(s.as_int() == 0);
  s = t.ok(PrimId::Sum, {floats({})}, {T.float_()});
  CHECK(s.kind() == ValueKind::Float);
  CHECK(s.as_float() == 0.0);
  CHECK(t.ok(PrimId::Sum, {Value::seq({})}, {T.i32()}).kind() == ValueKind::I32);
  CHECK(t.ok(PrimId::Product, {ints({})}, {T.int_()}).as_int() == 1);
  CHECK(t.ok(PrimId::Product, {floats({})}, {T.float_()}).as_float() == 1.0);
  CHECK(t.ok(PrimId::MaxVal, {floats({})}, {T.float_()}).as_float() == -kInf);
  CHECK(t.ok(PrimId::MinVal, {floats({})}, {T.float_()}).as_float() == kInf);
  CHECK(t.ok(PrimId::MaxVal, {ints({})}, {T.int_()}).as_int() == kMinInt);
  CHECK(t.ok(PrimId::MinVal, {ints({})}, {T.int_()}).as_int() == kMaxInt);
  CHECK(t.ok(PrimId::MaxVal, {S("")}, {T.char_()}).as_char() == 0);
  CHECK(t.ok(PrimId::MinVal, {S("")}, {T.char_()}).as_char() == 255);
  CHECK(t.ok(PrimId::MaxVal, {S("hello")}, {T.char_()}).as_char() == 'o');
  CHECK(t.ok(PrimId::AllRed, {bools({})}, {T.bool_()}).as_bool() == true);
  CHECK(t.ok(PrimId::AnyRed, {bools({})}, {T.bool_()}).as_bool() == false);
  CHECK(t.ok(PrimId::Parity, {bools({})}, {T.bool_()}).as_bool() == false);
  CHECK(t.ok(PrimId::AllRed, {ints({})}, {T.int_()}).as_int() == -1);
  CHECK(t.ok(PrimId::AnyRed, {ints({1, 2})}, {T.int_()}).as_int() == 3);
  CHECK(t.ok(PrimId::Parity, {ints({1, 2, 3})}, {T.int_()}).as_int() == 0);
  CHECK(t.ok(PrimId::AllRed, {bools({true, false})}, {T.bool_()}).as_bool() == false);
  CHECK(t.ok(PrimId::MinVal, {floats({3.0, -1.0, 2.0})}, {T.float_()}).as_float() == -1.0);
  // float sums go left to right from 0.0
  CHECK(t.ok(PrimId::Sum, {floats({1e16, 1.0, -1e16})}, {T.float_()}).as_float() == 0.0);
}

TEST_CASE("gather ->") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Gather, {ints({10, 20, 30, 40, 50}), ints({4, 0, 0, 2})}), ints({50, 10, 10, 30})));
  CHECK(values_equal(t.ok(PrimId::Gather, {seqs({S("a"), S("bb"), S("ccc")}), ints({2, 0})}),
                     seqs({S("ccc"), S("a")})));
  CHECK(t.ok(PrimId::Gather, {ints({}), ints({})}).length() == 0);
  CHECK(t.err(PrimId::Gather, {ints({1, 2}), ints({0, 2})}) == "Index out of bounds for function ->: index 2, length 2.");
  CHECK(t.err(PrimId::Gather, {ints({1, 2}), ints({-1})}) == "Index out of bounds for function ->: index -1, length 2.");
}

TEST_CASE("write <-: last wins; bounds") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Write, {ints({0, 0, 0, 0, 0}), pairs({{1, 7}, {3, 9}})}), ints({0, 7, 0, 9, 0})));
  CHECK(values_equal(t.ok(PrimId::Write, {ints({0, 0, 0, 0, 0}), pairs({{1, 7}, {1, 9}, {1, 11}})}),
                     ints({0, 11, 0, 0, 0})));
  Value nested = Value::seq({Value::pair(I(1), S("xx")), Value::pair(I(1), S("yyy"))});
  CHECK(values_equal(t.ok(PrimId::Write, {seqs({S("a"), S("b"), S("c"), S("d")}), nested}),
                     seqs({S("a"), S("yyy"), S("c"), S("d")})));
  CHECK(t.err(PrimId::Write, {ints({0, 0}), pairs({{2, 1}})}) == "Index out of bounds for function <-: index 2, length 2.");
  CHECK(t.err(PrimId::Write, {ints({0, 0}), pairs({{-1, 1}})}) == "Index out of bounds for function <-: index -1, length 2.");
  CHECK(t.err(PrimId::Write, {ints({}), pairs({{0, 1}})}) == "Index out of bounds for function <-: index 0, length 0.");
}

TEST_CASE("put: lengths, bounds, last wins") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Put, {ints({1, 2, 3}), ints({4, 0, 2}), ints({0, 0, 0, 0, 0, 0})}),
                     ints({2, 0, 3, 0, 1, 0})));
  CHECK(values_equal(t.ok(PrimId::Put, {ints({1, 2, 3}), ints({1, 1, 1}), ints({0, 0, 0})}), ints({0, 3, 0})));
  CHECK(t.err(PrimId::Put, {ints({1, 2}), ints({0}), ints({0, 0})}) == "Length mismatch in function PUT: lengths 2 and 1.");
  CHECK(t.err(PrimId::Put, {ints({1}), ints({5}), ints({0, 0})}) == "Index out of bounds for function <-: index 5, length 2.");
}

TEST_CASE("permute: a real permutation or an error") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Permute, {ints({10, 20, 30, 40}), ints({3, 0, 2, 1})}), ints({20, 40, 30, 10})));
  CHECK(values_equal(t.ok(PrimId::Permute, {seqs({S("x"), S("yy"), S("zzz")}), ints({1, 2, 0})}),
                     seqs({S("zzz"), S("x"), S("yy")})));
  CHECK(t.ok(PrimId::Permute, {ints({}), ints({})}).length() == 0);
  const char* msg = "Bad arguments to function PERMUTE.";
  CHECK(t.err(PrimId::Permute, {ints({1, 2}), ints({0})}) == msg);
  CHECK(t.err(PrimId::Permute, {ints({1, 2}), ints({0, 2})}) == msg);
  CHECK(t.err(PrimId::Permute, {ints({1, 2}), ints({1, 1})}) == msg);
  CHECK(t.err(PrimId::Permute, {ints({1, 2}), ints({-1, 0})}) == msg);
}

TEST_CASE("join: positions must form a permutation") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Join, {ints({1, 2, 3}), ints({1, 4, 5}), ints({10, 20, 30, 40, 50}),
                                         ints({0, 2, 3, 6, 7})}),
                     ints({10, 1, 20, 30, 2, 3, 40, 50})));
  CHECK(t.ok(PrimId::Join, {ints({}), ints({}), ints({}), ints({})}).length() == 0);
  const char* msg = "Bad arguments to function JOIN.";
  CHECK(t.err(PrimId::Join, {ints({1}), ints({0}), ints({2}), ints({0})}) == msg);
  CHECK(t.err(PrimId::Join, {ints({1}), ints({0}), ints({2}), ints({2})}) == msg);
  CHECK(t.err(PrimId::Join, {ints({1}), ints({}), ints({2}), ints({0})}) == msg);
}

TEST_CASE("pack, identity, eql, hash") {
  P t;
  Value ps = Value::seq({Value::pair(I(1), B(true)), Value::pair(I(2), B(false)), Value::pair(I(3), B(true))});
  CHECK(values_equal(t.ok(PrimId::Pack, {ps}), ints({1, 3})));
  CHECK(t.ok(PrimId::Pack, {Value::seq({})}).length() == 0);

  Value id = t.ok(PrimId::Identity, {Value::tuple({I(3), S("ab"), B(true)})});
  CHECK(values_equal(id, Value::tuple({I(0), S(""), B(false)})));
  CHECK(t.ok(PrimId::Identity, {C('x')}).as_char() == ' ');
  CHECK(t.ok(PrimId::Identity, {F(2.5)}).as_float() == 0.0);
  CHECK(t.ok(PrimId::Identity, {Value::f32(2.5f)}).kind() == ValueKind::F32);

  CHECK_FALSE(t.ok(PrimId::Eql, {ints({1, 2}), ints({1, 2, 3})}).as_bool());
  Value x = Value::pair(S("a"), bools({true}));
  CHECK(t.ok(PrimId::Eql, {x, x}).as_bool());
  CHECK(t.ok(PrimId::Eql, {F(0.0), F(-0.0)}).as_bool());

  CHECK(t.i(PrimId::Hash, {I(5), I(10)}) == 5);
  CHECK(t.i(PrimId::Hash, {I(25), I(10)}) == 5);
  int64_t h = t.i(PrimId::Hash, {I(-7), I(10)});
  CHECK(h >= 0);
  CHECK(h < 10);
  CHECK(t.i(PrimId::Hash, {F(0.0), I(1000)}) == t.i(PrimId::Hash, {F(-0.0), I(1000)}));
  CHECK(t.i(PrimId::Hash, {S("abc"), I(97)}) == t.i(PrimId::Hash, {S("abc"), I(97)}));
  h = t.i(PrimId::Hash, {S("abc"), I(3)});
  CHECK(h >= 0);
  CHECK(h < 3);
  CHECK(t.err(PrimId::Hash, {I(5), I(0)}) == "The second argument for the function HASH must be positive.");
}

TEST_CASE("append, partition, flatten") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Append, {seqs({ints({1}), ints({2, 3})}), seqs({ints({4})})}),
                     seqs({ints({1}), ints({2, 3}), ints({4})})));
  CHECK(values_equal(t.ok(PrimId::Append, {ints({}), ints({})}), ints({})));
  CHECK(values_equal(t.ok(PrimId::Partition, {ints({0, 1, 2, 3, 4, 5, 6, 7}), ints({4, 1, 3})}),
                     seqs({ints({0, 1, 2, 3}), ints({4}), ints({5, 6, 7})})));
  CHECK(values_equal(t.ok(PrimId::Partition, {ints({1, 2, 3}), ints({0, 3, 0})}), seqs({ints({}), ints({1, 2, 3}), ints({})})));
  CHECK(t.ok(PrimId::Partition, {ints({}), ints({})}).length() == 0);
  CHECK(t.err(PrimId::Partition, {ints({1, 2, 3}), ints({1, 1})}) == "Length mismatch in function PARTITION.");
  CHECK(t.err(PrimId::Partition, {ints({1, 2, 3}), ints({2, 2})}) == "Length mismatch in function PARTITION.");
  CHECK(t.err(PrimId::Partition, {ints({1, 2, 3}), ints({4, -1})}) == "Negative length in function PARTITION.");
  CHECK(values_equal(t.ok(PrimId::Flatten, {seqs({ints({1, 2}), ints({}), ints({3})})}), ints({1, 2, 3})));
  CHECK(values_equal(t.ok(PrimId::Flatten, {seqs({seqs({ints({1}), ints({2})}), seqs({ints({3})})})}),
                     seqs({ints({1}), ints({2}), ints({3})})));
}

TEST_CASE("rank and rank_down: stable, numeric for floats") {
  P t;
  CHECK(values_equal(t.ok(PrimId::Rank, {ints({10, -5, 0, 10, -10, 100, 10})}), ints({3, 1, 2, 4, 0, 6, 5})));
  CHECK(values_equal(t.ok(PrimId::RankDown, {ints({10, -5, 0, 10, -10, 100, 10})}), ints({1, 5, 4, 2, 6, 0, 3})));
  CHECK(values_equal(t.ok(PrimId::Rank, {floats({10.0, -5.0, 0.0, 10.0, -10.0, 100.0, 10.0})}),
                     ints({3, 1, 2, 4, 0, 6, 5})));
  CHECK(values_equal(t.ok(PrimId::RankDown, {floats({10.0, -5.0, 0.0, 10.0, -10.0, 100.0, 10.0})}),
                     ints({1, 5, 4, 2, 6, 0, 3})));
  CHECK(values_equal(t.ok(PrimId::Rank, {floats({7.0, -2.0, 1.0, -3.0, 6.0})}), ints({4, 1, 2, 0, 3})));
  // -0.0 and 0.0 are equal keys: input order is kept
  CHECK(values_equal(t.ok(PrimId::Rank, {floats({0.0, -0.0, -1.0})}), ints({1, 2, 0})));
  CHECK(values_equal(t.ok(PrimId::Rank, {ints({kMaxInt, kMinInt, 0})}), ints({2, 0, 1})));
  CHECK(t.ok(PrimId::Rank, {ints({})}).length() == 0);
  CHECK(values_equal(t.ok(PrimId::Rank, {S("hello")}), ints({1, 0, 2, 3, 4})));
}

TEST_CASE("@, ||, exp_string") {
  P t;
  CHECK(values_equal(t.ok(PrimId::ToString, {Value::tuple({I(1), I(2), I(3)})}), S("(1, 2, 3)")));
  CHECK(values_equal(t.ok(PrimId::ToString, {S("ab")}), S("[`a, `b]")));
  CHECK(values_equal(t.ok(PrimId::ToString, {I(kMinInt)}), S("-9223372036854775808")));
  CHECK(values_equal(t.ok(PrimId::ToString, {F(123456.789)}), S("123456.79")));
  CHECK(values_equal(t.ok(PrimId::Pad, {S("abc"), I(6)}), S("abc   ")));
  CHECK(values_equal(t.ok(PrimId::Pad, {S("abc"), I(-6)}), S("   abc")));
  CHECK(values_equal(t.ok(PrimId::Pad, {S("abcdef"), I(3)}), S("abcdef")));
  CHECK(values_equal(t.ok(PrimId::Pad, {S("ab"), I(0)}), S("ab")));
  CHECK(values_equal(t.ok(PrimId::ExpString, {F(1234.5678), I(3)}), S("1.235e+3")));
  CHECK(values_equal(t.ok(PrimId::ExpString, {F(-0.00123), I(2)}), S("-1.23e-3")));
  CHECK(t.err(PrimId::ExpString, {F(1.0), I(9)}) == "In function exp_string, digits_after_point is too large.");
}

TEST_CASE("*_combine: ascending source order, bounds naming the position") {
  P t;
  CHECK(values_equal(t.ok(PrimId::PlusCombine, {ints({0, 0, 0}), ints({0, 2, 0, 2}), ints({1, 2, 3, 4})}),
                     ints({4, 0, 6})));
  // the fold order is observable with floats: ((0 + 1e16) + 1) - 1e16 = 0
  CHECK(t.ok(PrimId::PlusCombine, {floats({0.0}), ints({0, 0, 0}), floats({1e16, 1.0, -1e16})}).elems()[0].as_float() ==
        0.0);
  CHECK(t.ok(PrimId::PlusCombine, {floats({0.0}), ints({0, 0, 0}), floats({1.0, 1e16, -1e16})}).elems()[0].as_float() ==
        0.0);
  CHECK(t.ok(PrimId::PlusCombine, {floats({1e16}), ints({0, 0}), floats({-1e16, 1.0})}).elems()[0].as_float() == 1.0);
  CHECK(values_equal(t.ok(PrimId::MultCombine, {ints({1, 2}), ints({1, 1}), ints({3, 4})}), ints({1, 24})));
  CHECK(values_equal(t.ok(PrimId::MaxCombine, {ints({5, 5}), ints({0, 1, 1}), ints({9, 1, 7})}), ints({9, 7})));
  CHECK(values_equal(t.ok(PrimId::MinCombine, {ints({5, 5}), ints({0, 1, 1}), ints({9, 1, 7})}), ints({5, 1})));
  CHECK(values_equal(t.ok(PrimId::XorCombine, {bools({false, true}), ints({0, 0, 1}), bools({true, true, true})}),
                     bools({false, false})));
  CHECK(values_equal(t.ok(PrimId::AndCombine, {ints({-1}), ints({0, 0}), ints({6, 3})}), ints({2})));
  CHECK(values_equal(t.ok(PrimId::OrCombine, {ints({0}), ints({0, 0}), ints({4, 1})}), ints({5})));
  CHECK(values_equal(t.ok(PrimId::PlusCombine, {ints({1, 2}), ints({}), ints({})}), ints({1, 2})));
  CHECK(t.err(PrimId::PlusCombine, {ints({0, 0}), ints({0, 5}), ints({1, 2})}) ==
        "Index out of bounds for function PLUS_COMBINE: index 5 at position 1, length 2.");
  CHECK(t.err(PrimId::MaxCombine, {ints({0}), ints({-1}), ints({1})}) ==
        "Index out of bounds for function MAX_COMBINE: index -1 at position 0, length 1.");
  CHECK(t.err(PrimId::PlusCombine, {ints({0}), ints({0}), ints({1, 2})}) == "Length mismatch in function PLUS_COMBINE.");
}
