// Tile level (what one block does): a one-sweep radix sort pass (Note [GPU radix sort] in
// sort.cu). A block takes a tile by ticket, ranks its keys by one digit, learns from the earlier
// tiles' published digit counts where each digit's run goes (a look-back per digit), and
// scatters the tile's keys (and payloads) there.
#pragma once

#include <cub/block/block_radix_rank.cuh>
#include <cuda/atomic>

#include "../thread/sort_keys.cuh"

namespace ndp::runtime::gpu::device {

constexpr int kSortThreads = 256;  // = the number of digits: thread d looks back for digit d
constexpr int kSortItems = 16;
constexpr int kSortTile = kSortThreads * kSortItems;
constexpr int kSortWarps = kSortThreads / 32;

/// A look-back word: status in the top two bits, a count in the rest.
template <class W>
struct SortLookBack {
  static constexpr W kAggregate = W(1) << (8 * sizeof(W) - 2);
  static constexpr W kInclusive = W(2) << (8 * sizeof(W) - 2);
  static constexpr W kCount = kAggregate - 1;
  W* words;  // words[tile · 256 + d], zeroed by the host before the pass

  __device__ void publish(long long tile, int d, W what, long long count) const {
    cuda::atomic_ref<W, cuda::thread_scope_device>(words[tile * 256 + d]).store(what | static_cast<W>(count),
                                                                               cuda::memory_order_relaxed);
  }
  /// The elements of digit d in the tiles before `tile`.
  __device__ long long exclusive(long long tile, int d) const {
    long long sum = 0;
    for (long long j = tile - 1; j >= 0; --j) {
      cuda::atomic_ref<W, cuda::thread_scope_device> word(words[j * 256 + d]);
      W w;
      while (((w = word.load(cuda::memory_order_relaxed)) & ~kCount) == 0) {
      }
      sum += static_cast<long long>(w & kCount);
      if (w & kInclusive) break;
    }
    return sum;
  }
};

/// BlockRadixRankMatchEarlyCounts's counts callback: thread d receives the tile's count of digit
/// d and publishes it at once, so later tiles' look-backs need not wait for the ranking.
template <class W>
struct PublishCounts {
  SortLookBack<W> lb;
  long long tile;
  int padding;  // the padded keys past the end (digit 255), not counted
  int* count;   // the thread's count, kept for its inclusive word
  __device__ void operator()(int (&bins)[1]) {
    const int d = threadIdx.x;
    *count = bins[0] - (d == 255 ? padding : 0);
    lb.publish(tile, d, tile == 0 ? SortLookBack<W>::kInclusive : SortLookBack<W>::kAggregate, *count);
  }
};

struct NoPayload {};

/// One stable pass by the digit at `shift` of n keys from `load` to `store` (and payloads,
/// kPairs), one tile per block, tiles taken by ticket (*ticket zeroed by the host).
template <class K, class W, bool kPairs, class Load, class Store>
__device__ void onesweep_pass(Load load, Store store, const long long* payload_in, long long* payload_out, long long n,
                              int shift, const long long* digit_start, W* lookback, unsigned long long* ticket) {
  using Rank = cub::BlockRadixRankMatchEarlyCounts<kSortThreads, 8, false, cub::BLOCK_SCAN_WARP_SCANS>;
  __shared__ union {
    typename Rank::TempStorage rank;
    K keys[kSortTile];
    long long payloads[kPairs ? kSortTile : 1];
  } sm;
  __shared__ long long run_target[256];  // where the run of digit d goes, less its start in the tile
  __shared__ long long tile_index;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  if (t == 0) tile_index = static_cast<long long>(atomicAdd(ticket, 1ull));
  __syncthreads();
  const long long tile = tile_index, base = tile * kSortTile;
  const int valid = static_cast<int>(n - base < kSortTile ? n - base : kSortTile);

  // Warp-striped: item u of lane l of warp w is element w·32·kSortItems + u·32 + l; padding
  // (past the end) gets the largest key, ranked after every element.
  K key[kSortItems];
  long long pay[kPairs ? kSortItems : 1];
  const int first = warp * 32 * kSortItems + lane;
  if (valid == kSortTile) {  // every tile but the last: no guards, so the loads issue together
    typename Load::Raw raw[kSortItems];
#pragma unroll
    for (int u = 0; u < kSortItems; ++u) raw[u] = load.raw(base + first + u * 32);
    if constexpr (kPairs) {
#pragma unroll
      for (int u = 0; u < kSortItems; ++u) pay[u] = payload_in[base + first + u * 32];
    }
#pragma unroll
    for (int u = 0; u < kSortItems; ++u) key[u] = load.key(raw[u]);
  } else {
#pragma unroll
    for (int u = 0; u < kSortItems; ++u) {
      const int i = first + u * 32;
      key[u] = i < valid ? load.key(load.raw(base + i)) : ~K(0);
      if constexpr (kPairs) pay[u] = i < valid ? payload_in[base + i] : 0;
    }
  }

  const SortLookBack<W> lb{lookback};
  int count = 0, ranks[kSortItems], tile_start[1];
  Rank(sm.rank).RankKeys(key, ranks, DigitAt<K>{shift}, tile_start,
                         PublishCounts<W>{lb, tile, kSortTile - valid, &count});
  const long long before = tile == 0 ? 0 : lb.exclusive(tile, t);
  if (tile > 0) lb.publish(tile, t, SortLookBack<W>::kInclusive, before + count);
  run_target[t] = digit_start[t] + before - tile_start[0];
  __syncthreads();  // the ranking is done with sm.rank

#pragma unroll
  for (int u = 0; u < kSortItems; ++u) sm.keys[ranks[u]] = key[u];
  __syncthreads();
  int digit[kSortItems];
#pragma unroll
  for (int u = 0; u < kSortItems; ++u) {
    const int r = u * kSortThreads + t;
    const K k = sm.keys[r];
    digit[u] = static_cast<int>((k >> shift) & 255u);
    if (r < valid) store(run_target[digit[u]] + r, k);
  }
  if constexpr (kPairs) {
    __syncthreads();  // the keys are read
#pragma unroll
    for (int u = 0; u < kSortItems; ++u) sm.payloads[ranks[u]] = pay[u];
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kSortItems; ++u) {
      const int r = u * kSortThreads + t;
      if (r < valid) payload_out[run_target[digit[u]] + r] = sm.payloads[r];
    }
  }
}

}  // namespace ndp::runtime::gpu::device
