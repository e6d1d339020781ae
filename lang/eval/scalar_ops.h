// Scalar semantics shared by every executor (interpreter, cpu backend), where an identical
// instruction sequence is what makes results agree bit for bit.
#pragma once

#include <cstdint>

namespace ndp::lang::eval {

/// base^p for p >= 0 by square-and-multiply from the low bit. Floats depend on the order of the
/// multiplications, so every backend computes powers with exactly this loop.
template <class T, class Mul>
T power(T base, int64_t p, T one, Mul mul) {
  T result = one;
  while (p > 0) {
    if (p & 1) result = mul(result, base);
    p >>= 1;
    if (p > 0) base = mul(base, base);
  }
  return result;
}

}  // namespace ndp::lang::eval
