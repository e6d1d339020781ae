// Segmented scans and reductions (Note [Tiled segmented scan] in scan.cuh), and count_true.
// Kernels per supported (operator, type), named <kernel>_<op>_<type>:
//   ndp_segscan_aggs      phase 1: each tile's segmented fold
//   ndp_segscan_carries   phase 2: one block of kCarryBlock threads, the value each tile starts from
//   ndp_segscan           phase 3: the scan (carry may be null: a single tile)
//   ndp_segreduce         phase 3: per-segment results of the segments each tile owns
// Tile kernels run kScanBlock threads per block and loop over tiles by grid stride.
#include "scan.cuh"

using namespace ndp_gpu;

#define NDP_SCAN_FAMILY(O, oname, T, tname)                                                                      \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                        \
      ndp_segscan_aggs_##oname##_##tname(const T* in, Segs s, SegPair<T>* agg) {                                  \
    tile_aggregates<Fn<O, T>>(in, s, agg, Identity<T>());                                                         \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kCarryBlock)                                                       \
      ndp_segscan_carries_##oname##_##tname(const SegPair<T>* agg, long long ntiles, T* carry) {                  \
    tile_carries<Fn<O, T>>(agg, ntiles, carry);                                                                   \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                        \
      ndp_segscan_##oname##_##tname(const T* in, Segs s, const T* carry, int inclusive, T* out) {                 \
    scan_tiles<Fn<O, T>>(in, s, carry, inclusive != 0, out);                                                      \
  }                                                                                                               \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                        \
      ndp_segreduce_##oname##_##tname(const T* in, Segs s, const T* carry, T* out) {                              \
    reduce_tiles<Fn<O, T>>(in, s, carry, out, Identity<T>());                                                     \
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

// count_true: every block sums its flags (grid stride), then adds its count to *count, which
// the host has zeroed. Integer atomics, so the result is exact and deterministic.
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_count_true(const unsigned char* flags, long long n, unsigned long long* count) {
  using Reduce = cub::BlockReduce<unsigned long long, kScanBlock>;
  __shared__ typename Reduce::TempStorage storage;
  unsigned long long mine = 0;
  NDP_GRID_STRIDE(i, n) mine += flags[i] != 0;
  unsigned long long block = Reduce(storage).Sum(mine);
  if (threadIdx.x == 0 && block != 0) atomicAdd(count, block);
}
