// Scalar primitives (library.md §3, extensions.md §1): logic, comparison, arithmetic, math,
// conversions, random numbers, select.
//
// Note [Scalar error messages]
// CMU's messages are used where CMU checks (Appendix B). ndp-only checks (library.md §14 rows
// 13 and 17) use these messages (the texts live in lang/runtime_errors.def):
//   lshift/rshift count outside [0, width)  `Shift count out of range in function LSHIFT.`
//                                           (`... RSHIFT.`); width is 64 for int, 32 for i32
//   code_char outside 0..255                `Character code out of range in function CODE_CHAR.`
//   float->int outside the target's range   `Float value out of integer range in function FLOOR.`
//   or NaN                                  (CEIL, TRUNC, ROUND, I64, I32)
// `^` with a negative power fails with CMU's message for every number type. expt with a
// negative base fails with `Ln of negative number.` (CMU computes it through ln); otherwise it
// is pow. `x ^ p` is binary exponentiation (square-and-multiply from the low bit), so float
// results are reproducible bit for bit by the other backends.
#include <cmath>
#include <limits>

#include "lang/eval/scalar_ops.h"
#include "lang/diagnostics.h"
#include "lang/runtime_errors.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"

namespace ndp::lang::eval {

using core::PrimId;

namespace {

[[noreturn]] void bad_operand(const PrimCall& c, const Value& v) {
  throw InternalError(std::string("internal error: primitive ") + core::prim_info(c.id).name +
                      " applied to a " + kind_name(v.kind()));
}

template <class S, class U>
S int_arith(const PrimCall& c, PrimId op, S a, S b) {
  switch (op) {
    case PrimId::Add: return static_cast<S>(static_cast<U>(a) + static_cast<U>(b));
    case PrimId::Sub: return static_cast<S>(static_cast<U>(a) - static_cast<U>(b));
    case PrimId::Mul: return static_cast<S>(static_cast<U>(a) * static_cast<U>(b));
    case PrimId::Div:
      if (b == 0) c.fail(message(RuntimeErrorId::DivideByZero));
      // min_int / -1 overflows in C; ndp wraps it to min_int (library.md §14 row 16).
      if (b == -1) return static_cast<S>(U{0} - static_cast<U>(a));
      return static_cast<S>(a / b);
    default: break;
  }
  throw InternalError("internal error: int_arith: not an arithmetic primitive");
}

template <class F>
F float_arith(PrimId op, F a, F b) {
  switch (op) {
    case PrimId::Add: return a + b;
    case PrimId::Sub: return a - b;
    case PrimId::Mul: return a * b;
    case PrimId::Div: return a / b;
    default: break;
  }
  throw InternalError("internal error: float_arith: not an arithmetic primitive");
}

Value arith(const PrimCall& c, const Value& a, const Value& b) {
  switch (a.kind()) {
    case ValueKind::Int: return Value::int_(int_arith<int64_t, uint64_t>(c, c.id, a.as_int(), b.as_int()));
    case ValueKind::I32: return Value::i32(int_arith<int32_t, uint32_t>(c, c.id, a.as_i32(), b.as_i32()));
    case ValueKind::Float: return Value::float_(float_arith(c.id, a.as_float(), b.as_float()));
    case ValueKind::F32: return Value::f32(float_arith(c.id, a.as_f32(), b.as_f32()));
    default: bad_operand(c, a);
  }
}

Value power_prim(const PrimCall& c, const Value& a, const Value& pv) {
  int64_t p = pv.kind() == ValueKind::I32 ? pv.as_i32() : pv.as_int();
  if (p < 0) c.fail(message(RuntimeErrorId::NegativePower));
  switch (a.kind()) {
    case ValueKind::Int:
      return Value::int_(static_cast<int64_t>(power<uint64_t>(static_cast<uint64_t>(a.as_int()), p, 1,
                                                            [](uint64_t x, uint64_t y) { return x * y; })));
    case ValueKind::I32:
      return Value::i32(static_cast<int32_t>(power<uint32_t>(static_cast<uint32_t>(a.as_i32()), p, 1u,
                                                           [](uint32_t x, uint32_t y) { return x * y; })));
    case ValueKind::Float:
      return Value::float_(power<double>(a.as_float(), p, 1.0, [](double x, double y) { return x * y; }));
    case ValueKind::F32:
      return Value::f32(power<float>(a.as_f32(), p, 1.0f, [](float x, float y) { return x * y; }));
    default: bad_operand(c, a);
  }
}

template <class T>
bool compare(PrimId op, T a, T b) {
  switch (op) {
    case PrimId::Eq: return a == b;
    case PrimId::Ne: return a != b;
    case PrimId::Lt: return a < b;
    case PrimId::Gt: return a > b;
    case PrimId::Le: return a <= b;
    case PrimId::Ge: return a >= b;
    default: break;
  }
  throw InternalError("internal error: compare: not a comparison");
}

Value comparison(const PrimCall& c, const Value& a, const Value& b) {
  switch (a.kind()) {
    case ValueKind::Int: return Value::bool_(compare(c.id, a.as_int(), b.as_int()));
    case ValueKind::Float: return Value::bool_(compare(c.id, a.as_float(), b.as_float()));
    case ValueKind::Char: return Value::bool_(compare(c.id, a.as_char(), b.as_char()));
    case ValueKind::I32: return Value::bool_(compare(c.id, a.as_i32(), b.as_i32()));
    case ValueKind::F32: return Value::bool_(compare(c.id, a.as_f32(), b.as_f32()));
    case ValueKind::Bool: return Value::bool_(compare(c.id, a.as_bool(), b.as_bool()));
    default: bad_operand(c, a);
  }
}

template <class T>
T bitwise(PrimId op, T a, T b) {
  switch (op) {
    case PrimId::Or: return a | b;
    case PrimId::And: return a & b;
    case PrimId::Xor: return a ^ b;
    case PrimId::Nor: return ~(a | b);
    case PrimId::Nand: return ~(a & b);
    default: break;
  }
  throw InternalError("internal error: bitwise: not a logical primitive");
}

Value logical(const PrimCall& c, const Value& a, const Value& b) {
  switch (a.kind()) {
    case ValueKind::Int: return Value::int_(bitwise<int64_t>(c.id, a.as_int(), b.as_int()));
    case ValueKind::I32: return Value::i32(bitwise<int32_t>(c.id, a.as_i32(), b.as_i32()));
    case ValueKind::Bool: {
      bool x = a.as_bool(), y = b.as_bool();
      switch (c.id) {
        case PrimId::Or: return Value::bool_(x || y);
        case PrimId::And: return Value::bool_(x && y);
        case PrimId::Xor: return Value::bool_(x != y);
        case PrimId::Nor: return Value::bool_(!(x || y));
        case PrimId::Nand: return Value::bool_(!(x && y));
        default: break;
      }
      break;
    }
    default: break;
  }
  bad_operand(c, a);
}

Value shift(const PrimCall& c, const Value& a, const Value& b) {
  bool left = c.id == PrimId::Lshift;
  int64_t count = b.kind() == ValueKind::I32 ? b.as_i32() : b.as_int();
  int width = a.kind() == ValueKind::I32 ? 32 : 64;
  if (count < 0 || count >= width)
    c.fail(message(left ? RuntimeErrorId::LshiftRange : RuntimeErrorId::RshiftRange));
  if (a.kind() == ValueKind::I32) {
    int32_t x = a.as_i32();
    return Value::i32(left ? static_cast<int32_t>(static_cast<uint32_t>(x) << count) : x >> count);
  }
  int64_t x = a.as_int();
  return Value::int_(left ? static_cast<int64_t>(static_cast<uint64_t>(x) << count) : x >> count);
}

/// A float already rounded to an integral value, as int64; NaN and values outside int64 fail.
int64_t to_int64(const PrimCall& c, double x, RuntimeErrorId out_of_range) {
  if (!(x >= -9223372036854775808.0 && x < 9223372036854775808.0)) c.fail(message(out_of_range));
  return static_cast<int64_t>(x);
}

int32_t to_int32(const PrimCall& c, double x) {
  double t = std::trunc(x);
  if (!(t >= -2147483648.0 && t <= 2147483647.0)) c.fail(message(RuntimeErrorId::I32Range));
  return static_cast<int32_t>(t);
}

double as_double(const PrimCall& c, const Value& v) {
  switch (v.kind()) {
    case ValueKind::Int: return static_cast<double>(v.as_int());
    case ValueKind::Float: return v.as_float();
    case ValueKind::I32: return static_cast<double>(v.as_i32());
    case ValueKind::F32: return static_cast<double>(v.as_f32());
    default: bad_operand(c, v);
  }
}

Value convert(const PrimCall& c, const Value& v) {
  switch (c.id) {
    case PrimId::ToI32:
      switch (v.kind()) {
        case ValueKind::Int: return Value::i32(static_cast<int32_t>(static_cast<uint32_t>(v.as_int())));
        case ValueKind::I32: return v;
        default: return Value::i32(to_int32(c, as_double(c, v)));
      }
    case PrimId::ToI64:
      switch (v.kind()) {
        case ValueKind::Int: return v;
        case ValueKind::I32: return Value::int_(v.as_i32());
        default: return Value::int_(to_int64(c, std::trunc(as_double(c, v)), RuntimeErrorId::I64Range));
      }
    case PrimId::ToF32:
      switch (v.kind()) {
        case ValueKind::Int: return Value::f32(static_cast<float>(v.as_int()));
        case ValueKind::I32: return Value::f32(static_cast<float>(v.as_i32()));
        case ValueKind::Float: return Value::f32(static_cast<float>(v.as_float()));
        case ValueKind::F32: return v;
        default: bad_operand(c, v);
      }
    case PrimId::ToF64: return Value::float_(as_double(c, v));
    default: break;
  }
  bad_operand(c, v);
}

Value rand_prim(const PrimCall& c, const Value& n) {
  uint64_t r = 0;
  auto draw = [&] { r = c.env->rand->draw(c.span); };
  const char* msg = message(RuntimeErrorId::RandNotPositive);
  switch (n.kind()) {
    case ValueKind::Int: {
      if (n.as_int() <= 0) c.fail(msg);
      draw();
      auto hi = (static_cast<unsigned __int128>(r) * static_cast<uint64_t>(n.as_int())) >> 64;
      return Value::int_(static_cast<int64_t>(hi));
    }
    case ValueKind::I32: {
      if (n.as_i32() <= 0) c.fail(msg);
      draw();
      auto hi = (static_cast<unsigned __int128>(r) * static_cast<uint64_t>(n.as_i32())) >> 64;
      return Value::i32(static_cast<int32_t>(hi));
    }
    case ValueKind::Float: {
      double x = n.as_float();
      if (!(x > 0)) c.fail(msg);
      draw();
      double v = static_cast<double>(r >> 11) * 0x1p-53 * x;
      if (v >= x) v = std::nextafter(x, 0.0);
      return Value::float_(v);
    }
    case ValueKind::F32: {
      float x = n.as_f32();
      if (!(x > 0)) c.fail(msg);
      draw();
      float v = static_cast<float>(r >> 40) * 0x1p-24f * x;
      if (v >= x) v = std::nextafter(x, 0.0f);
      return Value::f32(v);
    }
    default: bad_operand(c, n);
  }
}

Value math(const PrimCall& c, double x) {
  switch (c.id) {
    case PrimId::Sqrt:
      if (x < 0) c.fail(message(RuntimeErrorId::SqrtNegative));
      return Value::float_(std::sqrt(x));
    case PrimId::Ln:
      if (x < 0) c.fail(message(RuntimeErrorId::LnNegative));
      return Value::float_(std::log(x));
    case PrimId::Exp: return Value::float_(std::exp(x));
    case PrimId::Sin: return Value::float_(std::sin(x));
    case PrimId::Cos: return Value::float_(std::cos(x));
    case PrimId::Tan: return Value::float_(std::tan(x));
    case PrimId::Asin: return Value::float_(std::asin(x));
    case PrimId::Acos: return Value::float_(std::acos(x));
    case PrimId::Atan: return Value::float_(std::atan(x));
    case PrimId::Sinh: return Value::float_(std::sinh(x));
    case PrimId::Cosh: return Value::float_(std::cosh(x));
    case PrimId::Tanh: return Value::float_(std::tanh(x));
    case PrimId::Ceil: return Value::int_(to_int64(c, std::ceil(x), RuntimeErrorId::CeilRange));
    case PrimId::Floor: return Value::int_(to_int64(c, std::floor(x), RuntimeErrorId::FloorRange));
    case PrimId::Trunc: return Value::int_(to_int64(c, std::trunc(x), RuntimeErrorId::TruncRange));
    // ndp's round is floor(x + 0.5) (library.md §14 row 5).
    case PrimId::Round: return Value::int_(to_int64(c, std::floor(x + 0.5), RuntimeErrorId::RoundRange));
    default: break;
  }
  throw InternalError("internal error: math: not a float primitive");
}

}  // namespace

Value apply_scalar_prim(const PrimCall& c, const Value* a) {
  switch (c.id) {
    case PrimId::Not:
      switch (a[0].kind()) {
        case ValueKind::Bool: return Value::bool_(!a[0].as_bool());
        case ValueKind::Int: return Value::int_(~a[0].as_int());
        case ValueKind::I32: return Value::i32(~a[0].as_i32());
        default: bad_operand(c, a[0]);
      }
    case PrimId::Or: case PrimId::And: case PrimId::Xor: case PrimId::Nor: case PrimId::Nand:
      return logical(c, a[0], a[1]);
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le:
    case PrimId::Ge:
      return comparison(c, a[0], a[1]);
    case PrimId::Add: case PrimId::Sub: case PrimId::Mul: case PrimId::Div:
      return arith(c, a[0], a[1]);
    case PrimId::Negate:
      switch (a[0].kind()) {
        case ValueKind::Int: return Value::int_(static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a[0].as_int())));
        case ValueKind::I32: return Value::i32(static_cast<int32_t>(0u - static_cast<uint32_t>(a[0].as_i32())));
        case ValueKind::Float: return Value::float_(-a[0].as_float());
        case ValueKind::F32: return Value::f32(-a[0].as_f32());
        default: bad_operand(c, a[0]);
      }
    case PrimId::Power: return power_prim(c, a[0], a[1]);
    case PrimId::Rem: {
      int64_t x = a[0].as_int(), y = a[1].as_int();
      if (y == 0) c.fail(message(RuntimeErrorId::RemByZero));
      return Value::int_(y == -1 ? 0 : x % y);  // rem(min_int, -1) overflows in C
    }
    case PrimId::Lshift: case PrimId::Rshift: return shift(c, a[0], a[1]);
    case PrimId::Sqrt: case PrimId::Ln: case PrimId::Exp: case PrimId::Sin: case PrimId::Cos:
    case PrimId::Tan: case PrimId::Asin: case PrimId::Acos: case PrimId::Atan: case PrimId::Sinh:
    case PrimId::Cosh: case PrimId::Tanh: case PrimId::Ceil: case PrimId::Floor:
    case PrimId::Trunc: case PrimId::Round:
      return math(c, a[0].as_float());
    case PrimId::Expt: {
      double v = a[0].as_float(), p = a[1].as_float();
      if (v < 0) c.fail(message(RuntimeErrorId::LnNegative));
      return Value::float_(std::pow(v, p));
    }
    case PrimId::Btoi: return Value::int_(a[0].as_bool() ? 1 : 0);
    case PrimId::CodeChar: {
      int64_t code = a[0].as_int();
      if (code < 0 || code > 255) c.fail(message(RuntimeErrorId::CharCodeRange));
      return Value::char_(static_cast<uint8_t>(code));
    }
    case PrimId::CharCode: return Value::int_(a[0].as_char());
    case PrimId::ToFloat: return Value::float_(static_cast<double>(a[0].as_int()));
    case PrimId::ToI32: case PrimId::ToF32: case PrimId::ToI64: case PrimId::ToF64:
      return convert(c, a[0]);
    case PrimId::Rand: return rand_prim(c, a[0]);
    case PrimId::RandSeed:
      if (c.env->rand->in_apply_to_each()) c.fail(message(RuntimeErrorId::RandSeedInParallel));
      c.env->rand->reset(static_cast<uint64_t>(a[0].as_int()));
      return Value::bool_(true);
    case PrimId::Select: return a[0].as_bool() ? a[1] : a[2];
    default: break;
  }
  throw InternalError(std::string("internal error: not a scalar primitive: ") + core::prim_info(c.id).name);
}

}  // namespace ndp::lang::eval
