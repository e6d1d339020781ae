// Thread level: the operators of the scans and reductions (runtime/cpu/ops.h on the device) and
// the segmented operator on (value, head flag) pairs that every segmented pass folds with.
//
// Note [Tiled segmented scan]
// Data cut into tiles is scanned as (value, head flag) pairs under the segmented operator
//     (v1, f1) · (v2, f2) = (f2 ? v2 : v1 ⊕ v2, f1 | f2),
// which is associative whenever ⊕ is, so block-wide scans (cub::BlockScan) and the combination
// of tiles need no other rule. A tile learns its segment heads from the boundaries j with
// t0 < off(j) <= t1 (found by binary search over the offsets) and marks them in shared memory,
// so the work per tile is its elements plus the boundaries falling in it: O(count + total) in
// all, at every segment shape.
// Every partial result is a fold that starts from the identity, as the CPU's sequential fold
// does, so max/min never see a NaN as their left operand and keep the CPU's semantics; and
// partial results are combined in sequence order (the earlier on the left), since max/min keep
// the leftmost of equal values (+0 and -0) and are not commutative.
#pragma once

#include <cuda/std/limits>
#include <cuda/std/type_traits>

namespace ndp::runtime::gpu::device {

enum class Op { plus, mult, max, min, and_, or_, xor_ };

template <class T>
inline constexpr bool is_float_v = cuda::std::is_floating_point_v<T>;

/// OpFn of ops.h on the device: identity() and apply(acc, x), acc the earlier operand.
template <Op O, class T>
struct Fn {
  using value_type = T;
  __device__ static T identity() {
    if constexpr (O == Op::plus || O == Op::or_ || O == Op::xor_) return T(0);
    else if constexpr (O == Op::mult) return T(1);
    else if constexpr (O == Op::and_) {
      if constexpr (sizeof(T) == 1) return T(true);  // bool (and is not defined on char)
      else return T(-1);
    } else if constexpr (O == Op::max) {
      if constexpr (is_float_v<T>) return -cuda::std::numeric_limits<T>::infinity();
      else return cuda::std::numeric_limits<T>::lowest();
    } else {
      if constexpr (is_float_v<T>) return cuda::std::numeric_limits<T>::infinity();
      else return cuda::std::numeric_limits<T>::max();
    }
  }
  __device__ static T apply(T acc, T x) {
    if constexpr (O == Op::plus || O == Op::mult) {
      if constexpr (is_float_v<T>) {
        return O == Op::plus ? acc + x : acc * x;
      } else if constexpr (sizeof(T) == 8) {  // ints wrap: unsigned arithmetic
        using U = unsigned long long;
        return static_cast<T>(O == Op::plus ? U(acc) + U(x) : U(acc) * U(x));
      } else {
        using U = unsigned int;
        return static_cast<T>(O == Op::plus ? U(acc) + U(x) : U(acc) * U(x));
      }
    } else if constexpr (O == Op::max) {
      return x > acc ? x : acc;  // a NaN never displaces acc; the leftmost of equals wins
    } else if constexpr (O == Op::min) {
      return x < acc ? x : acc;
    } else if constexpr (O == Op::and_) {
      return static_cast<T>(acc & x);
    } else if constexpr (O == Op::or_) {
      return static_cast<T>(acc | x);
    } else {
      return static_cast<T>(acc ^ x);
    }
  }
};

/// A value with a head flag: `f` says a segment starts somewhere in the range it summarises,
/// and then `v` is the fold of the range's part after the last head.
template <class T>
struct SegPair {
  T v;
  int f;
};

/// The segmented operator of Note [Tiled segmented scan] (not commutative: a is earlier).
template <class F>
struct SegOp {
  using T = typename F::value_type;
  __device__ SegPair<T> operator()(const SegPair<T>& a, const SegPair<T>& b) const {
    return SegPair<T>{b.f ? b.v : F::apply(a.v, b.v), a.f | b.f};
  }
};

/// F::apply as a binary functor.
template <class F>
struct Apply {
  using T = typename F::value_type;
  __device__ T operator()(T a, T b) const { return F::apply(a, b); }
};

}  // namespace ndp::runtime::gpu::device
