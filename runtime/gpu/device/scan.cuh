// Block-level building blocks of the segmented scans and reductions: the operators, the
// segmented operator on (value, head flag) pairs, and the descriptor look-ups. The scan and
// reduction kernels themselves are in scan_pass.cuh (Note [Single-pass scans and reductions]);
// the tiles of kTile elements below serve the descriptor and selection kernels (segdes.cu,
// pack.cu) and any other kernel file.
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

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/std/limits>
#include <cuda/std/type_traits>

#include "common.cuh"

namespace ndp_gpu {

// ---- operators (runtime/cpu/ops.h, thread level) ----

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

// ---- tiles ----

constexpr int kScanBlock = 256;
constexpr int kScanItems = 8;
constexpr int kTile = kScanBlock * kScanItems;

/// Shared-memory index with one pad slot per 32, so blocked (thread-consecutive) accesses of
/// 4-byte elements do not collide on banks.
__device__ __forceinline__ int padded(int i) { return i + (i >> 5); }
constexpr int kPaddedTile = kTile + kTile / 32;

/// Boundary j of the descriptor: off(0) = 0 ... off(count) = total.
__device__ __forceinline__ long long seg_off(const Segs& s, long long j) {
  return s.offsets ? s.offsets[j] : j * s.regular_length;
}

/// The first j in [lo, hi) with off[j] > x, or hi when there is none (off nondecreasing).
__device__ inline long long upper_bound_in(const long long* off, long long lo, long long hi, long long x) {
  while (lo < hi) {
    long long mid = lo + (hi - lo) / 2;
    if (off[mid] > x) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// The first j in [0, count] with off(j) > x, or count + 1 when there is none.
__device__ inline long long upper_bound_off(const Segs& s, long long x) {
  if (!s.offsets) {
    if (s.regular_length <= 0) return x < 0 ? 0 : s.count + 1;
    long long j = x < 0 ? 0 : x / s.regular_length + 1;
    return j < s.count + 1 ? j : s.count + 1;
  }
  return upper_bound_in(s.offsets, 0, s.count + 1, x);
}

/// Where tile `tile` lies: elements [t0, t0 + n); the boundaries j in [a, b) satisfy
/// t0 < off(j) <= t0 + n; the segment holding t0 is a - 1.
struct TileSpan {
  long long t0, n, a, b;
  TileSpan() = default;
  __device__ TileSpan(const Segs& s, long long tile) {
    t0 = tile * kTile;
    long long rest = s.total - t0;
    n = rest < kTile ? rest : kTile;
    a = upper_bound_off(s, t0);
    b = upper_bound_off(s, t0 + n);
  }
};

/// Shared memory of one tile: values (padded) and head flags (one byte each, read eight at a
/// time as one word per thread).
template <class T>
struct TileSmem {
  T vals[kPaddedTile];
  alignas(8) unsigned char heads[kTile];
};

/// The thread's eight head flags (item i in byte i).
template <class T>
__device__ __forceinline__ unsigned long long thread_heads(const TileSmem<T>& sm) {
  static_assert(kScanItems == 8, "one 8-byte word of head flags per thread");
  return reinterpret_cast<const unsigned long long*>(sm.heads)[threadIdx.x];
}

__device__ __forceinline__ bool head_at(unsigned long long heads, int i) { return (heads >> (8 * i)) & 0xff; }

// ---- sources: where a kernel's input elements come from ----

// A source gives element i (`src(i)`); a batch source (kBatch, fused.cu's) gives a thread's
// items first + j·stride, j < count, in one call instead (`src.items(first, stride, count, out)`).

/// Element i of an array (the scan passes load it as 16-byte words where aligned).
template <class T>
struct ArrayIn {
  static constexpr bool kBatch = false;
  const T* p;
  __device__ __forceinline__ T operator()(long long i) const { return p[i]; }
};

/// Element i of an array, converted (flags read as counts).
template <class In, class Convert>
struct ConvertedIn {
  static constexpr bool kBatch = false;
  const In* p;
  Convert convert;
  __device__ __forceinline__ auto operator()(long long i) const { return convert(p[i]); }
};

/// A flags array as a source of bools.
struct FlagsIn {
  static constexpr bool kBatch = false;
  const unsigned char* p;
  __device__ __forceinline__ bool operator()(long long i) const { return p[i] != 0; }
};

/// The items j < N of this thread at first + j·stride that lie below end: how many there are.
__device__ __forceinline__ int items_below(long long first, long long stride, long long end, int n) {
  if (first >= end) return 0;
  long long c = (end - first + stride - 1) / stride;
  return c < n ? static_cast<int>(c) : n;
}

/// One block's running prefix across the rounds of a block-wide scan (cub's prefix callback,
/// called by warp 0): it returns the fold of the earlier rounds and adds this round's aggregate.
template <class F>
struct CarryPrefix {
  using T = typename F::value_type;
  SegPair<T> running;
  __device__ SegPair<T> operator()(const SegPair<T>& block_aggregate) {
    SegPair<T> old = running;
    running = SegOp<F>()(running, block_aggregate);
    return old;
  }
};

}  // namespace ndp_gpu
