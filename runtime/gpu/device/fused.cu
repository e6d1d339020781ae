// Consumer kernels (Note [Consumer kernels] in flatten/flat_ir.h): the scan, reduction and pack
// passes of scan.cu and pack.cu reading their input elements, or their flags, from
// `ndp_elements`, a device function this file only declares. Compiled as relocatable device
// code (nvcc -rdc), once per element type (NDP_FUSED_NAME: i64 f64 i32 f32 bool char, and
// NDP_FUSED_IS_BOOL for the bool image with the pack kernels); at run time the
// cuda backend links the generated PTX that defines ndp_elements with the image of its output
// type (runtime/gpu/fused.cpp), so the map's values go from registers into the pass and never
// to memory. Kernels, named <kernel>_<op>_<type> as in scan.cu:
//   ndp_fused_reduce_flat  one segment: a partial per block (scan.cu's finish folds them)
//   ndp_fused_reduce_seg   the tile pass of a segmented reduction (fix-up: scan.cu's)
//   ndp_fused_scan_flat    a single-pass scan of one segment
//   ndp_fused_scan_seg     the same over several segments
// and, in the bool image, the selection of pack.cu with computed flags:
//   ndp_fused_pack_counts  per-tile counts of true flags
//   ndp_fused_pack_<bytes> compaction of the values whose flag is true
#include "tile/compact.cuh"
#include "tile/reduce_flat.cuh"
#include "tile/reduce_segments.cuh"
#include "tile/scan.cuh"

using namespace ndp::runtime::gpu::device;

/// The generated element function, a thread's batch at a time: the fused map's values at
/// first + j·stride for j < count (count at most the items that fit: 8 of 8 bytes, 16 of 4
/// bytes or one byte), from the input arrays ins[0..], as an array of the element type in the
/// 64 bytes. One signature for every element type, so that the generated PTX
/// (codegen/kernel_ptx.cpp, compile_element_ptx) and this file declare one .func alike.
struct Items {
  unsigned long long w[8];
};
extern "C" __device__ Items ndp_elements(long long first, long long stride, int count, const void* const* ins);

namespace {

/// Up to eight input arrays, passed by value: __grid_constant__ keeps them in the parameter
/// space, whose address ndp_elements reads them through (no local copy).
struct FusedInputs {
  const void* p[8];
};

template <class T>
struct ElementIn {
  static constexpr bool kBatch = true;
  const void* const* ins;
  template <int N>
  __device__ __forceinline__ void items(long long first, long long stride, int count, T (&out)[N]) const {
    static_assert(N * sizeof(T) <= sizeof(Items), "a batch holds 64 bytes");
    const Items it = ndp_elements(first, stride, count, ins);
    memcpy(out, &it, sizeof out);
  }
};

}  // namespace

#define NDP_FUSED_FAMILY(O, oname, T, tname)                                                                   \
  extern "C" __global__ void __launch_bounds__(kPassBlock)                                                      \
      ndp_fused_reduce_flat_##oname##_##tname(const __grid_constant__ FusedInputs in, long long n, T* partials) { \
    reduce_flat_batches<Fn<O, T>>(ElementIn<T>{in.p}, n, partials);                                            \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)                                      \
      ndp_fused_reduce_seg_##oname##_##tname(const __grid_constant__ FusedInputs in, Segs s,                   \
                                             const long long* bounds, SegPair<T>* agg, long long* fix, T* out) { \
    reduce_seg_tiles<Fn<O, T>>(ElementIn<T>{in.p}, s, bounds, agg, fix, out);                                  \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(kPassBlock)                                                      \
      ndp_fused_scan_flat_##oname##_##tname(const __grid_constant__ FusedInputs in, long long n, int inclusive, \
                                            unsigned long long* scratch, T* out) {                              \
    scan_pass<Fn<O, T>, false>(ElementIn<T>{in.p}, Segs{1, n, nullptr, n}, nullptr, inclusive != 0, scratch,    \
                               out);                                                                            \
  }                                                                                                             \
  extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)                                      \
      ndp_fused_scan_seg_##oname##_##tname(const __grid_constant__ FusedInputs in, Segs s,                     \
                                           const long long* bounds, int inclusive, unsigned long long* scratch, \
                                           T* out) {                                                            \
    scan_pass<Fn<O, T>, true>(ElementIn<T>{in.p}, s, bounds, inclusive != 0, scratch, out);                    \
  }

#define NDP_FUSED_NUMBER_OPS(T, tname)                                                       \
  NDP_FUSED_FAMILY(Op::plus, plus, T, tname) NDP_FUSED_FAMILY(Op::mult, mult, T, tname)     \
  NDP_FUSED_FAMILY(Op::max, max, T, tname) NDP_FUSED_FAMILY(Op::min, min, T, tname)
#define NDP_FUSED_LOGICAL_OPS(T, tname)                                                      \
  NDP_FUSED_FAMILY(Op::and_, and, T, tname) NDP_FUSED_FAMILY(Op::or_, or, T, tname)         \
  NDP_FUSED_FAMILY(Op::xor_, xor, T, tname)

// The operators scan.cu defines for each type: + * max min on numbers, max min on char,
// and or xor on ints and bool.
#define NDP_FUSED_i64 NDP_FUSED_NUMBER_OPS(long long, i64) NDP_FUSED_LOGICAL_OPS(long long, i64)
#define NDP_FUSED_i32 NDP_FUSED_NUMBER_OPS(int, i32) NDP_FUSED_LOGICAL_OPS(int, i32)
#define NDP_FUSED_f64 NDP_FUSED_NUMBER_OPS(double, f64)
#define NDP_FUSED_f32 NDP_FUSED_NUMBER_OPS(float, f32)
#define NDP_FUSED_char NDP_FUSED_FAMILY(Op::max, max, unsigned char, char) NDP_FUSED_FAMILY(Op::min, min, unsigned char, char)
#define NDP_FUSED_bool NDP_FUSED_LOGICAL_OPS(bool, bool)
#define NDP_FUSED_EXPAND(name) NDP_FUSED_##name
#define NDP_FUSED_FOR(name) NDP_FUSED_EXPAND(name)

NDP_FUSED_FOR(NDP_FUSED_NAME)

#if NDP_FUSED_IS_BOOL
extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_fused_pack_counts(const __grid_constant__ FusedInputs in, long long n, long long* counts) {
  count_tiles(ElementIn<bool>{in.p}, n, counts);
}

#define NDP_FUSED_PACK(W, bytes)                                                                     \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                           \
      ndp_fused_pack_##bytes(const W* v, const __grid_constant__ FusedInputs in, long long n,       \
                             const long long* starts, W* out) {                                      \
    compact_tiles<W, false>(v, ElementIn<bool>{in.p}, n, starts, out);                              \
  }
NDP_FOR_SIZES(NDP_FUSED_PACK)
#endif
