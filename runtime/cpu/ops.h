// Element types and the scan/reduce/combine operators with their identities (library.md §5).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "ndp/runtime.h"
#include "status.h"

namespace ndp::runtime {

static_assert(sizeof(bool) == 1, "bool elements are stored in one byte");

/// The C++ storage types of the six element types: i64 f64 i32 f32 bool char(uint8_t).
template <class T>
inline constexpr bool is_element_v =
    std::is_same_v<T, int64_t> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
    std::is_same_v<T, float> || std::is_same_v<T, bool> || std::is_same_v<T, uint8_t>;

enum class Op : int {
  plus = NDP_OP_PLUS,
  mult = NDP_OP_MULT,
  max = NDP_OP_MAX,
  min = NDP_OP_MIN,
  and_ = NDP_OP_AND,
  or_ = NDP_OP_OR,
  xor_ = NDP_OP_XOR,
};

enum class ScanKind { exclusive, inclusive };
enum class Order { ascending = NDP_ASCENDING, descending = NDP_DESCENDING };

template <class T>
inline constexpr bool is_signed_int_v = std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t>;

/// Which operators an element type admits: + * on numbers, max min on ordinals (numbers and
/// char), and or xor on logicals (ints and bool).
template <Op O, class T>
constexpr bool supports() {
  constexpr bool number = is_signed_int_v<T> || std::is_floating_point_v<T>;
  if constexpr (O == Op::plus || O == Op::mult) return number;
  if constexpr (O == Op::max || O == Op::min) return number || std::is_same_v<T, uint8_t>;
  return is_signed_int_v<T> || std::is_same_v<T, bool>;
}

/// One operator on one element type: `identity()` and `apply(acc, x)`, where acc is the
/// left (earlier) operand. Integer + and * run in unsigned arithmetic so they wrap without
/// undefined behaviour. max/min replace acc only when x is strictly better, so a NaN never
/// displaces a number and the leftmost of equal values (-0.0 vs 0.0) wins.
template <Op O, class T>
struct OpFn {
  static_assert(supports<O, T>(), "operator not defined for this element type");
  using value_type = T;
  static constexpr Op op = O;

  static constexpr T identity() {
    if constexpr (O == Op::plus || O == Op::or_ || O == Op::xor_) return T(0);
    else if constexpr (O == Op::mult) return T(1);
    else if constexpr (O == Op::and_) {
      if constexpr (std::is_same_v<T, bool>) return true;
      else return T(-1);
    } else if constexpr (O == Op::max) {
      if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::lowest();
    } else {
      if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::infinity();
      else return std::numeric_limits<T>::max();
    }
  }

  static constexpr T apply(T acc, T x) {
    if constexpr (O == Op::plus || O == Op::mult) {
      if constexpr (is_signed_int_v<T>) {
        using U = std::make_unsigned_t<T>;
        return O == Op::plus ? T(U(acc) + U(x)) : T(U(acc) * U(x));
      } else {
        return O == Op::plus ? acc + x : acc * x;
      }
    } else if constexpr (O == Op::max) {
      return x > acc ? x : acc;
    } else if constexpr (O == Op::min) {
      return x < acc ? x : acc;
    } else if constexpr (std::is_same_v<T, bool>) {
      if constexpr (O == Op::and_) return acc && x;
      else if constexpr (O == Op::or_) return acc || x;
      else return acc != x;
    } else {
      if constexpr (O == Op::and_) return T(acc & x);
      else if constexpr (O == Op::or_) return T(acc | x);
      else return T(acc ^ x);
    }
  }
};

/// Calls fn(OpFn<O, T>{}) for the runtime operator `op`; an operator the element type does
/// not admit gives NDP_UNSUPPORTED without instantiating fn for it.
template <class T, class Fn>
Status with_op(Op op, Fn&& fn) {
  auto call = [&](auto tag) -> Status {
    constexpr Op o = decltype(tag)::value;
    if constexpr (supports<o, T>()) return fn(OpFn<o, T>{});
    else return status_of(NDP_UNSUPPORTED);
  };
  switch (op) {
    case Op::plus: return call(std::integral_constant<Op, Op::plus>{});
    case Op::mult: return call(std::integral_constant<Op, Op::mult>{});
    case Op::max: return call(std::integral_constant<Op, Op::max>{});
    case Op::min: return call(std::integral_constant<Op, Op::min>{});
    case Op::and_: return call(std::integral_constant<Op, Op::and_>{});
    case Op::or_: return call(std::integral_constant<Op, Op::or_>{});
    case Op::xor_: return call(std::integral_constant<Op, Op::xor_>{});
  }
  return status_of(NDP_INVALID_ARGUMENT);
}

}  // namespace ndp::runtime

/// Instantiates X(T) for every element storage type (templates are defined in .cpp files).
#define NDP_RT_FOR_EACH_ELEMENT(X) X(int64_t) X(double) X(int32_t) X(float) X(bool) X(uint8_t)
