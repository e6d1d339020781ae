// Selection: PACK's lengths (a segmented + reduction of the flags read as 0/1, scan_pass.cuh) and
// order-preserving compaction (true_positions, pack) in three steps: count the trues of every
// tile, exclusive-scan the counts (the host calls the i64 + scan), compact every tile.
#include "select.cuh"

using namespace ndp_gpu;

namespace {

using CountFn = Fn<Op::plus, long long>;

struct FlagAsCount {
  __device__ long long operator()(unsigned char f) const { return f != 0; }
};

}  // namespace

// pack_lengths: the pass of a segmented + reduction over the flags read as 0/1 (its fix-up is
// ndp_reduce_seg_fixup_plus_i64 of scan.cu).
extern "C" __global__ void __launch_bounds__(kPassBlock, kPassMinBlocks)
    ndp_packlen_tiles(const unsigned char* flags, Segs s, const long long* bounds, SegPair<long long>* agg,
                      long long* fix, long long* out) {
  reduce_seg_tiles<CountFn>(ConvertedIn<unsigned char, FlagAsCount>{flags, {}}, s, bounds, agg, fix, out);
}

extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_pack_counts(const unsigned char* flags, long long n, long long* counts) {
  count_tiles(FlagsIn{flags}, n, counts);
}

extern "C" __global__ void __launch_bounds__(kScanBlock)
    ndp_true_positions(const unsigned char* flags, long long n, const long long* starts, long long* out) {
  compact_tiles<long long, true>(nullptr, FlagsIn{flags}, n, starts, out);
}

// PACK's data moves raw words by element size.
#define NDP_PACK(W, bytes)                                                                                  \
  extern "C" __global__ void __launch_bounds__(kScanBlock)                                                  \
      ndp_pack_##bytes(const W* v, const unsigned char* flags, long long n, const long long* starts, W* out) { \
    compact_tiles<W, false>(v, FlagsIn{flags}, n, starts, out);                                                      \
  }
NDP_FOR_SIZES(NDP_PACK)
