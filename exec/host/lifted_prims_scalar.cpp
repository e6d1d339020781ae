// Native lifted scalar primitives: logic, comparison, arithmetic, math and conversions as tight
// (OpenMP) loops over the instances, with the interpreter's checks and messages
// (lang/eval/prims_scalar.cpp, Note [Scalar error messages]).
#include <cmath>
#include <type_traits>

#include "lang/eval/scalar_ops.h"
#include "exec/host/lifted_prims.h"
#include "exec/host/parallel_loops.h"
#include "lang/runtime_errors.h"

namespace ndp::exec::host {

using lang::RuntimeErrorId;
using lang::Type;
using lang::TypeKind;
using lang::core::PrimId;

namespace {

template <class T>
inline constexpr bool is_int_v = std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>;
template <class T>
inline constexpr bool is_number_v = is_int_v<T> || std::is_floating_point_v<T>;

/// The Vec of f(i) for i in [0, n), of element type t with storage R.
template <class R, class F>
Vec map_n(const Type* t, int64_t n, F&& f) {
  Buf<R> out(n);
  R* o = out.data();
  parallel_for(n, [&](int64_t i) { o[i] = f(i); });
  return Vec::scalar(t, n, out.share());
}

/// Fails with `error` if bad(i) holds for some instance.
template <class Bad>
void check(const LiftedCall& c, int64_t n, Bad&& bad, RuntimeErrorId error) {
  if (first_failing(n, bad) >= 0) c.fail(message(error));
}

bool plain_scalar(const Vec& v) { return is_flat_scalar(v.type()) && v.kind() != TypeKind::Stream; }

std::optional<Vec> logical(const LiftedCall& c, const Vec& a, const Vec& b) {
  int64_t n = a.size();
  return with_scalar(a.kind(), [&](auto tag) -> std::optional<Vec> {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      switch (c.id) {
        case PrimId::Or: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] || y[i]; });
        case PrimId::And: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] && y[i]; });
        case PrimId::Xor: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] != y[i]; });
        case PrimId::Nor: return map_n<bool>(c.result, n, [&](int64_t i) { return !(x[i] || y[i]); });
        case PrimId::Nand: return map_n<bool>(c.result, n, [&](int64_t i) { return !(x[i] && y[i]); });
        default: return std::nullopt;
      }
    } else if constexpr (is_int_v<T>) {
      switch (c.id) {
        case PrimId::Or: return map_n<T>(c.result, n, [&](int64_t i) { return T(x[i] | y[i]); });
        case PrimId::And: return map_n<T>(c.result, n, [&](int64_t i) { return T(x[i] & y[i]); });
        case PrimId::Xor: return map_n<T>(c.result, n, [&](int64_t i) { return T(x[i] ^ y[i]); });
        case PrimId::Nor: return map_n<T>(c.result, n, [&](int64_t i) { return T(~(x[i] | y[i])); });
        case PrimId::Nand: return map_n<T>(c.result, n, [&](int64_t i) { return T(~(x[i] & y[i])); });
        default: return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
  });
}

std::optional<Vec> compare(const LiftedCall& c, const Vec& a, const Vec& b) {
  int64_t n = a.size();
  return with_scalar(a.kind(), [&](auto tag) -> std::optional<Vec> {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    switch (c.id) {
      case PrimId::Eq: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] == y[i]; });
      case PrimId::Ne: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] != y[i]; });
      case PrimId::Lt: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] < y[i]; });
      case PrimId::Gt: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] > y[i]; });
      case PrimId::Le: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] <= y[i]; });
      case PrimId::Ge: return map_n<bool>(c.result, n, [&](int64_t i) { return x[i] >= y[i]; });
      default: return std::nullopt;
    }
  });
}

std::optional<Vec> arith(const LiftedCall& c, const Vec& a, const Vec& b) {
  int64_t n = a.size();
  return with_scalar(a.kind(), [&](auto tag) -> std::optional<Vec> {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    if constexpr (is_int_v<T>) {
      using U = std::make_unsigned_t<T>;
      switch (c.id) {
        case PrimId::Add: return map_n<T>(c.result, n, [&](int64_t i) { return T(U(x[i]) + U(y[i])); });
        case PrimId::Sub: return map_n<T>(c.result, n, [&](int64_t i) { return T(U(x[i]) - U(y[i])); });
        case PrimId::Mul: return map_n<T>(c.result, n, [&](int64_t i) { return T(U(x[i]) * U(y[i])); });
        case PrimId::Div:
          check(c, n, [&](int64_t i) { return y[i] == 0; }, RuntimeErrorId::DivideByZero);
          // min_int / -1 wraps to min_int (library.md §14 row 16).
          return map_n<T>(c.result, n, [&](int64_t i) { return y[i] == -1 ? T(U{0} - U(x[i])) : T(x[i] / y[i]); });
        default: return std::nullopt;
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      switch (c.id) {
        case PrimId::Add: return map_n<T>(c.result, n, [&](int64_t i) { return x[i] + y[i]; });
        case PrimId::Sub: return map_n<T>(c.result, n, [&](int64_t i) { return x[i] - y[i]; });
        case PrimId::Mul: return map_n<T>(c.result, n, [&](int64_t i) { return x[i] * y[i]; });
        case PrimId::Div: return map_n<T>(c.result, n, [&](int64_t i) { return x[i] / y[i]; });
        default: return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
  });
}

/// The int (or i32) operand of a shift count or power, widened.
std::vector<int64_t> int_operand(const Vec& v) {
  std::vector<int64_t> out(static_cast<size_t>(v.size()));
  if (v.kind() == TypeKind::I32) {
    const int32_t* p = v.data<int32_t>();
    parallel_for(v.size(), [&](int64_t i) { out[static_cast<size_t>(i)] = p[i]; });
  } else {
    const int64_t* p = v.data<int64_t>();
    parallel_for(v.size(), [&](int64_t i) { out[static_cast<size_t>(i)] = p[i]; });
  }
  return out;
}

std::optional<Vec> power_prim(const LiftedCall& c, const Vec& a, const Vec& pv) {
  if (pv.kind() != TypeKind::Int && pv.kind() != TypeKind::I32) return std::nullopt;
  int64_t n = a.size();
  std::vector<int64_t> p = int_operand(pv);
  return with_scalar(a.kind(), [&](auto tag) -> std::optional<Vec> {
    using T = typename decltype(tag)::type;
    if constexpr (is_number_v<T>) {
      check(c, n, [&](int64_t i) { return p[static_cast<size_t>(i)] < 0; }, RuntimeErrorId::NegativePower);
      const T* x = a.data<T>();
      if constexpr (is_int_v<T>) {
        using U = std::make_unsigned_t<T>;
        return map_n<T>(c.result, n, [&](int64_t i) {
          return T(lang::eval::power<U>(U(x[i]), p[static_cast<size_t>(i)], U{1}, [](U s, U t) { return U(s * t); }));
        });
      } else {
        return map_n<T>(c.result, n, [&](int64_t i) {
          return lang::eval::power<T>(x[i], p[static_cast<size_t>(i)], T(1), [](T s, T t) { return s * t; });
        });
      }
    } else {
      return std::nullopt;
    }
  });
}

std::optional<Vec> shift(const LiftedCall& c, const Vec& a, const Vec& b) {
  if ((a.kind() != TypeKind::Int && a.kind() != TypeKind::I32) || (b.kind() != TypeKind::Int && b.kind() != TypeKind::I32))
    return std::nullopt;
  int64_t n = a.size();
  bool left = c.id == PrimId::Lshift;
  std::vector<int64_t> k = int_operand(b);
  int64_t width = a.kind() == TypeKind::I32 ? 32 : 64;
  check(c, n, [&](int64_t i) { return k[static_cast<size_t>(i)] < 0 || k[static_cast<size_t>(i)] >= width; },
        left ? RuntimeErrorId::LshiftRange : RuntimeErrorId::RshiftRange);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    using U = std::make_unsigned_t<T>;
    const T* x = a.data<T>();
    if (left) return map_n<T>(c.result, n, [&](int64_t i) { return T(U(x[i]) << k[static_cast<size_t>(i)]); });
    return map_n<T>(c.result, n, [&](int64_t i) { return T(x[i] >> k[static_cast<size_t>(i)]); });
  };
  return a.kind() == TypeKind::I32 ? run(Tag<int32_t>{}) : run(Tag<int64_t>{});
}

bool out_of_int64(double x) { return !(x >= -9223372036854775808.0 && x < 9223372036854775808.0); }

/// float -> int by a rounding function, failing like the interpreter's to_int64.
template <class Round>
Vec float_to_int(const LiftedCall& c, const Vec& a, Round round, RuntimeErrorId out_of_range) {
  const double* x = a.data<double>();
  int64_t n = a.size();
  check(c, n, [&](int64_t i) { return out_of_int64(round(x[i])); }, out_of_range);
  return map_n<int64_t>(c.result, n, [&](int64_t i) { return static_cast<int64_t>(round(x[i])); });
}

std::optional<Vec> math(const LiftedCall& c, const Vec& a) {
  if (a.kind() != TypeKind::Float) return std::nullopt;
  const double* x = a.data<double>();
  int64_t n = a.size();
  auto f = [&](double (*fn)(double)) { return map_n<double>(c.result, n, [&](int64_t i) { return fn(x[i]); }); };
  switch (c.id) {
    case PrimId::Sqrt:
      check(c, n, [&](int64_t i) { return x[i] < 0; }, RuntimeErrorId::SqrtNegative);
      return f([](double v) { return std::sqrt(v); });
    case PrimId::Ln:
      check(c, n, [&](int64_t i) { return x[i] < 0; }, RuntimeErrorId::LnNegative);
      return f([](double v) { return std::log(v); });
    case PrimId::Exp: return f([](double v) { return std::exp(v); });
    case PrimId::Sin: return f([](double v) { return std::sin(v); });
    case PrimId::Cos: return f([](double v) { return std::cos(v); });
    case PrimId::Tan: return f([](double v) { return std::tan(v); });
    case PrimId::Asin: return f([](double v) { return std::asin(v); });
    case PrimId::Acos: return f([](double v) { return std::acos(v); });
    case PrimId::Atan: return f([](double v) { return std::atan(v); });
    case PrimId::Sinh: return f([](double v) { return std::sinh(v); });
    case PrimId::Cosh: return f([](double v) { return std::cosh(v); });
    case PrimId::Tanh: return f([](double v) { return std::tanh(v); });
    case PrimId::Ceil:
      return float_to_int(c, a, [](double v) { return std::ceil(v); }, RuntimeErrorId::CeilRange);
    case PrimId::Floor:
      return float_to_int(c, a, [](double v) { return std::floor(v); }, RuntimeErrorId::FloorRange);
    case PrimId::Trunc:
      return float_to_int(c, a, [](double v) { return std::trunc(v); }, RuntimeErrorId::TruncRange);
    // ndp's round is floor(x + 0.5) (library.md §14 row 5).
    case PrimId::Round:
      return float_to_int(c, a, [](double v) { return std::floor(v + 0.5); },
                          RuntimeErrorId::RoundRange);
    default: return std::nullopt;
  }
}

std::optional<Vec> convert(const LiftedCall& c, const Vec& a) {
  int64_t n = a.size();
  return with_scalar(a.kind(), [&](auto tag) -> std::optional<Vec> {
    using T = typename decltype(tag)::type;
    if constexpr (is_number_v<T>) {
      const T* x = a.data<T>();
      switch (c.id) {
        case PrimId::ToF64: return map_n<double>(c.result, n, [&](int64_t i) { return static_cast<double>(x[i]); });
        case PrimId::ToF32: return map_n<float>(c.result, n, [&](int64_t i) { return static_cast<float>(x[i]); });
        case PrimId::ToI64:
          if constexpr (is_int_v<T>) {
            return map_n<int64_t>(c.result, n, [&](int64_t i) { return static_cast<int64_t>(x[i]); });
          } else {
            auto t = [&](int64_t i) { return std::trunc(static_cast<double>(x[i])); };
            check(c, n, [&](int64_t i) { return out_of_int64(t(i)); }, RuntimeErrorId::I64Range);
            return map_n<int64_t>(c.result, n, [&](int64_t i) { return static_cast<int64_t>(t(i)); });
          }
        case PrimId::ToI32:
          if constexpr (is_int_v<T>) {
            return map_n<int32_t>(c.result, n, [&](int64_t i) { return static_cast<int32_t>(static_cast<uint32_t>(x[i])); });
          } else {
            auto t = [&](int64_t i) { return std::trunc(static_cast<double>(x[i])); };
            check(c, n, [&](int64_t i) { return !(t(i) >= -2147483648.0 && t(i) <= 2147483647.0); },
                  RuntimeErrorId::I32Range);
            return map_n<int32_t>(c.result, n, [&](int64_t i) { return static_cast<int32_t>(t(i)); });
          }
        default: return std::nullopt;
      }
    } else {
      return std::nullopt;
    }
  });
}

std::optional<Vec> select(const LiftedCall& c, const Vec& f, const Vec& a, const Vec& b) {
  int64_t n = f.size();
  const bool* flag = f.data<bool>();
  if (!is_flat_scalar(a.type())) {
    // Structured elements: instance i comes from a (position i) or from b (position n + i).
    Indices idx(static_cast<size_t>(n));
    parallel_for(n, [&](int64_t i) { idx[static_cast<size_t>(i)] = flag[i] ? i : n + i; });
    return take(append(a, b), idx);
  }
  return with_scalar(a.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    return map_n<T>(a.type(), n, [&](int64_t i) { return flag[i] ? x[i] : y[i]; });
  });
}

}  // namespace

std::optional<Vec> native_scalar_prim(const PrimContext&, const LiftedCall& c, std::span<const Vec> a) {
  if (c.id == PrimId::Select) return select(c, a[0], a[1], a[2]);
  for (const Vec& v : a)
    if (!plain_scalar(v)) return std::nullopt;
  int64_t n = a[0].size();
  switch (c.id) {
    case PrimId::Not:
      return with_scalar(a[0].kind(), [&](auto tag) -> std::optional<Vec> {
        using T = typename decltype(tag)::type;
        const T* x = a[0].data<T>();
        if constexpr (std::is_same_v<T, bool>) return map_n<bool>(c.result, n, [&](int64_t i) { return !x[i]; });
        else if constexpr (is_int_v<T>) return map_n<T>(c.result, n, [&](int64_t i) { return T(~x[i]); });
        else return std::nullopt;
      });
    case PrimId::Or: case PrimId::And: case PrimId::Xor: case PrimId::Nor: case PrimId::Nand:
      return logical(c, a[0], a[1]);
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le: case PrimId::Ge:
      return compare(c, a[0], a[1]);
    case PrimId::Add: case PrimId::Sub: case PrimId::Mul: case PrimId::Div:
      return arith(c, a[0], a[1]);
    case PrimId::Negate:
      return with_scalar(a[0].kind(), [&](auto tag) -> std::optional<Vec> {
        using T = typename decltype(tag)::type;
        const T* x = a[0].data<T>();
        if constexpr (is_int_v<T>) {
          using U = std::make_unsigned_t<T>;
          return map_n<T>(c.result, n, [&](int64_t i) { return T(U{0} - U(x[i])); });
        } else if constexpr (std::is_floating_point_v<T>) {
          return map_n<T>(c.result, n, [&](int64_t i) { return -x[i]; });
        } else {
          return std::nullopt;
        }
      });
    case PrimId::Power: return power_prim(c, a[0], a[1]);
    case PrimId::Rem: {
      if (a[0].kind() != TypeKind::Int || a[1].kind() != TypeKind::Int) return std::nullopt;
      const int64_t* x = a[0].data<int64_t>();
      const int64_t* y = a[1].data<int64_t>();
      check(c, n, [&](int64_t i) { return y[i] == 0; }, RuntimeErrorId::RemByZero);
      return map_n<int64_t>(c.result, n, [&](int64_t i) { return y[i] == -1 ? int64_t{0} : x[i] % y[i]; });
    }
    case PrimId::Lshift: case PrimId::Rshift: return shift(c, a[0], a[1]);
    case PrimId::Sqrt: case PrimId::Ln: case PrimId::Exp: case PrimId::Sin: case PrimId::Cos:
    case PrimId::Tan: case PrimId::Asin: case PrimId::Acos: case PrimId::Atan: case PrimId::Sinh:
    case PrimId::Cosh: case PrimId::Tanh: case PrimId::Ceil: case PrimId::Floor: case PrimId::Trunc:
    case PrimId::Round:
      return math(c, a[0]);
    case PrimId::Expt: {
      if (a[0].kind() != TypeKind::Float || a[1].kind() != TypeKind::Float) return std::nullopt;
      const double* x = a[0].data<double>();
      const double* y = a[1].data<double>();
      check(c, n, [&](int64_t i) { return x[i] < 0; }, RuntimeErrorId::LnNegative);
      return map_n<double>(c.result, n, [&](int64_t i) { return std::pow(x[i], y[i]); });
    }
    case PrimId::Btoi: {
      if (a[0].kind() != TypeKind::Bool) return std::nullopt;
      const bool* x = a[0].data<bool>();
      return map_n<int64_t>(c.result, n, [&](int64_t i) { return int64_t{x[i] ? 1 : 0}; });
    }
    case PrimId::CodeChar: {
      if (a[0].kind() != TypeKind::Int) return std::nullopt;
      const int64_t* x = a[0].data<int64_t>();
      check(c, n, [&](int64_t i) { return x[i] < 0 || x[i] > 255; }, RuntimeErrorId::CharCodeRange);
      return map_n<uint8_t>(c.result, n, [&](int64_t i) { return static_cast<uint8_t>(x[i]); });
    }
    case PrimId::CharCode: {
      if (a[0].kind() != TypeKind::Char) return std::nullopt;
      const uint8_t* x = a[0].data<uint8_t>();
      return map_n<int64_t>(c.result, n, [&](int64_t i) { return static_cast<int64_t>(x[i]); });
    }
    case PrimId::ToFloat: {
      if (a[0].kind() != TypeKind::Int) return std::nullopt;
      const int64_t* x = a[0].data<int64_t>();
      return map_n<double>(c.result, n, [&](int64_t i) { return static_cast<double>(x[i]); });
    }
    case PrimId::ToI32: case PrimId::ToF32: case PrimId::ToI64: case PrimId::ToF64:
      return convert(c, a[0]);
    default: return std::nullopt;
  }
}

}  // namespace ndp::exec::host
