// The selection kernels' bodies (pack.cu, and the consumer kernels of fused.cu): order-preserving
// compaction in one pass with decoupled look-back (select_pass, for flags in an array), and in
// two (per-tile counts of true flags, then compaction), for flags from any source (scan.cuh).
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "scan_pass.cuh"

namespace ndp_gpu {

/// Elements per thread of a tile of kTile (a thread's share, strided by kScanBlock).
constexpr int kTileItems = kTile / kScanBlock;

/// counts[tile] = the true flags among the tile's kTile elements.
template <class Flags>
__device__ void count_tiles(const Flags& flags, long long n, long long* counts) {
  using Reduce = cub::BlockReduce<int, kScanBlock>;
  __shared__ typename Reduce::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    int mine = 0;
    if constexpr (Flags::kBatch) {
      bool f[kTileItems];
      const int count = items_below(threadIdx.x, kScanBlock, m, kTileItems);
      flags.items(t0 + threadIdx.x, kScanBlock, count, f);
      for (int j = 0; j < count; ++j) mine += f[j];
    } else {
      for (int i = threadIdx.x; i < m; i += blockDim.x) mine += flags(t0 + i);
    }
    int sum = Reduce(storage).Sum(mine);
    if (threadIdx.x == 0) counts[tile] = sum;
    __syncthreads();
  }
}

/// Compacts every tile: the values (or, with kPositions, the positions) whose flag is true go
/// to out[starts[tile] ...] in order (starts null: a single tile starting at 0). Values are
/// staged through shared memory so both the loads and the stores are coalesced.
template <class T, bool kPositions, class Flags>
__device__ void compact_tiles(const T* v, const Flags& flags, long long n, const long long* starts, T* out) {
  using Scan = cub::BlockScan<int, kScanBlock>;
  __shared__ TileSmem<T> sm;  // heads: the flags as 0/1; vals: the values, then the compacted ones
  __shared__ typename Scan::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    if constexpr (Flags::kBatch) {
      bool f[kTileItems];
      const int count = items_below(threadIdx.x, kScanBlock, m, kTileItems);
      flags.items(t0 + threadIdx.x, kScanBlock, count, f);
#pragma unroll
      for (int j = 0; j < kTileItems; ++j) sm.heads[j * kScanBlock + threadIdx.x] = j < count && f[j];
    } else {
      for (int i = threadIdx.x; i < kTile; i += blockDim.x) sm.heads[i] = i < m && flags(t0 + i);
    }
    if constexpr (!kPositions)
      for (int i = threadIdx.x; i < m; i += blockDim.x) sm.vals[padded(i)] = v[t0 + i];
    __syncthreads();
    int base = threadIdx.x * kScanItems;
    unsigned long long heads = thread_heads(sm);
    T x[kScanItems];
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) {
      if constexpr (kPositions) x[i] = static_cast<T>(t0 + base + i);
      else x[i] = head_at(heads, i) ? sm.vals[padded(base + i)] : T();
    }
    int count = __popcll(heads), before, total;  // every flag byte is 0 or 1
    Scan(storage).ExclusiveSum(count, before, total);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kScanItems; ++i)
      if (head_at(heads, i)) sm.vals[padded(before++)] = x[i];
    __syncthreads();
    long long start = starts ? starts[tile] : 0;
    for (int i = threadIdx.x; i < total; i += blockDim.x) out[start + i] = sm.vals[padded(i)];
    __syncthreads();
  }
}

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
  SelectFetch<T, kPositions> r;
  r.mask = 0;
  if (whole && aligned16(flags)) {
    const uint4 w = *reinterpret_cast<const uint4*>(flags + first);
    const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int b = 0; b < 4; ++b) r.mask |= ((words[k] >> (8 * b)) & 0xffu) != 0 ? 1u << (4 * k + b) : 0u;
  } else {
#pragma unroll
    for (int i = 0; i < kSelectItems; ++i) r.mask |= first + i < n && flags[first + i] != 0 ? 1u << i : 0u;
  }
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
/// many come before the tile by decoupled look-back (scan_pass.cuh, with counts of type C: int
/// below 2^31 elements, whose look-back records are one word). Each thread holds consecutive
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

}  // namespace ndp_gpu
