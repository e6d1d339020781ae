// Thread level: what *_combine folds (Note [GPU combine] in combine.cu). Its operators, which
// are ops.h's as the sequential fold applies them, and the associative operator that reduces a
// bin; the segmented pair a bin is scanned as; and the bin of a sorted position.
#pragma once

#include "operators.cuh"

namespace ndp::runtime::gpu::device {

/// The CPU runtime's OpFn::apply (runtime/cpu/ops.h): acc is the earlier operand. (Unlike Fn's,
/// and, or and xor of bools are logical.)
template <Op O, class T>
__device__ T combine_op(T acc, T x) {
  if constexpr (O == Op::plus || O == Op::mult) {
    if constexpr (is_float_v<T>) {
      return O == Op::plus ? acc + x : acc * x;
    } else if constexpr (sizeof(T) == 8) {
      using U = unsigned long long;
      return static_cast<T>(O == Op::plus ? U(acc) + U(x) : U(acc) * U(x));
    } else {
      using U = unsigned;
      return static_cast<T>(O == Op::plus ? U(acc) + U(x) : U(acc) * U(x));
    }
  } else if constexpr (O == Op::max) {
    return x > acc ? x : acc;
  } else if constexpr (O == Op::min) {
    return x < acc ? x : acc;
  } else if constexpr (sizeof(T) == 1) {  // bool
    if constexpr (O == Op::and_) return acc && x;
    else if constexpr (O == Op::or_) return acc || x;
    else return acc != x;
  } else {
    if constexpr (O == Op::and_) return static_cast<T>(acc & x);
    else if constexpr (O == Op::or_) return static_cast<T>(acc | x);
    else return static_cast<T>(acc ^ x);
  }
}

/// The associative operator that reduces a bin: combine_op, except float max/min, where a NaN on
/// the left is the identity (Note [GPU combine]).
template <Op O, class T>
__device__ T bin_op(T a, T b) {
  if constexpr (is_float_v<T> && (O == Op::max || O == Op::min)) {
    if (a != a) return b;
  }
  return combine_op<O, T>(a, b);
}

/// A segmented-scan element: `head` says a bin starts at or before it (within what the pair
/// covers); `value` folds the elements since the last head.
template <class T>
struct BinPair {
  int head;
  T value;
};

template <Op O, class T>
struct BinPairOp {
  __device__ BinPair<T> operator()(const BinPair<T>& a, const BinPair<T>& b) const {
    return BinPair<T>{a.head | b.head, b.head ? b.value : bin_op<O, T>(a.value, b.value)};
  }
};

/// The target (bin) of sorted position q: keys are 32- or 64-bit.
__device__ inline long long key_at(const void* keys, int key_bytes, long long q) {
  return key_bytes == 8 ? static_cast<long long>(static_cast<const unsigned long long*>(keys)[q])
                        : static_cast<long long>(static_cast<const unsigned*>(keys)[q]);
}

}  // namespace ndp::runtime::gpu::device
