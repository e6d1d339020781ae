// The scan and reduction kernels' bodies (scan.cu, and pack.cu's pack_lengths): flat
// reductions, single-pass scans with decoupled look-back, and segmented reductions in one pass
// over the data plus a small fix-up. Operators and the segmented operator are in scan.cuh.
//
// Note [Single-pass scans and reductions]
// Every element is read once, and a scan writes it once; the tile bookkeeping must stay small
// next to that, at every segment shape.
// * Flat reduction (a descriptor of one segment): every warp folds a contiguous stretch of the
//   array with 16-byte loads, its lanes' results combined by an order-keeping shuffle tree
//   (warp_fold); every block writes one partial, and a second kernel of one block folds the
//   partials in order, together with the unaligned head and tail of the array (under 16 bytes
//   each). No float atomics: the result is the same on every run.
// * Scans: tiles (of ScanShape, Note [Scan tile shape]) are loaded with 16-byte words through
//   shared memory, warp by warp, and folded as values (one segment) or as (value, head flag)
//   pairs (Note [Tiled segmented scan]). A block takes its tiles in order from a ticket
//   counter and learns the value its tile starts from by decoupled look-back (Merrill &
//   Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016): it publishes
//   its aggregate, folds the records of the preceding tiles, the nearest first, a warp of them
//   at a time, until one holds an inclusive prefix, and publishes its own. Tickets rather than
//   block indices order the tiles, so a block only ever waits for tiles held by running
//   blocks, which publish their aggregates without waiting: no deadlock, whatever the
//   scheduling. Where the look-back stops depends on timing, so float + and * may round
//   differently from run to run (the reassociation every parallel scan has); integers and
//   max/min are exact.
// * Segmented reductions: one pass over the tiles (no waiting) writes every
//   segment that ends in the tile, scanned from the identity, and the tile's aggregate pair;
//   a segment that began in an earlier tile thus gets only its part in this tile. Then one
//   block scans the tiles' aggregates (the value each tile starts from, as in a scan) and
//   completes those segments, at most one per tile. A tile in which no segment ends is one
//   segment's part: its aggregate is a plain ordered fold, with no exchange through shared
//   memory and no block scan. The same on every run.
// * Head flags: a tile marks the boundaries off(j) falling in it, j in [a - 1, b), as bytes in
//   shared memory, where a is the first boundary after its first element (upper_bound_off).
//   With an offsets array, a comes from a table computed once per call (one binary search per
//   tile, ndp_seg_tile_bounds), not searched again in every tile of every pass; regular
//   descriptors compute it by division.
#pragma once

#include <cub/block/block_scan.cuh>
#include <cuda/atomic>
#include <cuda/std/type_traits>

#include "scan.cuh"

namespace ndp_gpu {

// ---- geometry ----

constexpr int kPassBlock = 256;
constexpr int kPassWarps = kPassBlock / 32;
/// Resident blocks per SM asked of the segmented tile kernels (__launch_bounds__): left alone
/// they take up to 80 registers a thread, 3 blocks per SM; capped at 64 (no spills), 4 blocks
/// keep more tiles in flight.
constexpr int kPassMinBlocks = 4;
/// The same for the single-pass scans and selections (look-back kernels): while warp 0 looks
/// back, the block's other warps wait at a barrier, so more resident blocks keep more loads in
/// flight. On an H100, 5 blocks (48 registers) against 4 (54): scan_f32 0.72x -> 0.78x CUB,
/// pack 0.76x -> 0.88x; on an H200, 6 (40 registers, a few spilled) against 5: pack 0.88x ->
/// 0.90x, segmented scans 2-5% faster, scan_f32 the same.
constexpr int kLookBackMinBlocks = 6;
/// The fix-up of a segmented reduction: blocks of kCarryBlock threads, each for a chunk of
/// kCarryChunk tiles' aggregates (kCarryItems a thread).
constexpr int kCarryBlock = 256;
constexpr int kCarryItems = 8;
constexpr int kCarryChunk = kCarryBlock * kCarryItems;

/// Elements per thread: 64 bytes (16 elements of 4 bytes, 8 of 8), and 16 one-byte elements.
template <class T>
inline constexpr int kPassItems = sizeof(T) >= 4 ? 64 / static_cast<int>(sizeof(T)) : 16;
/// Elements per 16-byte word.
template <class T>
inline constexpr int kVec = 16 / static_cast<int>(sizeof(T));

/// The shared-memory slot of tile element i: one pad slot per 128 bytes of 4-byte elements (per
/// 16 elements of 8 bytes), so that a warp's blocked reads (each thread its consecutive items)
/// and striped writes (each thread its 16-byte word) fall on distinct banks.
template <class T>
__device__ __forceinline__ int slot(int i) {
  return sizeof(T) == 8 ? i + (i >> 4) : i + (i >> 5);
}

/// The shape of a tile pass: kBlock threads of kItems elements each, a whole number of 16-byte
/// words and of 8-byte words of head flags. The default is kPassBlock × kPassItems<T>; the scans
/// of arrays take larger tiles (Note [Scan tile shape]).
template <int Block, int Items>
struct Shape {
  static constexpr int kBlock = Block;
  static constexpr int kItems = Items;
  static constexpr int kTile = Block * Items;
  static constexpr int kWarps = Block / 32;
};
template <class T>
using PassShape = Shape<kPassBlock, kPassItems<T>>;

// Note [Scan tile shape]
// A single-pass scan pays per tile for a ticket, a look-back and the block barriers around it
// (the block's other warps wait while warp 0 looks back), so larger tiles spend more of their
// time loading. bench/gpu/scan_shapes.cu times shapes against CUB's DeviceScan in one process;
// on an H100 (2^28 elements, session 6), with the tiles moved warp by warp (warp_part):
//   f32: 256 x 16 (the pass default, 6 blocks an SM) 0.81-0.82x CUB, 128 x 24 (CUB's sm_90
//        shape) 0.88x, 128 x 32 0.91x, 256 x 32 (4 blocks) 0.94-0.95x, 256 x 40 0.94x;
//   i64: 256 x 8 0.73-0.76x, 128 x 24 0.91x, 128 x 32 0.93-0.94x, 128 x 40 (4 blocks, 128
//        registers) 0.96-0.99x;
//   segmented f32 scans, 256 x 32 against 256 x 16: 15% faster at segment length 4, 17% at 32
//   and 1024.
// The consumer kernels (fused.cu) keep PassShape: their element function must fit in 64
// registers a thread. One-byte elements keep it too (not measured). Segmented reductions have
// their own (Note [Segmented reduction shape]). Taking the next ticket before storing a tile (to
// hide the atomic's latency) changed nothing beyond noise and was dropped.
template <class T>
using ScanShape = cuda::std::conditional_t<sizeof(T) == 4, Shape<256, 32>,
                                           cuda::std::conditional_t<sizeof(T) == 8, Shape<128, 40>, PassShape<T>>>;
/// Resident blocks asked of the scans with ScanShape (__launch_bounds__): 4 gives the shapes
/// above 64 and 128 registers a thread, no spills.
template <class T>
inline constexpr int kScanMinBlocks = sizeof(T) == 1 ? kLookBackMinBlocks : 4;

// Note [Segmented reduction shape]
// The tile pass of a segmented reduction has no look-back, but the same per-tile barriers. Same
// run on an H100 (bench/gpu/scan_shapes.cu, 2^28 f32, offsets descriptor, % of the device
// copy's bandwidth at segment lengths 1, 4, 32, 2^10, 2^15, 2^20):
//   256 x 16, 4 blocks an SM (PassShape): 77 79 67 66 70 76
//   256 x 16, 5 blocks:                    75 82 70 70 74 76
//   128 x 32, 6 blocks (80 registers):     63 81 71 77 78 81
// Larger tiles pay off once segments are not tiny (fewer, longer tiles per boundary), and lose
// at length 1, where a tile's boundaries are as many as its elements. So reductions of arrays
// whose segments hold 4 elements or more on average take WideReduceShape (the _wide kernels);
// the others, and the consumer kernels (64 registers), keep PassShape. (Loading the next tile
// of the grid stride before reducing the current one measured 1-5% slower and was dropped.)
// Later in session 6: boundaries loaded four at a time, and tiles with no segment end folded
// directly (reduce_seg_tiles), gave 83 82 69 73 79 80 in the benchmark (bench/results/gpu.md).
template <class T>
using WideReduceShape = Shape<128, 2 * kPassItems<T>>;
constexpr int kWideReduceMinBlocks = 6;

/// Shared-memory slots of a tile of S::kTile elements of T (slot<T>).
template <class T, class S>
inline constexpr int kSlots = S::kTile + S::kTile / (sizeof(T) == 8 ? 16 : 32);

// ---- thread and warp level ----

template <class T>
__device__ __forceinline__ unsigned long long to_bits(T v) {
  unsigned long long u = 0;
  memcpy(&u, &v, sizeof(T));
  return u;
}

template <class T>
__device__ __forceinline__ T from_bits(unsigned long long u) {
  T v;
  memcpy(&v, &u, sizeof(T));
  return v;
}

template <class T>
__device__ __forceinline__ T shuffle_down(T v, int d) {
  if constexpr (sizeof(T) == 8) return from_bits<T>(__shfl_down_sync(~0u, to_bits(v), d));
  else return from_bits<T>(__shfl_down_sync(~0u, static_cast<unsigned>(to_bits(v)), d));
}

template <class T>
__device__ __forceinline__ SegPair<T> shuffle_down(SegPair<T> p, int d) {
  return SegPair<T>{shuffle_down(p.v, d), __shfl_down_sync(~0u, p.f, d)};
}

/// F::apply as a binary functor.
template <class F>
struct Apply {
  using T = typename F::value_type;
  __device__ T operator()(T a, T b) const { return F::apply(a, b); }
};

/// Lane 0 receives x(0) op x(1) op ... op x(31) (kLaterFirst: x(31) op ... op x(0)). Every step
/// combines a run of lanes with the run right after it, so the sequence order is kept and op
/// need not commute. The other lanes receive partial folds.
template <bool kLaterFirst = false, class V, class Combine>
__device__ __forceinline__ V warp_fold(V x, Combine op) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    V o = shuffle_down(x, d);  // lanes [lane + d, lane + 2d), the run after this lane's
    if (lane + d < 32) {
      if constexpr (kLaterFirst) x = op(o, x);
      else x = op(x, o);
    }
  }
  return x;
}

/// The kVec<T> elements of a 16-byte word.
template <class T>
struct Word {
  T e[kVec<T>];
};

template <class T>
__device__ __forceinline__ Word<T> load_word(const T* p) {
  uint4 u = *reinterpret_cast<const uint4*>(p);
  Word<T> w;
  memcpy(&w, &u, sizeof u);
  return w;
}

template <class T>
__device__ __forceinline__ void store_word(T* p, const Word<T>& w) {
  uint4 u;
  memcpy(&u, &w, sizeof u);
  *reinterpret_cast<uint4*>(p) = u;
}

__device__ __forceinline__ bool aligned16(const void* p) { return (reinterpret_cast<unsigned long long>(p) & 15) == 0; }

// ---- flat reduction ----

/// The part of a flat array that 16-byte words cover: elements [head, head + words·kVec<T>).
struct AlignedSpan {
  long long head, words;
};

template <class T>
__device__ AlignedSpan aligned_span(const T* p, long long n) {
  long long past = static_cast<long long>((reinterpret_cast<unsigned long long>(p) & 15) / sizeof(T));
  long long head = past == 0 ? 0 : kVec<T> - past;
  if (head > n) head = n;
  return AlignedSpan{head, (n - head) / kVec<T>};
}

/// The fold, in warp order, of each of kWarps warps' lane-0 `acc`, in thread 0 (all threads of
/// the block call it; one barrier; `warp_result`, kWarps slots of shared memory, is free again
/// after the next barrier).
template <class F, int kWarps>
__device__ __forceinline__ typename F::value_type fold_warps(typename F::value_type acc,
                                                             typename F::value_type* warp_result) {
  using T = typename F::value_type;
  if ((threadIdx.x & 31) == 0) warp_result[threadIdx.x >> 5] = acc;
  __syncthreads();
  T b = F::identity();
  if (threadIdx.x == 0)
    for (int i = 0; i < kWarps; ++i) b = F::apply(b, warp_result[i]);
  return b;
}

/// partials[blockIdx.x] = the fold, in warp order, of each warp's lane-0 `acc` (all threads
/// of the block call it).
template <class F>
__device__ __forceinline__ void write_block_partial(typename F::value_type acc, typename F::value_type* partials) {
  __shared__ typename F::value_type warp_result[kPassWarps];
  const typename F::value_type b = fold_warps<F, kPassWarps>(acc, warp_result);
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

/// 16-byte loads per lane in flight per step of reduce_flat_partials: 8 (4 KiB a warp) measured
/// 0.369 ms for 2^28 floats on an H100, against 0.389-0.393 ms with 4.
constexpr int kReduceLoads = 8;

/// partials[block] = the fold of the block's stretch of the aligned words (grid of
/// kPassBlock-thread blocks). Every warp owns a contiguous stretch, so folding its steps in
/// order keeps the sequence order.
template <class F>
__device__ void reduce_flat_partials(const typename F::value_type* in, long long n, typename F::value_type* partials) {
  using T = typename F::value_type;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const AlignedSpan span = aligned_span(in, n);
  const T* body = in + span.head;
  const long long nwarps = static_cast<long long>(gridDim.x) * kPassWarps;
  const long long w = static_cast<long long>(blockIdx.x) * kPassWarps + warp;
  const long long begin = span.words * w / nwarps, end = span.words * (w + 1) / nwarps;
  T acc = F::identity();  // lane 0: the fold of the warp's words so far
  for (long long base = begin; base < end; base += 32 * kReduceLoads) {
    Word<T> word[kReduceLoads] = {};
#pragma unroll
    for (int r = 0; r < kReduceLoads; ++r) {
      long long i = base + r * 32 + lane;
      if (i < end) word[r] = load_word(body + i * kVec<T>);
    }
#pragma unroll
    for (int r = 0; r < kReduceLoads; ++r) {
      T part = F::identity();
      if (base + r * 32 + lane < end) {
#pragma unroll
        for (int c = 0; c < kVec<T>; ++c) part = F::apply(part, word[r].e[c]);
      }
      acc = F::apply(acc, warp_fold(part, Apply<F>()));
    }
  }
  write_block_partial<F>(acc, partials);
}

/// *out = head ⊕ partials[0] ⊕ ... ⊕ partials[nparts - 1] ⊕ tail (one block of kPassBlock).
template <class F>
__device__ void reduce_flat_finish(const typename F::value_type* in, long long n,
                                   const typename F::value_type* partials, int nparts, typename F::value_type* out) {
  using T = typename F::value_type;
  __shared__ T warp_result[kPassWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long lo = static_cast<long long>(nparts) * threadIdx.x / kPassBlock;
  const long long hi = static_cast<long long>(nparts) * (threadIdx.x + 1) / kPassBlock;
  T acc = F::identity();
  for (long long i = lo; i < hi; ++i) acc = F::apply(acc, partials[i]);
  acc = warp_fold(acc, Apply<F>());
  if (lane == 0) warp_result[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    const AlignedSpan span = aligned_span(in, n);
    T r = F::identity();
    for (long long i = 0; i < span.head; ++i) r = F::apply(r, in[i]);
    for (int i = 0; i < kPassWarps; ++i) r = F::apply(r, warp_result[i]);
    for (long long i = span.head + span.words * kVec<T>; i < n; ++i) r = F::apply(r, in[i]);
    *out = r;
  }
}

// ---- tiles of the scans and segmented reductions ----

/// A tile in shared memory: its values in slot order, and (segmented passes) its head flags,
/// one byte per element.
template <class T, class S>
struct PassVals {
  T vals[kSlots<T, S>];
};
template <class T, class S>
struct PassSmem : PassVals<T, S> {
  alignas(16) unsigned char heads[S::kTile];
};

/// Tiles move between global and shared memory warp by warp: warp w owns elements
/// [w·32·kItems, (w + 1)·32·kItems) of its tile, which are the blocked items of its lanes
/// (read_items), and its lanes load and store them striped, lane l taking the warp's elements
/// l, l + 32, ... (16-byte words l, l + 32, ... where the tile is whole and aligned): coalesced,
/// and a warp only touches its own part of shared memory, so a pass with no block-wide data
/// (a flat scan) needs only __syncwarp between the moves and its own items.
template <class S>
__device__ __forceinline__ int warp_part() {
  return (static_cast<int>(threadIdx.x) >> 5) * 32 * S::kItems;
}

/// A thread's share of a tile in registers, between the global loads and shared memory: a
/// whole tile of an aligned array of T as 16-byte words, else as elements of the source (an
/// array, a converted array, a fused map: scan.cuh), and the identity past the tile's end.
/// Fetching first and storing to shared memory later lets a tile's other global loads (its
/// boundaries) overlap the data's.
template <class T, class S>
struct TileFetch {
  T r[S::kItems];
  bool words;
};

template <class F, class S, class Src>
__device__ __forceinline__ TileFetch<typename F::value_type, S> fetch_tile(const Src& src, long long t0, int n) {
  using T = typename F::value_type;
  const int lane = threadIdx.x & 31, part = warp_part<S>();
  TileFetch<T, S> f;
  f.words = false;
  if constexpr (cuda::std::is_same_v<Src, ArrayIn<T>>) {
    if (n == S::kTile && aligned16(src.p)) {
      f.words = true;
#pragma unroll
      for (int j = 0; j < S::kItems / kVec<T>; ++j) {
        const Word<T> w = load_word(src.p + t0 + part + (j * 32 + lane) * kVec<T>);
#pragma unroll
        for (int c = 0; c < kVec<T>; ++c) f.r[j * kVec<T> + c] = w.e[c];
      }
      return f;
    }
  }
  if constexpr (Src::kBatch) {
    // Batches of kPassItems<T> (64 bytes, what a batch source returns at most).
    constexpr int kBatchItems = kPassItems<T>;
#pragma unroll
    for (int c = 0; c < S::kItems; c += kBatchItems) {
      const long long first = part + lane + static_cast<long long>(c) * 32;
      const int count = items_below(first, 32, n, S::kItems - c < kBatchItems ? S::kItems - c : kBatchItems);
      T v[kBatchItems];
      src.items(t0 + first, 32, count, v);
#pragma unroll
      for (int j = 0; j < kBatchItems && c + j < S::kItems; ++j) f.r[c + j] = j < count ? v[j] : F::identity();
    }
  } else {
#pragma unroll
    for (int j = 0; j < S::kItems; ++j) {
      const int i = part + j * 32 + lane;
      f.r[j] = i < n ? static_cast<T>(src(t0 + i)) : F::identity();
    }
  }
  return f;
}

/// Puts a fetched tile into vals (slot order). No barrier.
template <class T, class S>
__device__ __forceinline__ void put_tile(const TileFetch<T, S>& f, T* vals) {
  const int lane = threadIdx.x & 31, part = warp_part<S>();
  if (f.words) {
#pragma unroll
    for (int j = 0; j < S::kItems / kVec<T>; ++j)
#pragma unroll
      for (int c = 0; c < kVec<T>; ++c) vals[slot<T>(part + (j * 32 + lane) * kVec<T> + c)] = f.r[j * kVec<T> + c];
  } else {
#pragma unroll
    for (int j = 0; j < S::kItems; ++j) vals[slot<T>(part + j * 32 + lane)] = f.r[j];
  }
}

/// Stores vals (slot order) to out[t0, t0 + n), as fetch_tile loads. No barrier.
template <class S, class T>
__device__ void store_pass_tile(const T* vals, long long t0, int n, T* out) {
  const int lane = threadIdx.x & 31, part = warp_part<S>();
  if (n == S::kTile && aligned16(out)) {
#pragma unroll
    for (int j = 0; j < S::kItems / kVec<T>; ++j) {
      const int first = part + (j * 32 + lane) * kVec<T>;
      Word<T> w;
#pragma unroll
      for (int c = 0; c < kVec<T>; ++c) w.e[c] = vals[slot<T>(first + c)];
      store_word(out + t0 + first, w);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < S::kItems; ++j) {
    const int i = part + j * 32 + lane;
    if (i < n) out[t0 + i] = vals[slot<T>(i)];
  }
}

/// The thread's items, blocked: items threadIdx.x·N ... of the tile.
template <class T, int N>
__device__ __forceinline__ void read_items(const T* vals, T (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) x[i] = vals[slot<T>(threadIdx.x * N + i)];
}

template <class T, int N>
__device__ __forceinline__ void write_items(T* vals, const T (&x)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) vals[slot<T>(threadIdx.x * N + i)] = x[i];
}

/// The head flags of a thread's N items (item i in byte i).
template <int N>
struct Heads {
  unsigned long long w[(N + 7) / 8];
  __device__ __forceinline__ bool at(int i) const { return (w[i >> 3] >> (8 * (i & 7))) & 0xff; }
};

/// A flat scan's items: no heads.
struct NoHeads {
  __device__ __forceinline__ constexpr bool at(int) const { return false; }
};

template <int N>
__device__ __forceinline__ Heads<N> read_heads(const unsigned char* heads) {
  static_assert(N % 8 == 0, "whole 8-byte words of head flags per thread");
  Heads<N> h;
  const auto* words = reinterpret_cast<const unsigned long long*>(heads) + threadIdx.x * (N / 8);
#pragma unroll
  for (int k = 0; k < N / 8; ++k) h.w[k] = words[k];
  return h;
}

/// The first boundary j with off(j) > min(t·tile, total): bounds[t] (irregular descriptors) or
/// computed (regular ones, bounds null).
__device__ __forceinline__ long long tile_bound(const Segs& s, const long long* bounds, long long t, long long tile) {
  if (bounds) return bounds[t];
  long long x = t * tile;
  return upper_bound_off(s, x < s.total ? x : s.total);
}

/// Zeroes the head flags of a tile (before mark_heads, with a barrier between: kernels clear
/// them once at the start and then at the end of every tile, after their last read).
template <class S>
__device__ __forceinline__ void clear_heads(unsigned char* heads) {
  for (int i = threadIdx.x; i < S::kTile / 16; i += S::kBlock) reinterpret_cast<uint4*>(heads)[i] = uint4{0, 0, 0, 0};
}

/// Boundaries a thread loads at a time (mark_heads, reduce_seg_tiles): their loads in flight
/// together where short segments put many boundaries in a tile.
constexpr int kBoundaryLoads = 4;

/// Marks the boundaries of tile [t0, t0 + n) in heads: off(j) - t0 for j in [a - 1, b), where a
/// and b are the tile's and the next tile's bounds. Only j = a - 1 can fall at t0 (a head there),
/// and off(j) = t0 + n (j = b - 1 at most) belongs to the next tile.
template <class S>
__device__ __forceinline__ void mark_heads(const Segs& s, long long t0, int n, long long a, long long b,
                                           unsigned char* heads) {
  long long j = a - 1 + threadIdx.x;
  for (; j + (kBoundaryLoads - 1) * S::kBlock < b; j += kBoundaryLoads * S::kBlock) {
    long long o[kBoundaryLoads];
#pragma unroll
    for (int u = 0; u < kBoundaryLoads; ++u) o[u] = seg_off(s, j + u * S::kBlock) - t0;
#pragma unroll
    for (int u = 0; u < kBoundaryLoads; ++u)
      if (o[u] >= 0 && o[u] < n) heads[o[u]] = 1;
  }
  for (; j < b; j += S::kBlock) {
    const long long o = seg_off(s, j) - t0;
    if (o >= 0 && o < n) heads[o] = 1;
  }
}

/// The segmented fold of a thread's items: (fold after its last head, any head).
template <class F, class H, int N>
__device__ __forceinline__ SegPair<typename F::value_type> fold_items(const typename F::value_type (&x)[N],
                                                                      const H& h) {
  SegPair<typename F::value_type> p{F::identity(), 0};
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (h.at(i)) {
      p.v = F::apply(F::identity(), x[i]);
      p.f = 1;
    } else {
      p.v = F::apply(p.v, x[i]);
    }
  }
  return p;
}

/// Replaces the thread's items by their segmented scan from acc, the value before the first.
template <class F, class H, int N>
__device__ __forceinline__ void scan_items(typename F::value_type (&x)[N], const H& h, typename F::value_type acc,
                                           bool inclusive) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    if (h.at(i)) acc = F::identity();
    typename F::value_type next = F::apply(acc, x[i]);
    x[i] = inclusive ? next : acc;
    acc = next;
  }
}

// ---- decoupled look-back ----

/// What a tile has published.
enum : unsigned { kTileNothing = 0, kTileAggregate = 1, kTileInclusive = 2 };

/// The look-back records, in one scratch buffer of at least 2 + 2·ntiles 8-byte words that
/// persists from call to call (Primitives::lookback_scratch): the ticket word, a pad word, then
/// a record per tile holding what the tile has published (its status), its flag and its value,
/// written and read as one access, so that a record is never seen half written and one load
/// reads it whole.
/// * Values of at most 4 bytes: one 8-byte word (status in the top bits, the flag at bit 32,
///   the value's bits below).
/// * 8-byte values: a 16-byte word {status | flag << 32, value bits}, stored and loaded with
///   one vector access (st/ld.relaxed.gpu.v2.u64), as CUB's ScanTileState does. (Before: the
///   value words first, then the status with release, and readers acquired the status before
///   loading the value, two dependent loads per tile; scan_i64 ran at 0.68x CUB.)
///
/// Note [Look-back epochs]
/// The buffer is not zeroed before a call (a fill kernel and an allocation every scan and
/// pack). Instead each call has an epoch (29 bits), which its records carry in bits 33..61, and
/// a record of another epoch reads as nothing published. The ticket word holds the epoch in
/// its high 32 bits and the tiles drawn in its low 32; each block draws tickets until one is
/// past the tiles, so a pass draws exactly ntiles + gridDim.x, and the last draw sets the word
/// for the next call: the next epoch, nothing drawn. An all-zero buffer is a valid start (epoch
/// 0, every record empty); the host zeroes it when it grows it, and often enough that an epoch
/// never comes round again while a record of its last use survives.
template <class T>
struct LookBack {
  static constexpr bool kOneWord = sizeof(T) <= 4;
  static constexpr int kStatusShift = 62;
  static constexpr unsigned long long kFlagBit = 1ull << 32;
  static constexpr int kEpochShift = 33;
  static constexpr unsigned long long kEpochs = 1ull << 29;
  static constexpr unsigned long long kEpochMask = (kEpochs - 1) << kEpochShift;
  /// A record as loaded: w alone, or w and the value's bits.
  struct Record {
    unsigned long long w, bits;
  };
  unsigned long long* ticket;
  unsigned long long* records;  // tile t: records[t] (one word) or records[2t], [2t + 1]
  unsigned long long epoch_bits = 0;  // this call's epoch, where records carry it (begin)

  __device__ explicit LookBack(unsigned long long* scratch) : ticket(scratch), records(scratch + 2) {}

  /// Draws a ticket (one thread of a block): the ticket word as it was. The pass's last draw
  /// sets the word for the next call (Note [Look-back epochs]); ntiles < 2^32.
  __device__ unsigned long long draw(long long ntiles) {
    const unsigned long long word = atomicAdd(ticket, 1ull);
    if ((word & 0xffffffffull) == static_cast<unsigned long long>(ntiles) + gridDim.x - 1) {
      const unsigned long long next = ((word >> 32) + 1) & (kEpochs - 1);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*ticket).store(next << 32,
                                                                                  cuda::memory_order_relaxed);
    }
    return word;
  }
  /// Every thread, with the word its block drew: the tile it names; takes the call's epoch.
  __device__ long long begin(unsigned long long drawn) {
    epoch_bits = (drawn >> 32) << kEpochShift;
    return static_cast<long long>(drawn & 0xffffffffull);
  }

  __device__ void publish(long long tile, unsigned what, const SegPair<T>& p) {
    if constexpr (kOneWord) {
      const unsigned long long word = (static_cast<unsigned long long>(what) << kStatusShift) | epoch_bits |
                                      (p.f ? kFlagBit : 0ull) | (to_bits(p.v) & 0xffffffffull);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(records[tile])
          .store(word, cuda::memory_order_relaxed);
    } else {
      const unsigned long long w = what | epoch_bits | (p.f ? kFlagBit : 0ull), bits = to_bits(p.v);
      asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(records + 2 * tile), "l"(w), "l"(bits)
                   : "memory");
    }
  }

  /// What a record says this call's tile published (nothing, for a record of another call).
  __device__ unsigned status(const Record& r) const {
    if ((r.w & kEpochMask) != epoch_bits) return kTileNothing;
    return kOneWord ? static_cast<unsigned>(r.w >> kStatusShift) : static_cast<unsigned>(r.w & 3);
  }

  /// The record of `tile` as it is now (relaxed: loads of several tiles stay in flight
  /// together).
  __device__ Record peek(long long tile) {
    Record r{0, 0};
    if constexpr (kOneWord) {
      r.w = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(records[tile])
                .load(cuda::memory_order_relaxed);
    } else {
      asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(r.w), "=l"(r.bits) : "l"(records + 2 * tile)
                   : "memory");
    }
    return r;
  }

  /// The record of `tile`, once it says something was published.
  __device__ Record wait(long long tile) {
    Record r;
    while (status(r = peek(tile)) == kTileNothing) __nanosleep(32);
    return r;
  }

  /// What a record says was published, and its value in p.
  __device__ unsigned read(const Record& r, SegPair<T>& p) const {
    p.v = from_bits<T>(kOneWord ? (r.w & 0xffffffffull) : r.bits);
    p.f = (r.w & kFlagBit) ? 1 : 0;
    return status(r);
  }
};

/// Tiles each lane of the look-back warp examines per round: a round covers 32·depth tiles,
/// their records loaded together. A tile before an inclusive one has always published, so a
/// wide round never waits for nothing, but every record costs an L2 load. Which depth is faster
/// depends on the pass. Same runs on an H100 (session 12, 2^28 elements):
/// * flat scans and selections, depth 1: scan_f32 (CUB's DeviceScan::InclusiveSum alternating
///   with ndp's pass, in one process) 0.934-0.940 ms at depth 4, 0.916-0.934 at 2, 0.900 at 1;
///   scan_i64 1.622, 1.588, 1.563-1.567 (CUB 0.88 and 1.59 ms); pack_f32 (the primitives
///   benchmark) 0.980 ms at depth 4, 0.858-0.867 at 1.
/// * segmented scans, depth 4: at depth 1 they took 5-6% longer (segments of 4: 1.171 -> 1.230
///   ms; of 32: 1.021 -> 1.078).
/// (Depth 4 was chosen for all when the scans' tiles held half as many elements, and 32 tiles a
/// round then measured at half the bandwidth.)
inline constexpr int kFlatLookBackDepth = 1;
inline constexpr int kSegmentedLookBackDepth = 4;

/// cub::BlockScan's prefix callback (called by all of warp 0 with the tile's aggregate; lane 0's
/// result is the value the tile starts from): the look-back of Note [Single-pass scans and
/// reductions], kDepth records a lane each round.
template <class F, int kDepth>
struct LookBackPrefix {
  using T = typename F::value_type;
  LookBack<T> lb;
  long long tile;

  __device__ SegPair<T> operator()(const SegPair<T>& aggregate) {
    const int lane = threadIdx.x & 31;
    const SegPair<T> none{F::identity(), 0};
    if (tile == 0) {
      if (lane == 0) lb.publish(0, kTileInclusive, aggregate);
      return none;
    }
    if (lane == 0) lb.publish(tile, kTileAggregate, aggregate);
    SegPair<T> prefix = none;  // lane 0: the fold of the tiles looked at so far (the later ones)
    for (long long nearest = tile - 1;; nearest -= 32 * kDepth) {
      // Lane l examines tiles nearest - kDepth·l - i, i < kDepth (lane 0 the nearest ones);
      // their records are loaded together, then waited for.
      const long long first = nearest - kDepth * lane;
      typename LookBack<T>::Record r[kDepth];
#pragma unroll
      for (int i = 0; i < kDepth; ++i) r[i] = first - i >= 0 ? lb.peek(first - i) : typename LookBack<T>::Record{0, 0};
      SegPair<T> v = none;  // the fold of the lane's tiles, the nearest on the right
      bool reached = false;  // the lane met an inclusive prefix (or the start)
#pragma unroll
      for (int i = 0; i < kDepth; ++i) {
        if (reached) continue;
        const long long j = first - i;
        if (j < 0) {
          reached = true;
          continue;
        }
        SegPair<T> t;
        const unsigned what = lb.read(lb.status(r[i]) != kTileNothing ? r[i] : lb.wait(j), t);
        v = SegOp<F>()(t, v);
        reached = what == kTileInclusive;
      }
      const unsigned inclusive = __ballot_sync(~0u, reached);
      // Lanes 0 .. stop count, stop being the nearest lane that reached an inclusive prefix.
      const int stop = inclusive ? __ffs(static_cast<int>(inclusive)) - 1 : 31;
      if (lane > stop) v = none;
      v = warp_fold<true>(v, SegOp<F>());  // lane 0: lane stop's tiles · ... · lane 0's, in order
      prefix = SegOp<F>()(v, prefix);
      if (inclusive) break;
    }
    if (lane == 0) lb.publish(tile, kTileInclusive, SegOp<F>()(prefix, aggregate));
    return prefix;
  }
};

// ---- scans ----

/// Warp scans and one pass over the warp totals: fewer barriers than cub's default raking.
inline constexpr cub::BlockScanAlgorithm kPassScan = cub::BLOCK_SCAN_WARP_SCANS;

/// A flat scan's prefix callback: the look-back of plain values, as pairs with no heads.
template <class F>
struct FlatLookBackPrefix {
  using T = typename F::value_type;
  LookBackPrefix<F, kFlatLookBackDepth> pairs;
  __device__ T operator()(const T& aggregate) { return pairs(SegPair<T>{aggregate, 0}).v; }
};

/// out = the scan of the source `in` (out may be its array) over s, in one pass (kSegmented
/// false: one segment, no heads, and the block scans plain values rather than pairs). Blocks of
/// S::kBlock threads take tiles of S::kTile by ticket until none is left.
/// (Taking the next ticket early, to load the next tile during the look-back, made the scans
/// about 1.5x slower when we tried it: it doubles the tiles in flight, and so the look-back's
/// depth.)
template <class F, bool kSegmented, class S = PassShape<typename F::value_type>, class Src>
__device__ void scan_pass(const Src& in, Segs s, const long long* bounds, bool inclusive,
                          unsigned long long* scratch, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<cuda::std::conditional_t<kSegmented, SegPair<T>, T>, S::kBlock, kPassScan>;
  __shared__ cuda::std::conditional_t<kSegmented, PassSmem<T, S>, PassVals<T, S>> sm;
  __shared__ typename Scan::TempStorage storage;
  __shared__ unsigned long long ticket;
  const long long ntiles = (s.total + S::kTile - 1) / S::kTile;
  LookBack<T> lb(scratch);
  if constexpr (kSegmented) clear_heads<S>(sm.heads);
  for (;;) {
    if (threadIdx.x == 0) ticket = lb.draw(ntiles);
    // Also: the previous tile is done with sm and storage, and its head flags are cleared.
    __syncthreads();
    const long long tile = lb.begin(ticket);
    if (tile >= ntiles) break;
    const long long t0 = tile * S::kTile;
    const int n = static_cast<int>(s.total - t0 < S::kTile ? s.total - t0 : S::kTile);
    const TileFetch<T, S> f = fetch_tile<F, S>(in, t0, n);
    if constexpr (kSegmented)
      mark_heads<S>(s, t0, n, tile_bound(s, bounds, tile, S::kTile), tile_bound(s, bounds, tile + 1, S::kTile),
                    sm.heads);
    put_tile(f, sm.vals);
    // Heads are marked block-wide; values only move within a warp's part.
    if constexpr (kSegmented) __syncthreads();
    else __syncwarp();
    T x[S::kItems];
    read_items(sm.vals, x);
    if constexpr (kSegmented) {
      LookBackPrefix<F, kSegmentedLookBackDepth> prefix{lb, tile};
      const Heads<S::kItems> h = read_heads<S::kItems>(sm.heads);
      SegPair<T> before;
      Scan(storage).ExclusiveScan(fold_items<F>(x, h), before, SegOp<F>(), prefix);
      scan_items<F>(x, h, before.v, inclusive);
    } else {
      T thread_fold = F::identity();
#pragma unroll
      for (int i = 0; i < S::kItems; ++i) thread_fold = F::apply(thread_fold, x[i]);
      FlatLookBackPrefix<F> flat{{lb, tile}};
      T before;
      Scan(storage).ExclusiveScan(thread_fold, before, Apply<F>(), flat);
      scan_items<F>(x, NoHeads(), before, inclusive);
    }
    write_items(sm.vals, x);  // the thread's own slots
    // (Segmented: also, every thread is done reading heads before they are cleared.)
    if constexpr (kSegmented) __syncthreads();
    else __syncwarp();
    store_pass_tile<S>(sm.vals, t0, n, out);
    if constexpr (kSegmented) clear_heads<S>(sm.heads);  // last read before the barrier above
  }
}

// ---- segmented reductions ----

/// The fold of a fetched tile in sequence order, in thread 0 (all threads call it; fold_warps).
/// A warp's part is its lanes' runs (16-byte words, or single elements) taken step by step,
/// lanes in order within a step.
template <class F, class S>
__device__ __forceinline__ typename F::value_type fold_fetched(const TileFetch<typename F::value_type, S>& f,
                                                               typename F::value_type* warp_result) {
  using T = typename F::value_type;
  T acc = F::identity();  // lane 0: the fold of the warp's steps so far
  if (f.words) {
#pragma unroll
    for (int j = 0; j < S::kItems / kVec<T>; ++j) {
      T run = F::identity();
#pragma unroll
      for (int c = 0; c < kVec<T>; ++c) run = F::apply(run, f.r[j * kVec<T> + c]);
      acc = F::apply(acc, warp_fold(run, Apply<F>()));
    }
  } else {
#pragma unroll
    for (int j = 0; j < S::kItems; ++j) acc = F::apply(acc, warp_fold(F::apply(F::identity(), f.r[j]), Apply<F>()));
  }
  return fold_warps<F, S::kWarps>(acc, warp_result);
}

/// The one-pass part of a segmented reduction (tiles of S::kTile): out[k] for
/// every segment k ending in the tile (tile 0 also writes the leading empty segments), scanned
/// from the identity; agg[tile] = the tile's aggregate pair; fix[tile] = the segment that began
/// in an earlier tile and ends here (so out has only its part in this tile), or -1.
/// Needs s.total > 0.
template <class F, class S = PassShape<typename F::value_type>, class Src>
__device__ void reduce_seg_tiles(const Src& in, Segs s, const long long* bounds, SegPair<typename F::value_type>* agg,
                                 long long* fix, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, S::kBlock, kPassScan>;
  constexpr int kTileN = S::kTile;
  __shared__ PassSmem<T, S> sm;
  __shared__ typename Scan::TempStorage storage;
  __shared__ T warp_result[S::kWarps];
  const long long ntiles = (s.total + kTileN - 1) / kTileN;
  clear_heads<S>(sm.heads);
  __syncthreads();
  // Segments as long as a tile on average: most tiles hold no boundary and take the fast path
  // below, so each block takes a contiguous run of tiles. A grid stride could give some blocks
  // every tile with a boundary (the slow kind) and the others none, wherever the segments'
  // length divides the stride's span (2^15 measured 0.521 ms with the stride, 0.446 ms in
  // runs). Shorter segments keep the grid stride, which measured 2-3% faster for them.
  const bool runs = s.total >= kTileN * s.count;
  const long long first = runs ? ntiles * blockIdx.x / gridDim.x : blockIdx.x;
  const long long last = runs ? ntiles * (blockIdx.x + 1) / gridDim.x : ntiles;
  const long long step = runs ? 1 : gridDim.x;
  // A tile's bounds are read one tile ahead, so that its offsets can be loaded (mark_heads) as
  // soon as its values, not a load later.
  long long next_a = first < last ? tile_bound(s, bounds, first, kTileN) : 0;
  long long next_b = first < last ? tile_bound(s, bounds, first + 1, kTileN) : 0;
  for (long long tile = first; tile < last; tile += step) {
    const long long t0 = tile * kTileN;
    const int n = static_cast<int>(s.total - t0 < kTileN ? s.total - t0 : kTileN);
    const TileFetch<T, S> f = fetch_tile<F, S>(in, t0, n);
    const long long a = next_a, b = next_b;
    if (tile + step < last) {
      next_a = step == 1 ? b : tile_bound(s, bounds, tile + step, kTileN);
      next_b = tile_bound(s, bounds, tile + step + 1, kTileN);
    }
    if (tile > 0 && a == b) {
      // No segment ends in the tile (segments longer than a tile): it is one segment's part,
      // so its aggregate is a plain fold, with no shared-memory exchange and no block scan.
      const bool head0 = seg_off(s, a - 1) == t0;  // that segment starts at t0
      const T fold = fold_fetched<F, S>(f, warp_result);
      if (threadIdx.x == 0) {
        agg[tile] = SegPair<T>{fold, head0 ? 1 : 0};
        fix[tile] = -1;
      }
      __syncthreads();  // warp_result is read before the next tile writes it
      continue;
    }
    mark_heads<S>(s, t0, n, a, b, sm.heads);
    put_tile(f, sm.vals);
    __syncthreads();
    T x[S::kItems];
    read_items(sm.vals, x);
    const Heads<S::kItems> h = read_heads<S::kItems>(sm.heads);
    const bool head0 = sm.heads[0];  // segment a - 1 starts at t0
    SegPair<T> before, aggregate;
    Scan(storage).ExclusiveScan(fold_items<F>(x, h), before, SegPair<T>{F::identity(), 0}, SegOp<F>(), aggregate);
    scan_items<F>(x, h, before.v, true);
    write_items(sm.vals, x);
    __syncthreads();
    clear_heads<S>(sm.heads);  // last read before the barrier above
    // Segment j - 1 ends at off(j) in (t0, t0 + n] for j in [a, b); before tile 0's a, only
    // empty segments.
    long long j = (tile == 0 ? 1 : a) + threadIdx.x;
    for (; j + (kBoundaryLoads - 1) * S::kBlock < b; j += kBoundaryLoads * S::kBlock) {
      long long e[kBoundaryLoads], d[kBoundaryLoads];
#pragma unroll
      for (int u = 0; u < kBoundaryLoads; ++u) {
        e[u] = seg_off(s, j + u * S::kBlock);
        d[u] = seg_off(s, j + u * S::kBlock - 1);
      }
#pragma unroll
      for (int u = 0; u < kBoundaryLoads; ++u)
        out[j + u * S::kBlock - 1] = e[u] == d[u] ? F::identity() : sm.vals[slot<T>(static_cast<int>(e[u] - 1 - t0))];
    }
    for (; j < b; j += S::kBlock) {
      const long long e = seg_off(s, j);
      out[j - 1] = e == seg_off(s, j - 1) ? F::identity() : sm.vals[slot<T>(static_cast<int>(e - 1 - t0))];
    }
    if (threadIdx.x == 0) {
      agg[tile] = aggregate;
      fix[tile] = tile > 0 && b > a && !head0 ? a - 1 : -1;
    }
    __syncthreads();  // the next tile's marks and values wait for this tile's reads and clearing
  }
}

/// A thread's kCarryItems aggregates from agg[first ...] (none past the end) and their fold.
template <class F>
__device__ __forceinline__ SegPair<typename F::value_type> load_carries(const SegPair<typename F::value_type>* agg,
                                                                        long long first, long long end,
                                                                        SegPair<typename F::value_type> (&a)[kCarryItems]) {
  using T = typename F::value_type;
  const SegPair<T> none{F::identity(), 0};
  SegPair<T> fold = none;
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) {
    a[i] = first + i < end ? agg[first + i] : none;
    fold = SegOp<F>()(fold, a[i]);
  }
  return fold;
}

// Note [Segmented reduction fix-up]
// A segment that spans tiles gets only its last tile's part from the tile pass; the rest is the
// exclusive scan of the tiles' aggregates (SegOp) at that tile: the fold of the aggregates from
// the last tile before it that holds a head. Two ways to it:
//  * reduce_seg_fixup_near, first, a thread per tile: where the tile just before holds a head
//    (segments shorter than tiles: nearly every tile), its aggregate is the whole carry. Other
//    tiles are walked back by their warp, 32 tiles a round, for up to kNearRounds rounds (8:
//    SpMV's power-law rows span up to 213 tiles). A tile so completed gets fix[t] = -1; a
//    longer walk is left to the scan below and marks fix[0] (never a segment: tile 0 completes
//    its own) kFixDeferred.
//  * The scan, two kernels over chunks of kCarryChunk aggregates, so that it is spread over the
//    GPU (a single block took 90 us under Nsight Compute for the 65 536 tiles of 2^28 floats, a
//    fifth of the reduction). They return at once unless fix[0] is kFixDeferred:
//    - reduce_seg_chunks: chunk_agg[c] = the fold of chunk c's aggregates, a block each;
//    - reduce_seg_fixup: block c folds chunk_agg[0 .. c) (one round of the block scan per
//      kCarryChunk of them: one round below 2^33 elements), then scans its own chunk from there
//      and completes out[fix[t]] for the tiles still to be completed.
// Each scan is a chain of about a thousand dependent instructions (two block scans of pairs):
// 9-11 us under Nsight Compute however few the tiles, against about 4 us for the near walk. The
// walk folds later tiles first (v(u) ⊕ (v(u + 1) ⊕ ...)), the scan earlier first: float sums may
// round differently between the two, and each gives the same result on every run.
constexpr long long kFixDeferred = -2;
/// Rounds of 32 tiles a warp walks back for one tile before leaving it to the scan.
constexpr int kNearRounds = 8;

/// v from lane `src` (all lanes call it).
template <class T>
__device__ __forceinline__ T shuffle_from(T v, int src) {
  if constexpr (sizeof(T) == 8) return from_bits<T>(__shfl_sync(~0u, to_bits(v), src));
  else return from_bits<T>(__shfl_sync(~0u, static_cast<unsigned>(to_bits(v)), src));
}

/// The near fix-up (Note [Segmented reduction fix-up]): grid of kCarryBlock-thread blocks, a
/// thread per tile.
template <class F>
__device__ void reduce_seg_fixup_near(const SegPair<typename F::value_type>* agg, long long* fix, long long ntiles,
                                      typename F::value_type* out) {
  using T = typename F::value_type;
  const int lane = threadIdx.x & 31;
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long k = t > 0 && t < ntiles ? fix[t] : -1;
  const SegPair<T> before = k >= 0 ? agg[t - 1] : SegPair<T>{F::identity(), 1};
  T carry = before.v;
  bool left = k >= 0 && !before.f;  // the carry reaches further back
  // The warp walks back for each such lane in turn, from the tile before its `before`.
  for (unsigned walkers = __ballot_sync(~0u, left); walkers; walkers &= walkers - 1) {
    const int w = __ffs(static_cast<int>(walkers)) - 1;
    const long long from = __shfl_sync(~0u, t, w) - 2;
    T acc = shuffle_from(carry, w);  // the fold of the tiles walked so far (the later ones)
    bool reached = false;
    for (int r = 0; r < kNearRounds && !reached; ++r) {
      // Lane l reads tile from - 32r - l; before tile 0, a head with nothing after it.
      const long long u = from - 32LL * r - lane;
      const SegPair<T> p = u >= 0 ? agg[u] : SegPair<T>{F::identity(), 1};
      const unsigned heads = __ballot_sync(~0u, p.f != 0);
      const int stop = heads ? __ffs(static_cast<int>(heads)) - 1 : 31;  // the nearest head
      // Lane 0: v(stop) ⊕ ... ⊕ v(0), the tiles from the nearest head on, in sequence order.
      const T run = warp_fold<true>(lane <= stop ? p.v : F::identity(), Apply<F>());
      acc = F::apply(shuffle_from(run, 0), acc);
      reached = heads != 0;
    }
    if (lane == w && reached) {
      carry = acc;
      left = false;
    }
  }
  if (k < 0) return;
  if (left) {
    fix[0] = kFixDeferred;  // every such thread writes the same value
    return;
  }
  out[k] = F::apply(carry, out[k]);
  fix[t] = -1;
}

/// chunk_agg[blockIdx.x] = the fold of the aggregates of chunk blockIdx.x (if any tile is left).
template <class F>
__device__ void reduce_seg_chunks(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                                  SegPair<typename F::value_type>* chunk_agg) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kCarryBlock, kPassScan>;
  __shared__ typename Scan::TempStorage storage;
  if (fix[0] != kFixDeferred) return;  // the near fix-up completed every tile
  SegPair<T> a[kCarryItems], unused, total;
  const SegPair<T> fold = load_carries<F>(
      agg, static_cast<long long>(blockIdx.x) * kCarryChunk + threadIdx.x * kCarryItems, ntiles, a);
  Scan(storage).ExclusiveScan(fold, unused, SegPair<T>{F::identity(), 0}, SegOp<F>(), total);
  if (threadIdx.x == 0) chunk_agg[blockIdx.x] = total;
}

/// The fix-up of chunk blockIdx.x (Note [Segmented reduction fix-up]): out[fix[t]] completed with
/// the fold of every aggregate before tile t, for the chunk's tiles t that the near fix-up left
/// (chunk_agg unread for chunk 0). Every global load a thread makes is issued before its first
/// store: its tiles' aggregates and fix entries, then the parts in out they complete (distinct
/// segments, one per tile). Loaded item by item between the stores, as the compiler must when
/// out may alias fix, they were 16 dependent round trips a thread: 12 us of a 250 us SpMV under
/// Nsight Compute.
template <class F>
__device__ void reduce_seg_fixup(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                                 const SegPair<typename F::value_type>* chunk_agg, typename F::value_type* out) {
  using T = typename F::value_type;
  using Scan = cub::BlockScan<SegPair<T>, kCarryBlock, kPassScan>;
  __shared__ typename Scan::TempStorage storage;
  if (fix[0] != kFixDeferred) return;  // the near fix-up completed every tile
  const long long first = static_cast<long long>(blockIdx.x) * kCarryChunk + threadIdx.x * kCarryItems;
  SegPair<T> a[kCarryItems];
  const SegPair<T> own = load_carries<F>(agg, first, ntiles, a);
  long long k[kCarryItems];  // the segment tile first + i completes, or -1
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) k[i] = first + i < ntiles ? fix[first + i] : -1;
  CarryPrefix<F> prefix{SegPair<T>{F::identity(), 0}};
  SegPair<T> before[kCarryItems], carry;
  for (long long base = 0; base < blockIdx.x; base += kCarryChunk) {  // the chunks before this one
    carry = load_carries<F>(chunk_agg, base + threadIdx.x * kCarryItems, blockIdx.x, before);
    Scan(storage).ExclusiveScan(carry, carry, SegOp<F>(), prefix);
    __syncthreads();
  }
  T part[kCarryItems];
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) part[i] = k[i] >= 0 ? out[k[i]] : F::identity();
  Scan(storage).ExclusiveScan(own, carry, SegOp<F>(), prefix);
#pragma unroll
  for (int i = 0; i < kCarryItems; ++i) {
    if (k[i] >= 0) out[k[i]] = F::apply(carry.v, part[i]);
    carry = SegOp<F>()(carry, a[i]);
  }
}

}  // namespace ndp_gpu
