// Block-level building blocks of the segmented scans and reductions (scan.cu), shared with
// the descriptor and selection kernels (segdes.cu, pack.cu) and open to any other kernel file.
//
// Note [Tiled segmented scan]
// The data is cut into tiles of kTile elements, one block per tile (whatever the segment
// lengths), and scanned as (value, head flag) pairs under the segmented operator
//     (v1, f1) · (v2, f2) = (f2 ? v2 : v1 ⊕ v2, f1 | f2),
// which is associative whenever ⊕ is, so cub::BlockScan does the in-tile work. A tile learns
// its segment heads from two binary searches over the offsets (the boundaries j with
// t0 < off(j) <= t1) and marks them in shared memory, so the work per tile is its elements
// plus the boundaries falling in it: O(count + total) in all, at every segment shape.
// Reduce-then-scan: phase 1 writes each tile's pair (tile_aggregates), phase 2 (one block)
// turns them into the value each tile starts from (tile_carries), phase 3 rescans every tile
// from its carry and writes the scan, or the reduction of every segment the tile owns (those
// whose end lies in (t0, t1]; tile 0 also owns the leading empty segments).
// Every partial result is a fold that starts from the identity, as the CPU's sequential fold
// does, so max/min never see a NaN as their left operand and keep the CPU's semantics.
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

/// The first j in [0, count] with off(j) > x, or count + 1 when there is none.
__device__ inline long long upper_bound_off(const Segs& s, long long x) {
  if (!s.offsets) {
    if (s.regular_length <= 0) return x < 0 ? 0 : s.count + 1;
    long long j = x < 0 ? 0 : x / s.regular_length + 1;
    return j < s.count + 1 ? j : s.count + 1;
  }
  long long lo = 0, hi = s.count + 1;
  while (lo < hi) {
    long long mid = lo + (hi - lo) / 2;
    if (s.offsets[mid] > x) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/// Where tile `tile` lies: elements [t0, t0 + n); the boundaries j in [a, b) satisfy
/// t0 < off(j) <= t0 + n; the segment holding t0 is a - 1, and head0 says it starts at t0.
struct TileSpan {
  long long t0, n, a, b;
  bool head0;
  __device__ TileSpan(const Segs& s, long long tile) {
    t0 = tile * kTile;
    long long rest = s.total - t0;
    n = rest < kTile ? rest : kTile;
    a = upper_bound_off(s, t0);
    b = upper_bound_off(s, t0 + n);
    head0 = seg_off(s, a - 1) == t0;
  }
  /// The segments this tile reports in a reduction: k in [first_owned, b - 1).
  __device__ long long first_owned(long long tile) const { return tile == 0 ? 0 : a - 1; }
};

/// Shared memory of one tile: values (padded) and head flags (one byte each, read eight at a
/// time as one word per thread).
template <class T>
struct TileSmem {
  T vals[kPaddedTile];
  alignas(8) unsigned char heads[kTile];
};

/// Marks the segment heads of a tile in sm.heads (all threads; ends with a barrier).
template <class T>
__device__ void mark_heads(const Segs& s, const TileSpan& ts, TileSmem<T>& sm) {
  auto* words = reinterpret_cast<unsigned long long*>(sm.heads);
  for (int i = threadIdx.x; i < kTile / 8; i += blockDim.x) words[i] = 0;
  __syncthreads();
  if (threadIdx.x == 0 && ts.head0) sm.heads[0] = 1;
  for (long long j = ts.a + threadIdx.x; j < ts.b; j += blockDim.x) {
    long long o = seg_off(s, j) - ts.t0;
    if (o < ts.n) sm.heads[o] = 1;
  }
  __syncthreads();
}

/// The thread's eight head flags (item i in byte i).
template <class T>
__device__ __forceinline__ unsigned long long thread_heads(const TileSmem<T>& sm) {
  static_assert(kScanItems == 8, "one 8-byte word of head flags per thread");
  return reinterpret_cast<const unsigned long long*>(sm.heads)[threadIdx.x];
}

__device__ __forceinline__ bool head_at(unsigned long long heads, int i) { return (heads >> (8 * i)) & 0xff; }

/// Loads a tile's elements into sm.vals, converted by `load` (In -> T); ends with a barrier.
template <class T, class In, class Load>
__device__ void load_tile(const In* in, const TileSpan& ts, TileSmem<T>& sm, Load load) {
  for (int i = threadIdx.x; i < ts.n; i += blockDim.x) sm.vals[padded(i)] = load(in[ts.t0 + i]);
  __syncthreads();
}

/// The segmented fold of the thread's items: (fold after its last head, any head).
template <class F>
__device__ SegPair<typename F::value_type> thread_fold(const typename F::value_type (&x)[kScanItems],
                                                       unsigned long long heads, int valid) {
  using T = typename F::value_type;
  SegPair<T> p{F::identity(), 0};
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {
    if (i < valid) {
      if (head_at(heads, i)) {
        p.v = F::apply(F::identity(), x[i]);
        p.f = 1;
      } else {
        p.v = F::apply(p.v, x[i]);
      }
    }
  }
  return p;
}

template <class T>
struct Identity {
  __device__ T operator()(T x) const { return x; }
};

/// Phase 1: agg[tile] = the tile's segmented fold.
template <class F, class In, class Load>
__device__ void tile_aggregates(const In* in, Segs s, SegPair<typename F::value_type>* agg, Load load) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kScanBlock>;
  __shared__ TileSmem<T> sm;
  __shared__ typename Scan::TempStorage scan_storage;
  long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    TileSpan ts(s, tile);
    mark_heads(s, ts, sm);
    load_tile(in, ts, sm, load);
    int base = threadIdx.x * kScanItems;
    int valid = static_cast<int>(ts.n) - base;
    T x[kScanItems];
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) x[i] = i < valid ? sm.vals[padded(base + i)] : F::identity();
    SegPair<T> mine = thread_fold<F>(x, thread_heads(sm), valid), incl;
    Scan(scan_storage).InclusiveScan(mine, incl, SegOp<F>());
    if (threadIdx.x == kScanBlock - 1) agg[tile] = incl;
    __syncthreads();
  }
}

/// Phase 2 (one block of kCarryBlock threads): carry[t] = the value tile t starts from.
constexpr int kCarryBlock = 1024;

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

template <class F>
__device__ void tile_carries(const SegPair<typename F::value_type>* agg, long long ntiles,
                             typename F::value_type* carry) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kCarryBlock>;
  __shared__ typename Scan::TempStorage scan_storage;
  CarryPrefix<F> prefix{SegPair<T>{F::identity(), 0}};
  for (long long base = 0; base < ntiles; base += kCarryBlock) {
    long long i = base + threadIdx.x;
    SegPair<T> in = i < ntiles ? agg[i] : SegPair<T>{F::identity(), 0}, out;
    Scan(scan_storage).ExclusiveScan(in, out, SegOp<F>(), prefix);
    if (i < ntiles) carry[i] = out.v;
    __syncthreads();
  }
}

/// Phase 3 core: rescans the tile in sm from `carry_in` (inclusive or exclusive) and leaves the
/// results in sm.vals (ends with a barrier). Callers have loaded the tile and marked its heads.
template <class F>
__device__ void scan_tile_in_smem(const TileSpan& ts, TileSmem<typename F::value_type>& sm,
                                  typename cub::BlockScan<SegPair<typename F::value_type>, kScanBlock>::TempStorage& st,
                                  typename F::value_type carry_in, bool inclusive) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kScanBlock>;
  int base = threadIdx.x * kScanItems;
  int valid = static_cast<int>(ts.n) - base;
  T x[kScanItems];
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) x[i] = i < valid ? sm.vals[padded(base + i)] : F::identity();
  unsigned long long heads = thread_heads(sm);
  SegPair<T> mine = thread_fold<F>(x, heads, valid), before;
  Scan(st).ExclusiveScan(mine, before, SegPair<T>{carry_in, 0}, SegOp<F>());
  __syncthreads();  // every thread has read its items before any is overwritten
  T acc = before.v;
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {
    if (i < valid) {
      if (head_at(heads, i)) acc = F::identity();
      T y;
      if (inclusive) {
        acc = F::apply(acc, x[i]);
        y = acc;
      } else {
        y = acc;
        acc = F::apply(acc, x[i]);
      }
      sm.vals[padded(base + i)] = y;
    }
  }
  __syncthreads();
}

/// Phase 3 of a scan: out = the segmented scan (out may be in).
template <class F>
__device__ void scan_tiles(const typename F::value_type* in, Segs s, const typename F::value_type* carry,
                           bool inclusive, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kScanBlock>;
  __shared__ TileSmem<T> sm;
  __shared__ typename Scan::TempStorage scan_storage;
  long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    TileSpan ts(s, tile);
    mark_heads(s, ts, sm);
    load_tile(in, ts, sm, Identity<T>());
    scan_tile_in_smem<F>(ts, sm, scan_storage, carry ? carry[tile] : F::identity(), inclusive);
    for (int i = threadIdx.x; i < ts.n; i += blockDim.x) out[ts.t0 + i] = sm.vals[padded(i)];
    __syncthreads();
  }
}

/// Phase 3 of a reduction: out[k] for every segment k a tile owns (Note [Tiled segmented
/// scan]). Needs s.total > 0; with no elements every segment is the identity (host fills it).
template <class F, class In, class Load>
__device__ void reduce_tiles(const In* in, Segs s, const typename F::value_type* carry, typename F::value_type* out,
                             Load load) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kScanBlock>;
  __shared__ TileSmem<T> sm;
  __shared__ typename Scan::TempStorage scan_storage;
  long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    TileSpan ts(s, tile);
    mark_heads(s, ts, sm);
    load_tile(in, ts, sm, load);
    scan_tile_in_smem<F>(ts, sm, scan_storage, carry ? carry[tile] : F::identity(), true);
    for (long long k = ts.first_owned(tile) + threadIdx.x; k < ts.b - 1; k += blockDim.x) {
      long long b = seg_off(s, k), e = seg_off(s, k + 1);
      out[k] = e == b ? F::identity() : sm.vals[padded(static_cast<int>(e - 1 - ts.t0))];
    }
    __syncthreads();
  }
}

}  // namespace ndp_gpu
