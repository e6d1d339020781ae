// Descriptors: LENGTHS, per-element segment ids and ranks, and the check and read-back of
// offsets_from_lengths (whose scan is the i64 + scan of scan.cu).
#include "tile/segments.cuh"

using namespace ndp::runtime::gpu::device;

extern "C" __global__ void ndp_lengths_of(Segs s, long long* out) {
  NDP_GRID_STRIDE(k, s.count) out[k] = s.length(k);
}

// One tile per block (kScanBlock threads): Note [Segments of a tile].
extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_segment_ids(Segs s, long long* out) {
  for_each_element_segment(s, [&](long long p, long long k) { out[p] = k; });
}

// Each element's place in its segment (0, 1, ... in every segment): a lifted index's values,
// stored in one pass where they were the index of two filled vectors (three launches).
extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_segment_ranks(Segs s, long long* out) {
  for_each_element_segment(s, [&](long long p, long long k) { out[p] = p - s.begin(k); });
}

// offsets_from_lengths: rec[0] (kNoFailure beforehand) becomes the lowest position of a
// negative length; then one thread records rec[1] = that length and rec[2] = offsets[n], and
// writes offsets[0] = 0 (which the scan, writing from offsets[1], leaves alone).
extern "C" __global__ void ndp_offsets_check(const long long* v, long long n, unsigned long long* rec) {
  NDP_GRID_STRIDE(i, n) if (v[i] < 0) report_failure(rec, i);
}

extern "C" __global__ void ndp_offsets_record(const long long* lengths, long long* offsets, long long n,
                                              unsigned long long* rec) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  offsets[0] = 0;
  unsigned long long first = rec[0];
  rec[1] = first == kNoFailure ? 0ull : static_cast<unsigned long long>(lengths[first]);
  rec[2] = static_cast<unsigned long long>(n > 0 ? offsets[n] : 0);
}
