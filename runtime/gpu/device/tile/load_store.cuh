// Tile level: how a pass tile (tile/pass_shape.cuh) moves. From global memory into registers
// (fetch_tile: 16-byte words where the tile is whole and aligned, else the source's elements),
// into shared memory (put_tile), out to each thread's blocked items (read_items, write_items),
// and back to global memory (store_pass_tile), warp by warp.
#pragma once

#include <cuda/std/type_traits>

#include "../thread/sources.cuh"
#include "../thread/words.cuh"
#include "pass_shape.cuh"

namespace ndp::runtime::gpu::device {

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
/// array, a converted array, a fused map: thread/sources.cuh), and the identity past the
/// tile's end. Fetching first and storing to shared memory later lets a tile's other global
/// loads (its boundaries) overlap the data's.
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

}  // namespace ndp::runtime::gpu::device
