// Tile level (what one block does): order-preserving compaction of the elements whose flag, in
// an array, is true, in one pass with decoupled look-back (select_pass).
#pragma once

#include <cub/block/block_scan.cuh>

#include "../thread/words.cuh"
#include "look_back.cuh"
#include "pass_shape.cuh"

namespace ndp::runtime::gpu::device {

/// Elements per thread of select_pass: one 16-byte word of flags.
constexpr int kSelectItems = 16;
constexpr int kSelectTile = kPassBlock * kSelectItems;

/// A thread's share of a select_pass tile: its kSelectItems consecutive flags (bit i of mask) and
/// values (none for positions, which follow from the tile).
template <class T, bool kPositions>
struct SelectFetch {
  unsigned mask;
  T x[kPositions ? 1 : kSelectItems];
};

/// Loads elements first .. first + kSelectItems - 1 (16-byte words where the tile is whole and
/// aligned; the values of false flags past the end are not read).
template <class T, bool kPositions>
__device__ __forceinline__ SelectFetch<T, kPositions> fetch_select(const T* v, const unsigned char* flags, long long n,
                                                                   long long first, bool whole) {
  static_assert(kSelectItems == 16, "a thread's flags are one 16-byte word");
  SelectFetch<T, kPositions> r;
  r.mask = flag_mask16(flags, first, n, whole);
  if constexpr (!kPositions) {
    if (whole && aligned16(v)) {
#pragma unroll
      for (int k = 0; k < kSelectItems / kVec<T>; ++k) {
        const Word<T> w = load_word(v + first + k * kVec<T>);
#pragma unroll
        for (int c = 0; c < kVec<T>; ++c) r.x[k * kVec<T> + c] = w.e[c];
      }
    } else {
#pragma unroll
      for (int i = 0; i < kSelectItems; ++i) r.x[i] = (r.mask >> i) & 1u ? v[first + i] : T();
    }
  }
  return r;
}

/// Compacts v (or, with kPositions, the positions) where flags is true into out, in order, in
/// one pass: blocks take tiles of kSelectTile by ticket, count their true flags, and learn how
/// many come before the tile by decoupled look-back (tile/look_back.cuh, with counts of type C:
/// int below 2^31 elements, whose look-back records are one word). Each thread holds consecutive
/// elements, loaded as 16-byte words where the tile is whole and aligned; the kept ones are
/// gathered in shared memory, so the stores are coalesced. The number kept goes to scratch[1]
/// (n > 0).
template <class T, bool kPositions, class C>
__device__ void select_pass(const T* v, const unsigned char* flags, long long n, unsigned long long* scratch, T* out) {
  using F = Fn<Op::plus, C>;
  using Scan = cub::BlockScan<SegPair<C>, kPassBlock, kPassScan>;
  __shared__ T kept[kSelectTile];
  __shared__ typename Scan::TempStorage storage;
  __shared__ unsigned long long ticket;
  __shared__ long long tile_start;
  __shared__ int tile_kept;
  const long long ntiles = (n + kSelectTile - 1) / kSelectTile;
  auto fetch = [&](long long tile) {
    return fetch_select<T, kPositions>(v, flags, n, tile * kSelectTile + threadIdx.x * kSelectItems,
                                       n - tile * kSelectTile >= kSelectTile);
  };
  LookBack<C> lb(scratch);
  for (;;) {
    if (threadIdx.x == 0) ticket = lb.draw(ntiles);
    __syncthreads();  // also: the previous tile is done with kept and storage
    const long long tile = lb.begin(ticket);
    if (tile >= ntiles) break;
    const SelectFetch<T, kPositions> mine = fetch(tile);
    const C count = __popc(mine.mask);
    LookBackPrefix<F, kFlatLookBackDepth> prefix{lb, tile};
    SegPair<C> before;
    Scan(storage).ExclusiveScan(SegPair<C>{count, 0}, before, SegOp<F>(), prefix);
    if (threadIdx.x == 0) tile_start = before.v;
    __syncthreads();
    const long long start = tile_start;
    int at = static_cast<int>(before.v - start);
    const long long first = tile * kSelectTile + threadIdx.x * kSelectItems;
#pragma unroll
    for (int i = 0; i < kSelectItems; ++i) {
      if ((mine.mask >> i) & 1u) {
        if constexpr (kPositions) kept[at++] = static_cast<T>(first + i);
        else kept[at++] = mine.x[i];
      }
    }
    if (threadIdx.x == kPassBlock - 1) {
      tile_kept = at;
      // The last tile knows the total kept: in the scratch's pad word (pack_counted reads it).
      if (tile == ntiles - 1) scratch[1] = static_cast<unsigned long long>(start + at);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < tile_kept; i += kPassBlock) out[start + i] = kept[i];
  }
}

}  // namespace ndp::runtime::gpu::device
