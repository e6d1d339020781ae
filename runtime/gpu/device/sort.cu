// RANK and SORT (Note [Sort order] in runtime/cpu/primitives.h), and the stable LSD radix sort
// of (unsigned key, int64 payload) pairs they and combine share.
//
// Note [GPU radix sort]
// One pass sorts stably by one 8-bit digit, in three kernels over tiles of kTile elements:
//  1. ndp_radix_hist_*: each tile's digit histogram, stored digit-major: counts[d * tiles + b].
//  2. ndp_radix_rowscan: one block per digit scans its row, giving prefix[d * tiles + b] (the
//     elements with digit d in tiles before b) and totals[d].
//  3. ndp_radix_scatter_*: each tile sorts itself by the digit (cub::BlockRadixSort, stable),
//     so its elements with digit d form a run in their original order; element r of the sorted
//     tile goes to  (elements with a smaller digit) + prefix[d][b] + (r - the run's start).
// Elements with equal digits keep their order across tiles (prefix) and within one (a stable
// block sort), so every pass, and the whole sort, is stable. The host skips passes whose
// digit is the same in every key.
#include <cub/block/block_load.cuh>
#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "common.cuh"

using namespace ndp_gpu;

namespace {

constexpr int kThreads = 256;  // = the number of digits: one thread per digit in the scans
constexpr int kItems = 8;
constexpr int kTile = kThreads * kItems;

// ---- keys ----

__device__ unsigned sort_key(unsigned char x) { return x; }
__device__ unsigned sort_key(int x) { return static_cast<unsigned>(x) ^ 0x80000000u; }
__device__ unsigned long long sort_key(long long x) { return static_cast<unsigned long long>(x) ^ (1ull << 63); }
// Floats: every NaN above +inf (all ones), -0.0 as 0.0; negatives order backwards in their
// bits (flip them all), positives get the sign bit set.
__device__ unsigned sort_key(float x) {
  if (x != x) return ~0u;
  if (x == 0.0f) x = 0.0f;
  unsigned bits = __float_as_uint(x);
  return (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
}
__device__ unsigned long long sort_key(double x) {
  if (x != x) return ~0ull;
  if (x == 0.0) x = 0.0;
  unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(x));
  return (bits & (1ull << 63)) ? ~bits : (bits | (1ull << 63));
}

/// keys[p] = the order-preserving key of v[p] ^ flip (flip reverses the order for descending
/// sorts), payload[p] = p; stats[0] &= every key, stats[1] |= every key, so that the host knows
/// which digits vary.
template <class T, class K>
__device__ void make_keys(const T* v, long long n, K flip, K* keys, long long* payload, unsigned long long* stats) {
  unsigned long long all = ~0ull, any = 0;
  NDP_GRID_STRIDE(p, n) {
    K k = sort_key(v[p]) ^ flip;
    keys[p] = k;
    payload[p] = p;
    all &= k;
    any |= k;
  }
  for (int off = 16; off > 0; off >>= 1) {
    all &= __shfl_xor_sync(0xffffffffu, all, off);
    any |= __shfl_xor_sync(0xffffffffu, any, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAnd(&stats[0], all);
    atomicOr(&stats[1], any);
  }
}

// ---- one radix pass ----

template <class K>
__device__ void radix_hist(const K* keys, long long n, int shift, int* counts, long long tiles) {
  __shared__ int hist[kThreads];
  int t = threadIdx.x;
  hist[t] = 0;
  __syncthreads();
  long long base = static_cast<long long>(blockIdx.x) * kTile;
  int valid = static_cast<int>(min(static_cast<long long>(kTile), n - base));
  for (int i = t; i < valid; i += kThreads) atomicAdd(&hist[static_cast<int>((keys[base + i] >> shift) & 255)], 1);
  __syncthreads();
  counts[t * tiles + blockIdx.x] = hist[t];
}

template <class K>
__device__ void radix_scatter(const K* keys_in, const long long* payload_in, long long n, int shift, const int* counts,
                              const long long* prefix, const long long* totals, long long tiles, K* keys_out,
                              long long* payload_out) {
  using LoadK = cub::BlockLoad<K, kThreads, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using LoadP = cub::BlockLoad<long long, kThreads, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Sort = cub::BlockRadixSort<K, kThreads, kItems, long long>;
  using Scan = cub::BlockScan<long long, kThreads>;
  __shared__ union {
    typename LoadK::TempStorage load_keys;
    typename LoadP::TempStorage load_payload;
    typename Sort::TempStorage sort;
    typename Scan::TempStorage scan;
  } temp;
  __shared__ long long run_start[kThreads], target[kThreads];
  int t = threadIdx.x;
  long long b = blockIdx.x, base = b * kTile;
  int valid = static_cast<int>(min(static_cast<long long>(kTile), n - base));

  // Thread t owns digit t: where its run starts in the sorted tile, and where the run goes.
  long long start, below;
  Scan(temp.scan).ExclusiveSum(static_cast<long long>(counts[t * tiles + b]), start);
  __syncthreads();
  Scan(temp.scan).ExclusiveSum(totals[t], below);
  run_start[t] = start;
  target[t] = below + prefix[t * tiles + b];
  __syncthreads();

  // Past the end: the largest key, so that padding sorts after every real element.
  K key[kItems];
  long long pay[kItems];
  LoadK(temp.load_keys).Load(keys_in + base, key, valid, static_cast<K>(~K(0)));
  __syncthreads();
  LoadP(temp.load_payload).Load(payload_in + base, pay, valid, 0ll);
  __syncthreads();
  Sort(temp.sort).SortBlockedToStriped(key, pay, shift, shift + 8);
  for (int i = 0; i < kItems; ++i) {
    int r = i * kThreads + t;  // striped: item i of thread t is element r of the sorted tile
    if (r < valid) {
      int d = static_cast<int>((key[i] >> shift) & 255);
      long long q = target[d] + (r - run_start[d]);
      keys_out[q] = key[i];
      payload_out[q] = pay[i];
    }
  }
}

}  // namespace

// Key generation, per element type (char and 4-byte types use 32-bit keys, 8-byte types 64).
#define NDP_SORT_KEYS(T, name, K)                                                                            \
  extern "C" __global__ void ndp_sort_keys_##name(const T* v, long long n, K flip, K* keys, long long* payload, \
                                                  unsigned long long* stats) {                               \
    make_keys<T, K>(v, n, flip, keys, payload, stats);                                                       \
  }
NDP_SORT_KEYS(long long, i64, unsigned long long)
NDP_SORT_KEYS(double, f64, unsigned long long)
NDP_SORT_KEYS(int, i32, unsigned)
NDP_SORT_KEYS(float, f32, unsigned)
NDP_SORT_KEYS(unsigned char, char, unsigned)

#define NDP_RADIX(K, kname)                                                                                   \
  extern "C" __global__ void __launch_bounds__(kThreads)                                                      \
      ndp_radix_hist_##kname(const K* keys, long long n, int shift, int* counts, long long tiles) {             \
    radix_hist<K>(keys, n, shift, counts, tiles);                                                             \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(kThreads) ndp_radix_scatter_##kname(                           \
      const K* keys_in, const long long* payload_in, long long n, int shift, const int* counts,                \
      const long long* prefix, const long long* totals, long long tiles, K* keys_out, long long* payload_out) { \
    radix_scatter<K>(keys_in, payload_in, n, shift, counts, prefix, totals, tiles, keys_out, payload_out);    \
  }                                                                                                           \
  /* keys[q] = the segment of element payload[q]: the major key of a segmented sort. */                    \
  extern "C" __global__ void ndp_sort_segment_keys_##kname(const long long* payload, long long n, Segs s,     \
                                                           K* keys) {                                         \
    NDP_GRID_STRIDE(q, n) keys[q] = static_cast<K>(s.segment_of(payload[q]));                                 \
  }
NDP_RADIX(unsigned, u32)
NDP_RADIX(unsigned long long, u64)

// Block d (one per digit) scans row d of the digit-major counts.
extern "C" __global__ void __launch_bounds__(kThreads)
    ndp_radix_rowscan(const int* counts, long long tiles, long long* prefix, long long* totals) {
  using Scan = cub::BlockScan<long long, kThreads>;
  __shared__ typename Scan::TempStorage temp;
  constexpr int kRowItems = 4;
  const int* row = counts + blockIdx.x * tiles;
  long long* out = prefix + blockIdx.x * tiles;
  long long running = 0;
  for (long long start = 0; start < tiles; start += kThreads * kRowItems) {
    long long x[kRowItems], aggregate;
    for (int i = 0; i < kRowItems; ++i) {
      long long j = start + threadIdx.x * kRowItems + i;
      x[i] = j < tiles ? row[j] : 0;
    }
    Scan(temp).ExclusiveSum(x, x, aggregate);
    for (int i = 0; i < kRowItems; ++i) {
      long long j = start + threadIdx.x * kRowItems + i;
      if (j < tiles) out[j] = running + x[i];
    }
    running += aggregate;
    __syncthreads();
  }
  if (threadIdx.x == 0) totals[blockIdx.x] = running;
}

// RANK's result: the element at sorted position q came from payload[q] and lands at position q
// of the sorted array, i.e. at q - begin(its segment) within the segment.
extern "C" __global__ void ndp_rank_positions(const long long* payload, Segs s, long long* out) {
  NDP_GRID_STRIDE(q, s.total) out[payload[q]] = q - s.begin(s.segment_of(q));
}
