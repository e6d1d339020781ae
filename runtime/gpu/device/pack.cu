// Selection: PACK's lengths (a segmented + reduction of the flags read as 0/1,
// tile/reduce_segments.cuh) and order-preserving compaction (true_positions, pack) in one pass
// (tile/select.cuh's select_pass), kernels ndp_select_<element bytes or "positions">_<c32|c64>
// by the look-back's count type.
#include "tile/reduce_segments.cuh"
#include "tile/select.cuh"

using namespace ndp::runtime::gpu::device;

namespace {

using CountFn = Fn<Op::plus, long long>;

struct FlagAsCount {
  __device__ long long operator()(unsigned char f) const { return f != 0; }
};

}  // namespace

// pack_lengths: the pass of a segmented + reduction over the flags read as 0/1 (its fix-up is
// scan.cu's, for plus_i64).
extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)
    ndp_packlen_tiles(const unsigned char* flags, Segs s, const long long* bounds, SegPair<long long>* agg,
                      long long* fix, long long* out) {
  reduce_seg_tiles<CountFn>(ConvertedIn<unsigned char, FlagAsCount>{flags, {}}, s, bounds, agg, fix, out);
}

#define NDP_SELECT(W, bytes)                                                                                \
  extern "C" __global__ void __launch_bounds__(kPassBlock, kLookBackMinBlocks) ndp_select_##bytes##_c32(                          \
      const W* v, const unsigned char* flags, long long n, unsigned long long* scratch, W* out) {              \
    select_pass<W, false, int>(v, flags, n, scratch, out);                                                    \
  }                                                                                                           \
  extern "C" __global__ void __launch_bounds__(kPassBlock, kLookBackMinBlocks) ndp_select_##bytes##_c64(                          \
      const W* v, const unsigned char* flags, long long n, unsigned long long* scratch, W* out) {              \
    select_pass<W, false, long long>(v, flags, n, scratch, out);                                              \
  }
NDP_FOR_SIZES(NDP_SELECT)

extern "C" __global__ void __launch_bounds__(kPassBlock, kLookBackMinBlocks)
    ndp_select_positions_c32(const unsigned char* flags, long long n, unsigned long long* scratch, long long* out) {
  select_pass<long long, true, int>(nullptr, flags, n, scratch, out);
}
extern "C" __global__ void __launch_bounds__(kPassBlock, kLookBackMinBlocks)
    ndp_select_positions_c64(const unsigned char* flags, long long n, unsigned long long* scratch, long long* out) {
  select_pass<long long, true, long long>(nullptr, flags, n, scratch, out);
}
