// Scans and reductions (Note [Single-pass scans and reductions]), and count_true: the
// device-wide passes, over tile/reduce_flat.cuh, reduce_segments.cuh, reduce_fixup.cuh and
// scan.cuh. Kernels per supported (operator, type), named <kernel>_<op>_<type>:
//   ndp_reduce_flat         one segment: a partial per block (kPassBlock threads)
//   ndp_reduce_flat_finish  one block of kPassBlock: folds the partials and the unaligned ends
//   ndp_reduce_seg          several segments, one pass over tiles: the segments ending in each
//                           tile, its aggregate and its partial segment (grid stride)
//   ndp_reduce_seg_wide     the same in larger tiles, for segments of 4 elements or more on
//                           average (Note [Segmented reduction shape])
//   ndp_reduce_seg_chunks   a block per chunk of kCarryChunk tiles: the fold of their aggregates
//   ndp_reduce_seg_fixup    a block per chunk: completes the partial segments ending in its tiles
//                           (Note [Segmented reduction fix-up])
//   ndp_scan_flat           one segment, single pass with look-back (tiles by ticket, of
//                           ScanShape: Note [Scan tile shape])
//   ndp_scan_seg            several segments, the same
// and ndp_seg_tile_bounds: the first boundary of every tile of an offsets descriptor.
//
// Note [Single-pass scans and reductions]
// Every element is read once, and a scan writes it once; the tile bookkeeping must stay small
// next to that, at every segment shape.
// * Flat reduction (a descriptor of one segment): every warp folds a contiguous stretch of the
//   array with 16-byte loads, its lanes' results combined by an order-keeping shuffle tree
//   (warp_fold); every block writes one partial, and a second kernel of one block folds the
//   partials in order, together with the unaligned head and tail of the array (under 16 bytes
//   each). No float atomics: the result is the same on every run.
// * Scans: tiles (of ScanShape, Note [Scan tile shape]) are loaded with 16-byte words through
//   shared memory, warp by warp, and folded as values (one segment) or as (value, head flag)
//   pairs (Note [Tiled segmented scan]). A block takes its tiles in order from a ticket
//   counter and learns the value its tile starts from by decoupled look-back (Merrill &
//   Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016): it publishes
//   its aggregate, folds the records of the preceding tiles, the nearest first, a warp of them
//   at a time, until one holds an inclusive prefix, and publishes its own. Tickets rather than
//   block indices order the tiles, so a block only ever waits for tiles held by running
//   blocks, which publish their aggregates without waiting: no deadlock, whatever the
//   scheduling. Where the look-back stops depends on timing, so float + and * may round
//   differently from run to run (the reassociation every parallel scan has); integers and
//   max/min are exact.
// * Segmented reductions: one pass over the tiles (no waiting) writes every
//   segment that ends in the tile, scanned from the identity, and the tile's aggregate pair;
//   a segment that began in an earlier tile thus gets only its part in this tile. Then one
//   block scans the tiles' aggregates (the value each tile starts from, as in a scan) and
//   completes those segments, at most one per tile. A tile in which no segment ends is one
//   segment's part: its aggregate is a plain ordered fold, with no exchange through shared
//   memory and no block scan. The same on every run.
// * Head flags: a tile marks the boundaries off(j) falling in it, j in [a - 1, b), as bytes in
//   shared memory, where a is the first boundary after its first element (upper_bound_off).
//   With an offsets array, a comes from a table computed once per call (one binary search per
//   tile, ndp_seg_tile_bounds), not searched again in every tile of every pass; regular
//   descriptors compute it by division.
#include <cub/block/block_reduce.cuh>

#include "tile/fixed_tile.cuh"
#include "tile/reduce_fixup.cuh"
#include "tile/reduce_flat.cuh"
#include "tile/reduce_segments.cuh"
#include "tile/scan.cuh"

using namespace ndp::runtime::gpu::device;

#define NDP_SCAN_FAMILY(O, oname, T, tname)                                                                      \
  extern "C" __global__ void __launch_bounds__(kPassBlock)                                                        \
      ndp_reduce_flat_##oname##_##tname(const T* in, long long n, T* partials) {                                  \
    reduce_flat_partials<Fn<O, T>>(in, n, partials);                                                              \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kPassBlock)                                                        \
      ndp_reduce_flat_finish_##oname##_##tname(const T* in, long long n, const T* partials, int nparts, T* out) { \
    reduce_flat_finish<Fn<O, T>>(in, n, partials, nparts, out);                                                   \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)                                        \
      ndp_reduce_seg_##oname##_##tname(const T* in, Segs s, const long long* bounds, SegPair<T>* agg,             \
                                       long long* fix, T* out) {                                                  \
    reduce_seg_tiles<Fn<O, T>>(ArrayIn<T>{in}, s, bounds, agg, fix, out);                                      \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(WideReduceShape<T>::kBlock, kWideReduceMinBlocks)                 \
      ndp_reduce_seg_wide_##oname##_##tname(const T* in, Segs s, const long long* bounds, SegPair<T>* agg,        \
                                            long long* fix, T* out) {                                             \
    reduce_seg_tiles<Fn<O, T>, WideReduceShape<T>>(ArrayIn<T>{in}, s, bounds, agg, fix, out);                    \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kCarryBlock)                                                       \
      ndp_reduce_seg_fixup_near_##oname##_##tname(const SegPair<T>* agg, long long* fix, long long ntiles, T* out) { \
    reduce_seg_fixup_near<Fn<O, T>>(agg, fix, ntiles, out);                                                       \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kCarryBlock)                                                       \
      ndp_reduce_seg_chunks_##oname##_##tname(const SegPair<T>* agg, const long long* fix, long long ntiles,      \
                                              SegPair<T>* chunk_agg) {                                            \
    reduce_seg_chunks<Fn<O, T>>(agg, fix, ntiles, chunk_agg);                                                     \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kCarryBlock)                                                       \
      ndp_reduce_seg_fixup_##oname##_##tname(const SegPair<T>* agg, const long long* fix, long long ntiles,       \
                                             const SegPair<T>* chunk_agg, T* out) {                               \
    reduce_seg_fixup<Fn<O, T>>(agg, fix, ntiles, chunk_agg, out);                                                 \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(ScanShape<T>::kBlock, kScanMinBlocks<T>)                          \
      ndp_scan_flat_##oname##_##tname(const T* in, long long n, int inclusive, unsigned long long* scratch,       \
                                      T* out) {                                                                   \
    scan_pass<Fn<O, T>, false, ScanShape<T>>(ArrayIn<T>{in}, Segs{1, n, nullptr, n}, nullptr, inclusive != 0,     \
                                             scratch, out);                                                       \
    /* inclusive == 2 (kScanOffsets): offsets, whose first entry precedes out */                                  \
    if (inclusive == 2 && blockIdx.x == 0 && threadIdx.x == 0) out[-1] = Fn<O, T>::identity();                    \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(ScanShape<T>::kBlock, kScanMinBlocks<T>)                          \
      ndp_scan_seg_##oname##_##tname(const T* in, Segs s, const long long* bounds, int inclusive,                 \
                                     unsigned long long* scratch, T* out) {                                       \
    scan_pass<Fn<O, T>, true, ScanShape<T>>(ArrayIn<T>{in}, s, bounds, inclusive != 0, scratch, out);            \
  }

// + and * on numbers; max and min on numbers and char; and, or, xor on ints and bool (ops.h).
#define NDP_ON_NUMBERS(O, oname) \
  NDP_SCAN_FAMILY(O, oname, long long, i64) NDP_SCAN_FAMILY(O, oname, double, f64) \
  NDP_SCAN_FAMILY(O, oname, int, i32) NDP_SCAN_FAMILY(O, oname, float, f32)
#define NDP_ON_LOGICALS(O, oname) \
  NDP_SCAN_FAMILY(O, oname, long long, i64) NDP_SCAN_FAMILY(O, oname, int, i32) NDP_SCAN_FAMILY(O, oname, bool, bool)

NDP_ON_NUMBERS(Op::plus, plus)
NDP_ON_NUMBERS(Op::mult, mult)
NDP_ON_NUMBERS(Op::max, max)
NDP_SCAN_FAMILY(Op::max, max, unsigned char, char)
NDP_ON_NUMBERS(Op::min, min)
NDP_SCAN_FAMILY(Op::min, min, unsigned char, char)
NDP_ON_LOGICALS(Op::and_, and)
NDP_ON_LOGICALS(Op::or_, or)
NDP_ON_LOGICALS(Op::xor_, xor)

// bounds[t] = the first boundary j with off(j) > min(t·tile, total), for t in [0, ntiles]: the
// boundaries of tile t are [bounds[t] - 1, bounds[t + 1]) (mark_heads). One search per tile
// (Note [Guided tile-bounds search] in thread/boundaries.cuh), once per call, instead of two per
// tile in every pass. An offsets descriptor only (a regular one needs no table: tile_bounds in
// runtime/gpu/seg_scan.cpp).
extern "C" __global__ void ndp_seg_tile_bounds(Segs s, long long tile, long long* bounds) {
  const long long ntiles = (s.total + tile - 1) / tile;
  NDP_GRID_STRIDE(t, ntiles + 1) {
    const long long x = t * tile < s.total ? t * tile : s.total;
    bounds[t] = upper_bound_off_guided(s, x);
  }
}

// The same table by segment, where tiles are no more than segments (Note [Tile bounds by
// segment] in runtime/gpu/seg_scan.cpp): segment j, [off(j), off(j + 1)), holds the starts
// t·tile of tiles t in [lo, hi) (rounding up), whose first boundary after the start is j + 1.
// A thread takes kBoundsSegments consecutive segments, their offsets loaded together; a segment
// over more than 32 tiles has its entries written by its whole warp.
constexpr int kBoundsSegments = 8;

extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_seg_tile_bounds_by_segment(Segs s, long long tile,
                                                                                       long long* bounds) {
  const int lane = threadIdx.x & 31;
  constexpr long long kBlockSegments = static_cast<long long>(kScanBlock) * kBoundsSegments;
  // A loop of whole warps (kScanBlock is a multiple of 32), so that every lane takes the ballots.
  for (long long base = blockIdx.x * kBlockSegments; base < s.count; base += gridDim.x * kBlockSegments) {
    const long long first = base + static_cast<long long>(threadIdx.x) * kBoundsSegments;
    long long start[kBoundsSegments + 1];  // tiles start from start[u] on in segment first + u
#pragma unroll
    for (int u = 0; u <= kBoundsSegments; ++u) start[u] = first + u <= s.count ? seg_off(s, first + u) : s.total;
#pragma unroll
    for (int u = 0; u <= kBoundsSegments; ++u) start[u] = (start[u] + tile - 1) / tile;
#pragma unroll
    for (int u = 0; u < kBoundsSegments; ++u) {
      const long long j = first + u, lo = start[u], hi = start[u + 1];  // past the last segment, lo == hi
      const bool wide = hi - lo > 32;
      if (!wide)
        for (long long t = lo; t < hi; ++t) bounds[t] = j + 1;
      for (unsigned w = __ballot_sync(~0u, wide); w; w &= w - 1) {
        const int src = __ffs(static_cast<int>(w)) - 1;
        const long long wlo = __shfl_sync(~0u, lo, src), whi = __shfl_sync(~0u, hi, src);
        const long long wj = __shfl_sync(~0u, j, src);
        for (long long t = wlo + lane; t < whi; t += 32) bounds[t] = wj + 1;
      }
    }
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) bounds[(s.total + tile - 1) / tile] = s.count + 1;
}

// count_true: every block sums its flags (grid stride, 16 flags a load where the array is
// aligned), then adds its count to *count, which the host has zeroed; a grid of one block
// stores its count instead (the host zeroes nothing). Integer atomics, so the result is exact
// and deterministic.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_count_true(const unsigned char* flags, long long n, unsigned long long* count) {
  using Reduce = cub::BlockReduce<unsigned long long, kScanBlock>;
  __shared__ typename Reduce::TempStorage storage;
  // __vcmpne4 sets all 8 bits of every nonzero byte.
  auto count_word = [](uint4 w) {
    return (__popc(__vcmpne4(w.x, 0)) + __popc(__vcmpne4(w.y, 0)) + __popc(__vcmpne4(w.z, 0)) +
            __popc(__vcmpne4(w.w, 0))) / 8;
  };
  unsigned long long mine = 0;
  long long scalar_from = 0;
  if (aligned16(flags)) {
    const uint4* words = reinterpret_cast<const uint4*>(flags);
    const long long nwords = n / 16, stride = static_cast<long long>(gridDim.x) * blockDim.x;
    long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Four loads in flight a thread (one at a time read the flags at 2.5 TB/s on an H100).
    for (; i + 3 * stride < nwords; i += 4 * stride) {
      const uint4 a = words[i], b = words[i + stride], c = words[i + 2 * stride], d = words[i + 3 * stride];
      mine += count_word(a) + count_word(b) + count_word(c) + count_word(d);
    }
    for (; i < nwords; i += stride) mine += count_word(words[i]);
    scalar_from = nwords * 16;
  }
  NDP_GRID_STRIDE(i, n - scalar_from) mine += flags[scalar_from + i] != 0;
  unsigned long long block = Reduce(storage).Sum(mine);
  if (threadIdx.x == 0) {
    if (gridDim.x == 1) *count = block;
    else if (block != 0) atomicAdd(count, block);
  }
}
