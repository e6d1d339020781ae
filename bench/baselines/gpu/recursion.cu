// Baselines of issue 24's recursion benchmarks, timed in the same run as ndp's
// (bench/run_gpu_recursion.py). Each input is generated from bench::hash exactly as the
// matching bench/programs/*.ndp generates it, so the checksums compare with ndp's:
//   radixsort N: CUB DeviceRadixSort::SortKeys of N int64 keys on all 64 bits
//     (bench/programs/qsort.ndp's keys; issue 24 asks for every bit to be sorted);
//   bitonic N: a hand-written bitonic sort of N int64 keys, N a power of two
//     (bench/programs/batcher.ndp): tiles of 2048 sorted in shared memory, then for each
//     merge size the strides that cross tiles in global memory and the rest in shared memory;
//   quickhull N: a hand-written quickhull of N points (bench/programs/quickhull.ndp), the same
//     recursion as NESL's hsplit, flattened by hand: every point carries its segment, a level
//     is four passes over the points left (the cross products with each segment's count and
//     farthest point, the farthest point's lowest index, its coordinates, the split into the
//     two children), with warp-combined atomics, and the segments (a few hundred at most) are
//     kept in order on the host; the ends of the first line are CUB's ArgMin and ArgMax of x.
// Times cover the algorithm until its answer is on the device, as NESL's time(e) on the cuda
// backend waits for the kernels and copies nothing back; quickhull's answer is assembled on the
// host, as its segments are kept there.
// Prints one line a row: `NAME n N median MS min MS max MS checksum X`.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o recursion bench/baselines/gpu/recursion.cu
//   ./recursion radixsort 16777216 | bitonic 1048576 | quickhull 10000000
#include <cuda_runtime.h>
#include <cub/cub.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "../cpu/common.h"
#include "bench_util.cuh"

namespace {

constexpr int kThreads = 256;

void report(const char* name, int64_t n, bench_util::Times t, int64_t checksum) {
  std::printf("%s n %lld median %.4f min %.4f max %.4f checksum %lld\n", name, static_cast<long long>(n), t.median, t.min,
              t.max, static_cast<long long>(checksum));
}

__global__ void gen_keys(int64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = bench::hash(i);
}

/// bench_checksum of a sorted sequence: sum(x * (i + 1)), wrapping as NESL's ints do.
int64_t sorted_checksum(const int64_t* d, int64_t n) {
  std::vector<int64_t> r(static_cast<size_t>(n));
  CK(cudaMemcpy(r.data(), d, r.size() * 8, cudaMemcpyDeviceToHost));
  return bench::weighted_checksum(r);
}

// ---- radixsort ----

void run_radixsort(int64_t n) {
  int64_t *in = bench_util::dalloc<int64_t>(n), *out = bench_util::dalloc<int64_t>(n);
  gen_keys<<<1024, kThreads>>>(in, n);
  void* temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 64));
  CK(cudaMalloc(&temp, bytes ? bytes : 1));
  bench_util::Times t = bench_util::time_runs([&] { CK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 64)); });
  report("radixsort", n, t, sorted_checksum(out, n));
  CK(cudaFree(temp));
  CK(cudaFree(in));
  CK(cudaFree(out));
}

// ---- bitonic ----

constexpr int kTile = 2048;  // keys a block sorts or merges in shared memory (1024 threads, 2 each)

/// The compare-exchange of keys i and i + stride (i's bit `stride` clear) in a merge of `size`:
/// ascending where i's bit `size` is clear, the classic bitonic network.
__device__ inline void exchange(int64_t& a, int64_t& b, bool ascending) {
  if ((a > b) == ascending) {
    int64_t t = a;
    a = b;
    b = t;
  }
}

/// Sorts every tile (size 2 .. kTile), or with `size` > kTile finishes merge `size` for the
/// strides below kTile; the tile is in shared memory throughout.
__global__ void __launch_bounds__(kTile / 2) bitonic_shared(int64_t* d, int64_t size) {
  __shared__ int64_t s[kTile];
  const int64_t base = int64_t{blockIdx.x} * kTile;
  const int t = threadIdx.x;
  s[t] = d[base + t];
  s[t + kTile / 2] = d[base + t + kTile / 2];
  const int64_t first = size == 0 ? 2 : size, last = size == 0 ? kTile : size;
  for (int64_t sz = first; sz <= last; sz <<= 1)
    for (int64_t stride = (size == 0 ? sz : kTile) / 2; stride > 0; stride >>= 1) {
      __syncthreads();
      const int i = 2 * t - (t & (static_cast<int>(stride) - 1));
      exchange(s[i], s[i + stride], ((base + i) & sz) == 0);
    }
  __syncthreads();
  d[base + t] = s[t];
  d[base + t + kTile / 2] = s[t + kTile / 2];
}

/// One stride (≥ kTile) of merge `size` in global memory, a thread a pair.
__global__ void bitonic_global(int64_t* d, int64_t n, int64_t size, int64_t stride) {
  for (int64_t p = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; p < n / 2; p += int64_t{gridDim.x} * blockDim.x) {
    const int64_t i = 2 * p - (p & (stride - 1));
    int64_t a = d[i], b = d[i + stride];
    exchange(a, b, (i & size) == 0);
    d[i] = a;
    d[i + stride] = b;
  }
}

void bitonic_sort(int64_t* d, int64_t n) {
  const unsigned tiles = static_cast<unsigned>(n / kTile);
  bitonic_shared<<<tiles, kTile / 2>>>(d, 0);
  for (int64_t size = 2 * kTile; size <= n; size <<= 1) {
    for (int64_t stride = size / 2; stride >= kTile; stride >>= 1)
      bitonic_global<<<static_cast<unsigned>((n / 2 + kThreads - 1) / kThreads), kThreads>>>(d, n, size, stride);
    bitonic_shared<<<tiles, kTile / 2>>>(d, size);
  }
}

void run_bitonic(int64_t n) {
  if (n < kTile || (n & (n - 1)) != 0) {
    std::fprintf(stderr, "bitonic: N must be a power of two of at least %d\n", kTile);
    std::exit(2);
  }
  int64_t *in = bench_util::dalloc<int64_t>(n), *d = bench_util::dalloc<int64_t>(n);
  gen_keys<<<1024, kThreads>>>(in, n);
  std::vector<int64_t> host(static_cast<size_t>(n));
  bench_util::Times t = bench_util::time_runs([&] { bitonic_sort(d, n); },
                                              [&] { CK(cudaMemcpy(d, in, static_cast<size_t>(n) * 8, cudaMemcpyDeviceToDevice)); });
  CK(cudaMemcpy(host.data(), d, host.size() * 8, cudaMemcpyDeviceToHost));
  for (int64_t i = 1; i < n; ++i)
    if (host[i - 1] > host[i]) {
      std::fprintf(stderr, "bitonic: not sorted at %lld\n", static_cast<long long>(i));
      std::exit(1);
    }
  report("bitonic", n, t, bench::weighted_checksum(host));
  CK(cudaFree(in));
  CK(cudaFree(d));
}

// ---- quickhull ----

/// A point on its way down the recursion: its coordinates, its segment and its input index
/// (NESL's max_index takes the leftmost maximum; packs keep input order, so the lowest index).
struct Pt {
  double x, y;
  int32_t seg, index;
};

/// Per segment of a level: its line, its points' count of positive cross products, the largest
/// cross product (as ordered bits) and the lowest index holding it, and that point.
struct SegState {
  double x1, y1, x2, y2;
  unsigned long long count, best_bits;
  int32_t best_index, pad;
  double mx, my;
};

__device__ inline double cross(double xo, double yo, double x1, double y1, double x2, double y2) {
  return (x1 - xo) * (y2 - yo) - (y1 - yo) * (x2 - xo);  // NESL's cross_product, same order
}
/// Doubles as unsigned integers of the same order (for atomicMax).
__device__ inline unsigned long long ordered(double v) {
  unsigned long long b = __double_as_longlong(v);
  return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

// Atomics on one segment's words from every point would serialise, so a warp first combines
// the lanes of each segment (__match_any_sync, __reduce_*_sync) and one lane makes the atomic,
// into the block's shared copy where the segments fit, flushed once a block; the room for the
// points kept is taken once a block (block_room). The loops run whole warps (or blocks) to the
// end, a thread past n with no point, so that they stay converged.

/// Lane's exclusive prefix of `v` within the warp and the warp's total (all lanes take part).
__device__ inline unsigned warp_scan(unsigned v, unsigned* total) {
  const unsigned lane = threadIdx.x & 31;
  unsigned x = v;
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned y = __shfl_up_sync(0xffffffffu, x, d);
    if (lane >= static_cast<unsigned>(d)) x += y;
  }
  *total = __shfl_sync(0xffffffffu, x, 31);
  return x - v;
}

/// Room for `k` items of this thread at the end of `out`, for the whole block with one atomic
/// (every thread of the block calls it, as often as the others).
__device__ inline unsigned long long block_room(unsigned k, unsigned long long* kept) {
  __shared__ unsigned warp_before[32];
  __shared__ unsigned long long base;
  const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  unsigned total = 0;
  const unsigned before = warp_scan(k, &total);
  if (lane == 0) warp_before[warp] = total;
  __syncthreads();
  if (warp == 0) {
    unsigned all = 0;
    const unsigned mine = lane < warps ? warp_before[lane] : 0u;
    const unsigned prefix = warp_scan(mine, &all);
    if (lane < warps) warp_before[lane] = prefix;
    if (lane == 0) base = all > 0 ? atomicAdd(kept, static_cast<unsigned long long>(all)) : 0ull;
  }
  __syncthreads();
  const unsigned long long at = base + warp_before[warp] + before;
  __syncthreads();  // the next call writes them again
  return at;
}

/// Whole blocks to the end (a thread past n has no point), so that block_room may be called.
#define FOR_BLOCKS(i, n)                                                                               \
  for (int64_t i##_base = blockIdx.x * int64_t{blockDim.x}, i = 0; i##_base < (n);                    \
       i##_base += int64_t{gridDim.x} * blockDim.x)                                                   \
    if ((i = i##_base + threadIdx.x), true)

#define FOR_WARPS(i, n)                                                                          \
  for (int64_t i##_base = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) & ~int64_t{31}, i = 0; \
       i##_base < (n); i##_base += int64_t{gridDim.x} * blockDim.x)                              \
    if ((i = i##_base + (threadIdx.x & 31)), true)

/// Segments a block keeps its counts and maxima for in shared memory, flushing them once.
constexpr int kSharedSegs = 1024;

__global__ void hull_cross(const Pt* p, int64_t n, SegState* s, int segs) {
  __shared__ unsigned long long count_of[kSharedSegs], best_of[kSharedSegs];
  const bool local = segs <= kSharedSegs;
  if (local)
    for (int k = threadIdx.x; k < segs; k += blockDim.x) count_of[k] = best_of[k] = 0;
  __syncthreads();
  FOR_WARPS(i, n) {
    const bool live = i < n;
    Pt q{};
    if (live) q = p[i];
    const int seg = live ? q.seg : -1;
    unsigned long long o = 0;
    unsigned pos = 0;
    if (live) {
      const SegState& g = s[seg];
      const double c = cross(q.x, q.y, g.x1, g.y1, g.x2, g.y2);
      o = ordered(c);
      pos = c > 0;
    }
    const unsigned group = __match_any_sync(0xffffffffu, seg);
    const unsigned count = __reduce_add_sync(group, pos);
    const unsigned hi = __reduce_max_sync(group, static_cast<unsigned>(o >> 32));
    const unsigned lo = __reduce_max_sync(group, static_cast<unsigned>(o >> 32) == hi ? static_cast<unsigned>(o) : 0u);
    if (live && (threadIdx.x & 31) == static_cast<unsigned>(__ffs(group) - 1)) {
      const unsigned long long best = (static_cast<unsigned long long>(hi) << 32) | lo;
      if (local) {
        if (count) atomicAdd(&count_of[seg], static_cast<unsigned long long>(count));
        atomicMax(&best_of[seg], best);
      } else {
        if (count) atomicAdd(&s[seg].count, static_cast<unsigned long long>(count));
        atomicMax(&s[seg].best_bits, best);
      }
    }
  }
  __syncthreads();
  if (local)
    for (int k = threadIdx.x; k < segs; k += blockDim.x) {
      if (count_of[k]) atomicAdd(&s[k].count, count_of[k]);
      if (best_of[k]) atomicMax(&s[k].best_bits, best_of[k]);
    }
}
__global__ void hull_best(const Pt* p, int64_t n, SegState* s) {
  FOR_WARPS(i, n) {
    bool best = false;
    Pt q{};
    if (i < n) {
      q = p[i];
      const SegState& g = s[q.seg];
      best = ordered(cross(q.x, q.y, g.x1, g.y1, g.x2, g.y2)) == g.best_bits;
    }
    const int seg = best ? q.seg : -1;
    const unsigned group = __match_any_sync(0xffffffffu, seg);
    const unsigned lowest = __reduce_min_sync(group, best ? static_cast<unsigned>(q.index) : ~0u);
    if (best && (threadIdx.x & 31) == static_cast<unsigned>(__ffs(group) - 1))
      atomicMin(&s[seg].best_index, static_cast<int32_t>(lowest));
  }
}
__global__ void hull_best_point(const Pt* p, int64_t n, SegState* s) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const Pt q = p[i];
    if (q.index == s[q.seg].best_index) {
      s[q.seg].mx = q.x;
      s[q.seg].my = q.y;
    }
  }
}
/// The points of segment s with a positive cross product go to child[2s] and child[2s + 1]
/// (a segment's new number, or -1 where it finished), each a copy where it is left of that
/// child's line, as NESL's two recursive calls each filter the packed points again.
__global__ void hull_split(const Pt* p, int64_t n, const SegState* s, const SegState* next, const int32_t* child, Pt* out,
                           unsigned long long* kept) {
  FOR_BLOCKS(i, n) {
    Pt q{};
    bool go[2] = {false, false};
    int32_t to[2] = {-1, -1};
    if (i < n) {
      q = p[i];
      const SegState& g = s[q.seg];
      if (cross(q.x, q.y, g.x1, g.y1, g.x2, g.y2) > 0)
        for (int k = 0; k < 2; ++k) {
          to[k] = child[2 * q.seg + k];
          if (to[k] < 0) continue;
          const SegState& h = next[to[k]];
          go[k] = cross(q.x, q.y, h.x1, h.y1, h.x2, h.y2) > 0;
        }
    }
    unsigned long long at = block_room(go[0] + go[1], kept);
    for (int k = 0; k < 2; ++k)
      if (go[k]) {
        Pt r = q;
        r.seg = to[k];
        out[at++] = r;
      }
  }
}
__global__ void hull_first(const double2* pts, int64_t n, const SegState* s, Pt* out, unsigned long long* kept) {
  // Both top-level calls see every point; a point goes to the call whose line it is left of.
  FOR_BLOCKS(i, n) {
    double2 q{0, 0};
    bool go[2] = {false, false};
    if (i < n) {
      q = pts[i];
      for (int k = 0; k < 2; ++k) go[k] = cross(q.x, q.y, s[k].x1, s[k].y1, s[k].x2, s[k].y2) > 0;
    }
    unsigned long long at = block_room(go[0] + go[1], kept);
    for (int k = 0; k < 2; ++k)
      if (go[k]) out[at++] = Pt{q.x, q.y, k, static_cast<int32_t>(i)};
  }
}
__global__ void gen_points(double2* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = double2{static_cast<double>(bench::hash(2 * i)) / 1073741824.0, static_cast<double>(bench::hash(2 * i + 1)) / 1073741824.0};
}

/// A segment in the hull's order: still splitting (its number at this level), or done with
/// its output points (p1, then the one point left of its line if any).
struct Node {
  bool done;
  int32_t seg;
  double x1, y1, x2, y2;
  std::vector<double2> out;
};

/// The x coordinates of the points, for CUB's arg-min and arg-max.
struct XOf {
  __host__ __device__ double operator()(const double2& p) const { return p.x; }
};

/// CUB's temporary storage for the two arg reductions, allocated once outside the timing.
struct ArgTemp {
  void* p = nullptr;
  size_t bytes = 0;
  double* value = nullptr;   // [min, max]
  int64_t* index = nullptr;  // [argmin, argmax]
};

std::vector<double2> quickhull(const double2* pts, int64_t n, Pt* a, Pt* b, SegState* segs, SegState* next,
                               int32_t* child, unsigned long long* kept, ArgTemp& arg) {
  // The leftmost minimum and maximum of x, as min_index and max_index take them (CUB's ArgMin
  // and ArgMax return the first).
  auto xs = thrust::make_transform_iterator(pts, XOf());
  CK(cub::DeviceReduce::ArgMin(arg.p, arg.bytes, xs, arg.value, arg.index, n));
  CK(cub::DeviceReduce::ArgMax(arg.p, arg.bytes, xs, arg.value + 1, arg.index + 1, n));
  int64_t ends[2];
  CK(cudaMemcpy(ends, arg.index, sizeof ends, cudaMemcpyDeviceToHost));
  double2 pmin, pmax;
  CK(cudaMemcpy(&pmin, pts + ends[0], sizeof pmin, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&pmax, pts + ends[1], sizeof pmax, cudaMemcpyDeviceToHost));
  std::vector<Node> nodes = {{false, 0, pmin.x, pmin.y, pmax.x, pmax.y, {}}, {false, 1, pmax.x, pmax.y, pmin.x, pmin.y, {}}};
  std::vector<SegState> host(2);
  for (int k = 0; k < 2; ++k) host[k] = SegState{nodes[k].x1, nodes[k].y1, nodes[k].x2, nodes[k].y2, 0, 0, INT32_MAX, 0, 0, 0};
  CK(cudaMemcpy(segs, host.data(), 2 * sizeof(SegState), cudaMemcpyHostToDevice));
  CK(cudaMemset(kept, 0, sizeof *kept));
  hull_first<<<1024, kThreads>>>(pts, n, segs, a, kept);
  unsigned long long m = 0;
  CK(cudaMemcpy(&m, kept, sizeof m, cudaMemcpyDeviceToHost));
  for (;;) {
    const unsigned grid = static_cast<unsigned>(std::min<unsigned long long>(1024, (m + kThreads - 1) / kThreads + 1));
    const int64_t live = static_cast<int64_t>(host.size());
    if (m > 0) {
      hull_cross<<<grid, kThreads>>>(a, static_cast<int64_t>(m), segs, static_cast<int>(live));
      hull_best<<<grid, kThreads>>>(a, static_cast<int64_t>(m), segs);
      hull_best_point<<<grid, kThreads>>>(a, static_cast<int64_t>(m), segs);
    }
    CK(cudaMemcpy(host.data(), segs, live * sizeof(SegState), cudaMemcpyDeviceToHost));
    // Each live segment finishes (fewer than two points left of its line) or splits in two.
    std::vector<Node> order;
    std::vector<SegState> children;
    std::vector<int32_t> child_of(2 * live, -1);
    for (Node& node : nodes) {
      if (node.done) {
        order.push_back(std::move(node));
        continue;
      }
      const SegState& g = host[node.seg];
      if (g.count < 2) {
        node.done = true;
        node.out.push_back(double2{node.x1, node.y1});
        if (g.count == 1) node.out.push_back(double2{g.mx, g.my});  // the one point left of the line is the farthest
        order.push_back(std::move(node));
        continue;
      }
      for (int k = 0; k < 2; ++k) {
        const int32_t c = static_cast<int32_t>(children.size());
        child_of[2 * node.seg + k] = c;
        Node ch{false, c, k == 0 ? node.x1 : g.mx, k == 0 ? node.y1 : g.my, k == 0 ? g.mx : node.x2, k == 0 ? g.my : node.y2, {}};
        children.push_back(SegState{ch.x1, ch.y1, ch.x2, ch.y2, 0, 0, INT32_MAX, 0, 0, 0});
        order.push_back(std::move(ch));
      }
    }
    nodes = std::move(order);
    if (children.empty()) break;
    CK(cudaMemcpy(next, children.data(), children.size() * sizeof(SegState), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(child, child_of.data(), child_of.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(kept, 0, sizeof *kept));
    hull_split<<<grid, kThreads>>>(a, static_cast<int64_t>(m), segs, next, child, b, kept);
    CK(cudaMemcpy(&m, kept, sizeof m, cudaMemcpyDeviceToHost));
    std::swap(a, b);
    std::swap(segs, next);
    host = children;
  }
  std::vector<double2> hull;
  for (const Node& node : nodes) hull.insert(hull.end(), node.out.begin(), node.out.end());
  return hull;
}

void run_quickhull(int64_t n) {
  double2* pts = bench_util::dalloc<double2>(n);
  gen_points<<<1024, kThreads>>>(pts, n);
  // Every point can be left of one top-level line, and of at most one child line after that
  // in exact arithmetic; rounding could put one left of both, so room for two copies each.
  Pt *a = bench_util::dalloc<Pt>(2 * n), *b = bench_util::dalloc<Pt>(2 * n);
  const int64_t max_segs = 1 << 20;
  SegState *segs = bench_util::dalloc<SegState>(max_segs), *next = bench_util::dalloc<SegState>(max_segs);
  int32_t* child = bench_util::dalloc<int32_t>(2 * max_segs);
  unsigned long long* kept = bench_util::dalloc<unsigned long long>(1);
  ArgTemp arg;
  arg.value = bench_util::dalloc<double>(2);
  arg.index = bench_util::dalloc<int64_t>(2);
  {
    auto xs = thrust::make_transform_iterator(pts, XOf());
    size_t lo = 0, hi = 0;
    CK(cub::DeviceReduce::ArgMin(nullptr, lo, xs, arg.value, arg.index, n));
    CK(cub::DeviceReduce::ArgMax(nullptr, hi, xs, arg.value + 1, arg.index + 1, n));
    arg.bytes = std::max(lo, hi);
    CK(cudaMalloc(&arg.p, std::max<size_t>(arg.bytes, 1)));
  }
  std::vector<double2> hull;
  bench_util::Times t = bench_util::time_runs([&] { hull = quickhull(pts, n, a, b, segs, next, child, kept, arg); });
  std::vector<int64_t> keys(hull.size());
  for (size_t i = 0; i < hull.size(); ++i)
    keys[i] = static_cast<int64_t>(hull[i].x * 1073741824.0) + 3 * static_cast<int64_t>(hull[i].y * 1073741824.0);
  report("quickhull", n, t, bench::weighted_checksum(keys));
  CK(cudaFree(pts));
  CK(cudaFree(a));
  CK(cudaFree(b));
  CK(cudaFree(segs));
  CK(cudaFree(next));
  CK(cudaFree(child));
  CK(cudaFree(kept));
  CK(cudaFree(arg.p));
  CK(cudaFree(arg.value));
  CK(cudaFree(arg.index));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: recursion radixsort N | bitonic N | quickhull N\n");
    return 2;
  }
  bench_util::reps = 10;
  const char* what = argv[1];
  const int64_t n = std::atoll(argv[2]);
  if (!std::strcmp(what, "radixsort")) run_radixsort(n);
  else if (!std::strcmp(what, "bitonic")) run_bitonic(n);
  else if (!std::strcmp(what, "quickhull")) run_quickhull(n);
  else return 2;
  return 0;
}
