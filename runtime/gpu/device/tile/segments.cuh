// Tile level (what one block does): for_each_element_segment runs a body for every element with
// the segment holding it, a tile of elements per block.
//
// Note [Segments of a tile]
// Kernels that need every element's segment (dist, index, append, reverse, rotate, the
// positions of a nested take) searched the offsets per element (Segs::segment_of): about
// log2(count) dependent loads each, which made them several times slower than their memory
// traffic (a dist of 2^24 ints over a million segments: 0.21 ms against 0.05 ms of
// bandwidth). Here a block takes a tile of kTile elements, marks the first element of every
// non-empty segment that starts inside it in shared memory, and a block-wide max scan carries
// the marks forward from the segment holding the tile's first element (ndp_segment_ids'
// method): two searches per tile and O(elements + boundaries). Regular descriptors divide
// instead. Launch with detail::launch_per_element_segment (blocks of kScanBlock).
//
// The two searches are the block's (block_upper_bound_off): one thread's binary search made
// about log2(count) dependent loads, twice, before a block could start its tile. The block
// probes kScanBlock boundaries at once and keeps the stretch between the last one at or below
// the target and the first above it, so 2^24 boundaries take 3 rounds. In quicksort at 2^24
// (Nsight Compute, H100) the mean dist went from 56 to 49 us, nested_take2 from 95 to 88.
// (Computing a thread's kScanItems elements before storing any, so their loads overlap, was
// slower: dist 75 us.)
#pragma once

#include <cub/block/block_scan.cuh>

#include "fixed_tile.cuh"

namespace ndp::runtime::gpu::device {

struct MaxOp {
  __device__ long long operator()(long long a, long long b) const { return b > a ? b : a; }
};

using SegmentIdScan = cub::BlockScan<long long, kScanBlock>;

/// marks[padded(i)] = the segment holding element ts.t0 + i, for i < ts.n (every thread of a
/// kScanBlock block calls it; it ends with a barrier).
__device__ inline void tile_segment_ids(const Segs& s, const TileSpan& ts, long long* marks,
                                        SegmentIdScan::TempStorage& storage) {
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
  SegmentIdScan(storage).ExclusiveScan(mine, before, ts.a - 1, MaxOp());
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kScanItems; ++i) {
    before = m[i] > before ? m[i] : before;
    marks[padded(base + i)] = before;
  }
  __syncthreads();
}

/// body(p, k) for every element p < s.total, k the segment holding it (Note [Segments of a
/// tile]); elements in order within a tile, so a body's accesses at p are coalesced.
template <class Body>
__device__ void for_each_element_segment(const Segs& s, Body body) {
  if (!s.offsets) {
    NDP_GRID_STRIDE(p, s.total) body(p, s.segment_of(p));
    return;
  }
  __shared__ long long marks[kPaddedTile];
  __shared__ SegmentIdScan::TempStorage storage;
  const long long ntiles = (s.total + kTile - 1) / kTile;
  for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
    const TileSpan ts = block_tile_span(s, tile);
    tile_segment_ids(s, ts, marks, storage);
    for (int i = threadIdx.x; i < ts.n; i += blockDim.x) body(ts.t0 + i, marks[padded(i)]);
    __syncthreads();  // the next tile's marks wait for this tile's reads
  }
}

}  // namespace ndp::runtime::gpu::device
