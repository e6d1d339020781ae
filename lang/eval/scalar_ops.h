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

/// The number of elements of the range [s:e:d], for d >= 1 and e >= s: the width in unsigned
/// arithmetic, since e - s may pass int64's largest.
inline uint64_t range_length(int64_t s, int64_t d, int64_t e) {
  const uint64_t width = static_cast<uint64_t>(e) - static_cast<uint64_t>(s);
  const uint64_t step = static_cast<uint64_t>(d);
  return width / step + (width % step != 0);
}

}  // namespace ndp::lang::eval
