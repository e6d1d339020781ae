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

// Note [Counts from the kept positions] (pack.cpp): thread k of count + 1 finds how many kept
// positions (ascending, *kept of them) lie before segment k's first element, its offset, and
// (below count) how many lie in the segment, its count.
extern "C" __global__ void ndp_counts_from_positions(const long long* positions, const unsigned long long* kept, Segs s,
                                                     long long* counts, long long* offsets) {
  const long long n = static_cast<long long>(*kept);
  auto before = [&](long long p) {  // the kept positions below p
    long long lo = 0, hi = n;
    while (lo < hi) {
      const long long mid = lo + (hi - lo) / 2;
      if (positions[mid] < p) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  NDP_GRID_STRIDE(k, s.count + 1) {
    const long long first = k < s.count ? before(s.begin(k)) : n;
    offsets[k] = first;
    if (k < s.count) counts[k] = before(s.end(k)) - first;
  }
}
