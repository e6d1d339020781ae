// Selection: PACK's lengths (a segmented + reduction of the flags read as 0/1, scan_pass.cuh) and
// order-preserving compaction (true_positions, pack) in three steps: count the trues of every
// tile, exclusive-scan the counts (the host calls the i64 + scan), compact every tile.
#include "scan_pass.cuh"

using namespace ndp_gpu;

namespace {

using CountFn = Fn<Op::plus, long long>;

struct FlagAsCount {
  __device__ long long operator()(unsigned char f) const { return f != 0; }
};

}  // namespace

// pack_lengths: the pass of a segmented + reduction over the flags read as 0/1 (its fix-up is
// ndp_reduce_seg_fixup_plus_i64 of scan.cu).
extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)
    ndp_packlen_tiles(const unsigned char* flags, Segs s, const long long* bounds, SegPair<long long>* agg,
                      long long* fix, long long* out) {
  reduce_seg_tiles<CountFn>(flags, s, bounds, agg, fix, out, FlagAsCount());
}

// counts[tile] = the true flags among the tile's kTile elements.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_pack_counts(const unsigned char* flags, long long n, long long* counts) {
  using Reduce = cub::BlockReduce<int, kScanBlock>;
  __shared__ typename Reduce::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    int mine = 0;
    for (int i = threadIdx.x; i < m; i += blockDim.x) mine += flags[t0 + i] != 0;
    int sum = Reduce(storage).Sum(mine);
    if (threadIdx.x == 0) counts[tile] = sum;
    __syncthreads();
  }
}

namespace {

/// Compacts every tile: the values (or, with kPositions, the positions) whose flag is true go
/// to out[starts[tile] ...] in order (starts null: a single tile starting at 0). Values are
/// staged through shared memory so both the loads and the stores are coalesced.
template <class T, bool kPositions>
__device__ void compact_tiles(const T* v, const unsigned char* flags, long long n, const long long* starts, T* out) {
  using Scan = cub::BlockScan<int, kScanBlock>;
  __shared__ TileSmem<T> sm;  // heads: the flags as 0/1; vals: the values, then the compacted ones
  __shared__ typename Scan::TempStorage storage;
  long long ntiles = (n + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    long long t0 = tile * kTile;
    int m = n - t0 < kTile ? static_cast<int>(n - t0) : kTile;
    for (int i = threadIdx.x; i < kTile; i += blockDim.x) sm.heads[i] = i < m && flags[t0 + i] != 0;
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

}  // namespace

extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_true_positions(const unsigned char* flags, long long n, const long long* starts, long long* out) {
  compact_tiles<long long, true>(nullptr, flags, n, starts, out);
}

// PACK's data moves raw words by element size.
#define NDP_PACK(W, bytes)                                                                                  \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                  \
      ndp_pack_##bytes(const W* v, const unsigned char* flags, long long n, const long long* starts, W* out) { \
    compact_tiles<W, false>(v, flags, n, starts, out);                                                      \
  }
NDP_FOR_SIZES(NDP_PACK)
