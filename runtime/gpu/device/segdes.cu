// Descriptors: LENGTHS, per-element segment ids, and the check and read-back of
// offsets_from_lengths (whose scan is the i64 + scan of scan.cu).
#include "scan.cuh"

using namespace ndp_gpu;

extern "C" __global__ void ndp_lengths_of(Segs s, long long* out) {
  NDP_GRID_STRIDE(k, s.count) out[k] = s.length(k);
}

// One tile per block (kScanBlock threads): the first element of every non-empty segment that
// starts inside the tile is marked with its segment, then a block-wide max scan carries the
// marks forward from the segment holding the tile's first element. O(elements + boundaries).
struct MaxOp {
  __device__ long long operator()(long long a, long long b) const { return b > a ? b : a; }
};

extern "C" __global__ void __launch_bounds__(kScanBlock) ndp_segment_ids(Segs s, long long* out) {
  using Scan = cub::BlockScan<long long, kScanBlock>;
  __shared__ long long marks[kPaddedTile];
  __shared__ typename Scan::TempStorage storage;
  long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    TileSpan ts(s, tile);
    for (int i = threadIdx.x; i < kTile; i += blockDim.x) marks[padded(i)] = -1;
    __syncthreads();
    for (long long j = ts.a + threadIdx.x; j < ts.b; j += blockDim.x) {
      long long o = seg_off(s, j) - ts.t0;  // j < count when o < n, since off(count) = total
      if (o < ts.n && seg_off(s, j + 1) > seg_off(s, j)) marks[padded(static_cast<int>(o))] = j;
    }
    __syncthreads();
    int base = threadIdx.x * kScanItems;
    long long m[kScanItems], mine = -1;
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) {
      m[i] = marks[padded(base + i)];
      mine = m[i] > mine ? m[i] : mine;
    }
    long long before;
    Scan(storage).ExclusiveScan(mine, before, ts.a - 1, MaxOp());
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kScanItems; ++i) {
      before = m[i] > before ? m[i] : before;
      marks[padded(base + i)] = before;
    }
    __syncthreads();
    for (int i = threadIdx.x; i < ts.n; i += blockDim.x) out[ts.t0 + i] = marks[padded(i)];
    __syncthreads();
  }
}

// offsets_from_lengths: rec[0] (kNoFailure beforehand) becomes the lowest position of a
// negative length; then one thread records rec[1] = that length and rec[2] = offsets[n].
extern "C" __global__ void ndp_offsets_check(const long long* v, long long n, unsigned long long* rec) {
  NDP_GRID_STRIDE(i, n) if (v[i] < 0) report_failure(rec, i);
}

extern "C" __global__ void ndp_offsets_record(const long long* lengths, const long long* offsets, long long n,
                                              unsigned long long* rec) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  unsigned long long first = rec[0];
  rec[1] = first == kNoFailure ? 0ull : static_cast<unsigned long long>(lengths[first]);
  rec[2] = static_cast<unsigned long long>(offsets[n]);
}
