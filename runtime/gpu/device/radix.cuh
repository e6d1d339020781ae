// The stable LSD radix sort's passes (sort.cu's kernels): order-preserving keys, the digit
// histograms of every pass at once, and the one-sweep pass.
//
// Note [GPU radix sort]
// A sort by b-byte keys is one upsweep and then one pass per 8-bit digit that varies:
//  * Upsweep: one read of the input counts the digits of every byte position at once
//    (hist[byte][digit]); a small kernel turns each row into where each digit's run starts
//    (digit_start). The host reads the counts back and skips the bytes with one digit only.
//  * One-sweep pass (Adinets & Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort
//    for GPUs", 2022): a block takes a tile of kSortTile elements by ticket, ranks its keys by
//    the digit (cub's BlockRadixRankMatchEarlyCounts: stable in the warp-striped arrangement the
//    keys are loaded in), and publishes its digit counts as soon as it has them. Then thread d
//    looks back over the earlier tiles' counts of digit d, as a scan's decoupled look-back does
//    (scan_pass.cuh), until a tile holding an inclusive count, and publishes its own. An element
//    of digit d at position r of the ranked tile goes to
//        digit_start[d] + (elements of digit d in earlier tiles) + (r - the run of d's start).
//    The keys (and payloads) are exchanged through shared memory in ranked order first, so that
//    a warp writes runs of consecutive addresses.
//  Each pass reads and writes every key once (and payload); the look-back words are the only
//  other traffic. A status and a count share one look-back word, so one load reads both; a
//  32-bit word (2 status bits, 30 count bits) serves every n < 2^30, a 64-bit word the rest.
//  Tickets order the tiles, so a block only waits for tiles that running blocks hold and that
//  publish their counts without waiting: no deadlock.
// Equal keys keep their order in every pass (ranking is stable, tiles are taken in order), so
// the sort is stable. Keys-only sorts convert values to keys on the first pass's load and back
// on the last pass's store, so no pass of their own does either.
#pragma once

#include <cub/block/block_radix_rank.cuh>
#include <cub/block/block_scan.cuh>
#include <cuda/atomic>

#include "common.cuh"

namespace ndp_gpu {

constexpr int kSortThreads = 256;  // = the number of digits: thread d looks back for digit d
constexpr int kSortItems = 16;
constexpr int kSortTile = kSortThreads * kSortItems;
constexpr int kSortWarps = kSortThreads / 32;

// ---- keys ----

__device__ inline unsigned sort_key(unsigned char x) { return x; }
__device__ inline unsigned sort_key(int x) { return static_cast<unsigned>(x) ^ 0x80000000u; }
__device__ inline unsigned long long sort_key(long long x) { return static_cast<unsigned long long>(x) ^ (1ull << 63); }
// Floats: every NaN above +inf (all ones), -0.0 as 0.0; negatives order backwards in their
// bits (flip them all), positives get the sign bit set.
__device__ inline unsigned sort_key(float x) {
  if (x != x) return ~0u;
  if (x == 0.0f) x = 0.0f;
  unsigned bits = __float_as_uint(x);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
__device__ inline unsigned long long sort_key(double x) {
  if (x != x) return ~0ull;
  if (x == 0.0) x = 0.0;
  unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(x));
  return (bits & (1ull << 63)) ? ~bits : (bits | (1ull << 63));
}

/// Whether sort_key loses information on x: a NaN (all NaNs share a key) or -0.0 (the key of
/// 0.0). Values with none of them are sorted as keys alone and decoded from them.
template <class T>
__device__ inline bool key_collapses(T x) {
  if constexpr (cuda::std::is_floating_point_v<T>) return x != x || (x == T(0) && signbit(x));
  else return false;
}

/// The value whose sort_key is k (x without key_collapses).
template <class T, class K>
__device__ inline T from_sort_key(K k) {
  if constexpr (cuda::std::is_same_v<T, unsigned char>) return static_cast<unsigned char>(k);
  else if constexpr (cuda::std::is_same_v<T, int>) return static_cast<int>(k ^ 0x80000000u);
  else if constexpr (cuda::std::is_same_v<T, long long>) return static_cast<long long>(k ^ (1ull << 63));
  else if constexpr (cuda::std::is_same_v<T, float>) return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
  else return __longlong_as_double(static_cast<long long>((k & (1ull << 63)) ? (k & ~(1ull << 63)) : ~k));
}

/// The key type of an element type: 32 bits for char and 4-byte types, 64 for 8-byte ones.
template <class T>
using KeyOf = cuda::std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

/// Where a pass's keys come from: values converted (sort_key(v[i]) ^ flip) or keys as they are.
/// A load is split in two, raw(i) then key(raw), so that a thread issues all its loads before it
/// converts any (one load in flight at a time leaves the passes latency-bound).
template <class T>
struct ValuesAsKeys {
  using K = KeyOf<T>;
  using Raw = T;
  const T* v;
  K flip;
  __device__ T raw(long long i) const { return v[i]; }
  __device__ K key(T x) const { return sort_key(x) ^ flip; }
  __device__ static bool collapses(T x) { return key_collapses(x); }
};
template <class K>
struct KeysIn {
  using Raw = K;
  const K* k;
  __device__ K raw(long long i) const { return k[i]; }
  __device__ K key(K x) const { return x; }
  __device__ static bool collapses(K) { return false; }
};

/// Where a pass's keys go: decoded to values, or as they are.
template <class T>
struct KeysAsValues {
  using K = KeyOf<T>;
  T* v;
  K flip;
  __device__ void operator()(long long i, K k) const { v[i] = from_sort_key<T>(k ^ flip); }
};
template <class K>
struct KeysOut {
  K* k;
  __device__ void operator()(long long i, K key) const { k[i] = key; }
};

// ---- upsweep ----

constexpr int kUpsweepItems = 8;  // elements a thread loads before it counts any

/// hist[b · 256 + d] += the number of keys whose byte b is d, for b < key bytes (hist zeroed by
/// the host); *collapsed |= 1 if some value's key collapses (key_collapses). Tiles of
/// kUpsweepItems elements a thread, striped, grid stride.
template <class Load>
__device__ void radix_upsweep(Load load, long long n, unsigned long long* hist, unsigned* collapsed) {
  using Raw = typename Load::Raw;
  using K = decltype(load.key(Raw{}));
  constexpr int kBytes = sizeof(K);
  __shared__ unsigned h[kBytes][256];
  for (int i = threadIdx.x; i < kBytes * 256; i += blockDim.x) (&h[0][0])[i] = 0;
  __syncthreads();
  bool any_collapse = false;
  const long long tile = static_cast<long long>(blockDim.x) * kUpsweepItems;
  for (long long base = blockIdx.x * tile; base < n; base += gridDim.x * tile) {
    const bool full = n - base >= tile;
    Raw raw[kUpsweepItems];
    if (full) {
#pragma unroll
      for (int u = 0; u < kUpsweepItems; ++u) raw[u] = load.raw(base + u * blockDim.x + threadIdx.x);
    } else {
#pragma unroll
      for (int u = 0; u < kUpsweepItems; ++u) {
        const long long i = base + u * blockDim.x + threadIdx.x;
        if (i < n) raw[u] = load.raw(i);
      }
    }
#pragma unroll
    for (int u = 0; u < kUpsweepItems; ++u) {
      if (!full && base + u * blockDim.x + threadIdx.x >= n) continue;
      any_collapse |= Load::collapses(raw[u]);
      const K k = load.key(raw[u]);
#pragma unroll
      for (int b = 0; b < kBytes; ++b) atomicAdd(&h[b][static_cast<unsigned>(k >> (8 * b)) & 255u], 1u);
    }
  }
  if (__syncthreads_or(any_collapse) && threadIdx.x == 0) atomicOr(collapsed, 1u);
  for (int i = threadIdx.x; i < kBytes * 256; i += blockDim.x)
    if ((&h[0][0])[i]) atomicAdd(&hist[i], static_cast<unsigned long long>((&h[0][0])[i]));
}

/// digit_start[b · 256 + d] = the elements whose byte b is below d (one block of 256 threads per
/// byte position).
__device__ inline void radix_digit_starts(const unsigned long long* hist, long long* digit_start) {
  using Scan = cub::BlockScan<long long, 256>;
  __shared__ typename Scan::TempStorage storage;
  const int i = blockIdx.x * 256 + threadIdx.x;
  long long start;
  Scan(storage).ExclusiveSum(static_cast<long long>(hist[i]), start);
  digit_start[i] = start;
}

// ---- one-sweep pass ----

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

/// The digit of a key at `shift` (cub's digit extractor interface).
template <class K>
struct DigitAt {
  int shift;
  __device__ __forceinline__ unsigned Digit(K key) const { return static_cast<unsigned>(key >> shift) & 255u; }
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

}  // namespace ndp_gpu
