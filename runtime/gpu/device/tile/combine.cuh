// Tile level (what one block does): the three passes of *_combine's segmented reduction over
// the sorted positions (Note [GPU combine] in combine.cu), and the sequential fold by target of
// float + and *.
#pragma once

#include <cub/block/block_scan.cuh>

#include "../common.cuh"
#include "../thread/combine_bins.cuh"

namespace ndp::runtime::gpu::device {

/// Blocks of kCombineThreads threads, kCombineItems sorted positions a thread.
constexpr int kCombineThreads = 256;
constexpr int kCombineItems = 8;
constexpr int kCombineTile = kCombineThreads * kCombineItems;

/// Loads this tile's pairs in blocked order (thread t holds sorted positions t*kCombineItems +
/// i), runs the segmented inclusive scan and returns the tile's aggregate. Padding past n is a
/// head, so it cannot disturb real elements (it only ever follows them).
template <Op O, class T>
__device__ BinPair<T> combine_scan_tile(const void* keys, int key_bytes, const long long* from, const T* vals,
                                        long long n, BinPair<T> (&item)[kCombineItems]) {
  using Scan = cub::BlockScan<BinPair<T>, kCombineThreads>;
  __shared__ typename Scan::TempStorage temp;
  long long first =
      static_cast<long long>(blockIdx.x) * kCombineTile + static_cast<long long>(threadIdx.x) * kCombineItems;
  for (int i = 0; i < kCombineItems; ++i) {
    long long q = first + i;
    if (q < n)
      item[i] = BinPair<T>{q == 0 || key_at(keys, key_bytes, q - 1) != key_at(keys, key_bytes, q), vals[from[q]]};
    else item[i] = BinPair<T>{1, T()};
  }
  BinPair<T> aggregate;
  Scan(temp).InclusiveScan(item, item, BinPairOp<O, T>{}, aggregate);
  return aggregate;
}

template <Op O, class T>
__device__ void combine_tiles(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                              BinPair<T>* aggregates) {
  BinPair<T> item[kCombineItems];
  BinPair<T> aggregate = combine_scan_tile<O, T>(keys, key_bytes, from, vals, n, item);
  if (threadIdx.x == 0) aggregates[blockIdx.x] = aggregate;
}

// One block: carry[b] = the segmented inclusive scan of aggregates[0, b) (b >= 1; tile 0 needs
// none, since position 0 is a head). Chunks of kCombineThreads aggregates, with a running carry.
template <Op O, class T>
__device__ void combine_carry(const BinPair<T>* aggregates, long long tiles, BinPair<T>* carry) {
  using Scan = cub::BlockScan<BinPair<T>, kCombineThreads>;
  __shared__ typename Scan::TempStorage temp;
  BinPairOp<O, T> op;
  BinPair<T> running{1, T()};
  for (long long start = 0; start < tiles; start += kCombineThreads) {
    long long b = start + threadIdx.x;
    BinPair<T> x = b < tiles ? aggregates[b] : BinPair<T>{1, T()};
    BinPair<T> inclusive, chunk;
    Scan(temp).InclusiveScan(x, inclusive, op, chunk);
    if (start > 0) inclusive = op(running, inclusive);
    if (b + 1 < tiles) carry[b + 1] = inclusive;
    running = start > 0 ? op(running, chunk) : chunk;
    __syncthreads();
  }
}

template <Op O, class T>
__device__ void combine_apply(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                              const BinPair<T>* carry, const T* dest, T* out) {
  BinPair<T> item[kCombineItems];
  combine_scan_tile<O, T>(keys, key_bytes, from, vals, n, item);
  long long first =
      static_cast<long long>(blockIdx.x) * kCombineTile + static_cast<long long>(threadIdx.x) * kCombineItems;
  for (int i = 0; i < kCombineItems; ++i) {
    long long q = first + i;
    if (q >= n) break;
    long long k = key_at(keys, key_bytes, q);
    if (q + 1 < n && key_at(keys, key_bytes, q + 1) == k) continue;  // not the bin's last element
    T total = item[i].head ? item[i].value : bin_op<O, T>(carry[blockIdx.x].value, item[i].value);
    out[k] = combine_op<O, T>(dest[k], total);
  }
}

// Float + and * are not associative, and extensions.md §3 defines *_combine as the left fold in
// ascending source order: one thread per target folds its bin sequentially, starting from
// dest[k]. Exact; the price is a serial walk of each bin (a single hot target of m values costs
// m dependent additions on one thread).
template <Op O, class T>
__device__ void combine_fold(const void* keys, int key_bytes, const long long* from, const T* vals, long long n,
                             const T* dest, T* out) {
  NDP_GRID_STRIDE(q, n) {
    long long k = key_at(keys, key_bytes, q);
    if (q > 0 && key_at(keys, key_bytes, q - 1) == k) continue;  // not the bin's first element
    T acc = dest[k];
    for (long long r = q; r < n && key_at(keys, key_bytes, r) == k; ++r) acc = combine_op<O, T>(acc, vals[from[r]]);
    out[k] = acc;
  }
}

}  // namespace ndp::runtime::gpu::device
