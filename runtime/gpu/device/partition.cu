// Note [Partitions] (runtime/gpu/partition.h): several packs and their segmented counts, the
// flags read twice and each column once.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include "common.cuh"
#include "thread/words.cuh"
#include "runtime/gpu/partition.h"

using namespace ndp::runtime::gpu;
using namespace ndp::runtime::gpu::device;

namespace {

constexpr int kRounds = kPartitionTile / kPartitionBlock;
constexpr int kWarps = kPartitionBlock / kPartitionChunk;
constexpr int kTileChunks = kPartitionTile / kPartitionChunk;
constexpr int kFieldBits = 16;
constexpr unsigned long long kField = (1ull << kFieldBits) - 1;
constexpr int kScanBlock = 1024;

__device__ __forceinline__ long long field(unsigned long long w, int k) {
  return static_cast<long long>((w >> (kFieldBits * k)) & kField);
}

/// Elements of flags a thread reads at once: one 16-byte word (a tile is kPartitionBlock of them).
constexpr int kThreadFlags = kPartitionTile / kPartitionBlock;
static_assert(kThreadFlags == 16, "a thread's flags are one 16-byte word");

__device__ __forceinline__ unsigned long long load_element(int bytes, const void* src, long long e) {
  switch (bytes) {
    case 8: return static_cast<const unsigned long long*>(src)[e];
    case 4: return static_cast<const unsigned*>(src)[e];
    default: return static_cast<const unsigned char*>(src)[e];
  }
}

__device__ __forceinline__ void store_element(int bytes, void* dst, long long at, unsigned long long x) {
  switch (bytes) {
    case 8: static_cast<unsigned long long*>(dst)[at] = x; break;
    case 4: static_cast<unsigned*>(dst)[at] = static_cast<unsigned>(x); break;
    default: static_cast<unsigned char*>(dst)[at] = static_cast<unsigned char>(x); break;
  }
}

}  // namespace

/// Stage 1: tile_counts[t] = tile t's true flags, a 16-bit field a predicate. A block a tile,
/// a thread 16 consecutive flags of each predicate.
extern "C" __global__ void __launch_bounds__(kPartitionBlock)
    ndp_partition_count(PartitionFlags f, long long n, unsigned long long* tile_counts) {
  using Reduce = cub::BlockReduce<unsigned long long, kPartitionBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const long long t0 = static_cast<long long>(blockIdx.x) * kPartitionTile;
  const long long first = t0 + threadIdx.x * kThreadFlags;
  const bool whole = n - t0 >= kPartitionTile;
  unsigned long long mine = 0;
#pragma unroll
  for (int k = 0; k < PartitionFlags::kMost; ++k)
    if (k < f.count) mine |= static_cast<unsigned long long>(__popc(flag_mask16(f.of[k], first, n, whole))) << (kFieldBits * k);
  const unsigned long long sum = Reduce(storage).Sum(mine);
  if (threadIdx.x == 0) tile_counts[blockIdx.x] = sum;
}

/// Stage 2 (one block of kScanBlock): bases[k·(tiles + 1) + t] = predicate k's true flags before
/// tile t (t = tiles: all of them), and the totals again at bases[m·(tiles + 1) + k], together
/// for the host's one read-back.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_partition_scan(const unsigned long long* tile_counts, long long tiles, int m, long long* bases) {
  using Scan = cub::BlockScan<long long, kScanBlock>;
  __shared__ typename Scan::TempStorage storage;
  __shared__ long long carry[PartitionFlags::kMost];
  if (threadIdx.x < PartitionFlags::kMost) carry[threadIdx.x] = 0;
  for (long long t0 = 0; t0 < tiles; t0 += kScanBlock) {
    const long long t = t0 + threadIdx.x;
    const unsigned long long c = t < tiles ? tile_counts[t] : 0;
#pragma unroll 1
    for (int k = 0; k < m; ++k) {
      long long before = 0, sum = 0;
      Scan(storage).ExclusiveSum(field(c, k), before, sum);
      if (t < tiles) bases[k * (tiles + 1) + t] = carry[k] + before;
      __syncthreads();  // the storage again, and every thread has read carry[k]
      if (threadIdx.x == 0) carry[k] += sum;
      __syncthreads();
    }
  }
  if (threadIdx.x < m) {
    bases[threadIdx.x * (tiles + 1) + tiles] = carry[threadIdx.x];
    bases[m * (tiles + 1) + threadIdx.x] = carry[threadIdx.x];
  }
}

/// Stage 3: a block a tile. The tile's flags become a mask per predicate and chunk of 32
/// elements (a thread reads 16 consecutive flags; two threads make a chunk); a scan over the
/// chunks gives each chunk's flags before it in the tile; then each column's kept elements go
/// to their packs a round of kPartitionBlock elements at a time (chunk r·kWarps + w is warp w's
/// in round r), so a warp's kept elements are written next to each other, and a thread's loads
/// of kBatch rounds are in flight together. (Staging a tile's kept elements in shared memory,
/// to store whole sectors, measured slower: 55 against 48 µs a level of 2^22 keys, H200.) With
/// chunk_prefix, each chunk's prefix and masks are left for stage 4 (chunks of them).
extern "C" __global__ void __launch_bounds__(kPartitionBlock)
    ndp_partition_scatter(PartitionFlags f, PartitionColumns c, long long n, const long long* bases, long long tiles,
                          unsigned long long* chunk_prefix, unsigned* chunk_masks, long long chunks) {
  using Scan = cub::BlockScan<unsigned long long, kPartitionBlock>;
  constexpr int kBatch = 4;  // rounds whose loads are in flight together
  static_assert(kRounds % kBatch == 0, "rounds in whole batches");
  __shared__ typename Scan::TempStorage storage;
  __shared__ unsigned masks[PartitionFlags::kMost][kTileChunks];
  __shared__ unsigned long long prefix[kTileChunks];
  __shared__ long long base[PartitionFlags::kMost];
  const long long tile = blockIdx.x, t0 = tile * kPartitionTile;
  const int lane = threadIdx.x % kPartitionChunk, warp = threadIdx.x / kPartitionChunk;
  if (threadIdx.x < f.count) base[threadIdx.x] = bases[threadIdx.x * (tiles + 1) + tile];
  const bool whole = n - t0 >= kPartitionTile;
#pragma unroll
  for (int k = 0; k < PartitionFlags::kMost; ++k) {
    if (k >= f.count) break;
    const unsigned mine = flag_mask16(f.of[k], t0 + threadIdx.x * kThreadFlags, n, whole);
    const unsigned next = __shfl_down_sync(~0u, mine, 1);
    if (lane % 2 == 0) masks[k][threadIdx.x / 2] = mine | next << kThreadFlags;
  }
  __syncthreads();
  unsigned long long count = 0;
  if (threadIdx.x < kTileChunks)
    for (int k = 0; k < f.count; ++k)
      count |= static_cast<unsigned long long>(__popc(masks[k][threadIdx.x])) << (kFieldBits * k);
  unsigned long long before = 0;
  Scan(storage).ExclusiveSum(count, before);
  if (threadIdx.x < kTileChunks) {
    prefix[threadIdx.x] = before;
    const long long chunk = tile * kTileChunks + threadIdx.x;
    if (chunk_prefix != nullptr && chunk < chunks) {
      chunk_prefix[chunk] = before;
      for (int k = 0; k < f.count; ++k) chunk_masks[k * chunks + chunk] = masks[k][threadIdx.x];
    }
  }
  __syncthreads();
  const unsigned below = (1u << lane) - 1;
  // Columns of one source (the host puts them next to each other: quicksort's three packs of
  // the same keys) load each element once, where any of them keeps it.
  for (int j0 = 0, j1; j0 < c.count; j0 = j1) {
    for (j1 = j0 + 1; j1 < c.count && c.src[j1] == c.src[j0] && c.bytes[j1] == c.bytes[j0];) ++j1;
    const int bytes = c.bytes[j0];
    for (int r0 = 0; r0 < kRounds; r0 += kBatch) {
      unsigned long long x[kBatch];
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int chunk = (r0 + u) * kWarps + warp;
        unsigned any = 0;  // 0 past n
        for (int j = j0; j < j1; ++j) any |= masks[c.predicate[j]][chunk];
        if ((any >> lane) & 1u) x[u] = load_element(bytes, c.src[j0], t0 + (r0 + u) * kPartitionBlock + threadIdx.x);
      }
#pragma unroll
      for (int u = 0; u < kBatch; ++u) {
        const int chunk = (r0 + u) * kWarps + warp;
        for (int j = j0; j < j1; ++j) {
          const int k = c.predicate[j];
          const unsigned m = masks[k][chunk];
          if ((m >> lane) & 1u) store_element(bytes, c.dst[j], base[k] + field(prefix[chunk], k) + __popc(m & below), x[u]);
        }
      }
    }
  }
}

/// Stage 4: per segment i of s (s.total == n), out.offsets[k][i] = predicate k's true flags
/// before the segment (i = count: all of them) and out.counts[k][i] those in it.
extern "C" __global__ void ndp_partition_segments(Segs s, int m, long long n, const long long* bases, long long tiles,
                                                  const unsigned long long* chunk_prefix, const unsigned* chunk_masks,
                                                  long long chunks, PartitionSegments out) {
  // The true flags of predicate k before element p.
  auto before = [&](int k, long long p) -> long long {
    if (p >= n) return bases[k * (tiles + 1) + tiles];
    const long long chunk = p / kPartitionChunk;
    const unsigned below = (1u << (p % kPartitionChunk)) - 1;
    return bases[k * (tiles + 1) + p / kPartitionTile] + field(chunk_prefix[chunk], k) +
           __popc(chunk_masks[k * chunks + chunk] & below);
  };
  NDP_GRID_STRIDE(i, s.count + 1) {
    const long long p = i < s.count ? s.begin(i) : n;
    for (int k = 0; k < m; ++k) {
      if (out.offsets[k] == nullptr && out.counts[k] == nullptr) continue;
      const long long at = before(k, p);
      if (out.offsets[k] != nullptr) out.offsets[k][i] = at;
      if (out.counts[k] != nullptr && i < s.count) out.counts[k][i] = before(k, s.end(i)) - at;
    }
  }
}
