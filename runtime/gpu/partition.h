// Note [Partitions]
// A filter group (Note [Filter groups on the GPU] in exec/cuda/filter_groups.h) keeps the
// elements of several predicates, and counts them per segment: quicksort's lesser, equal and
// greater, each packed and each counted. One pack and one segmented count per predicate read
// the flags once each and the values once a pack, and cost a dozen launches and a scan of the
// counts before anything is placed. A partition does all of them at once, in tiles of
// kPartitionTile elements (device/partition.cu):
//   1. ndp_partition_count: each tile's true flags of every predicate, as 16-bit fields of one
//      word (a tile holds at most 2^12 of each);
//   2. ndp_partition_scan (one block): each predicate's true flags before every tile, and the
//      totals, which the host reads back (one wait) to allocate the packs;
//   3. ndp_partition_scatter: each column (values and the predicate that keeps them) to its
//      pack, a round of kPartitionBlock elements at a time, so that a warp's kept elements are
//      written next to each other. It also leaves, for every chunk of 32 elements, the true
//      flags before it in its tile (the same 16-bit fields) and its flags as 32-bit masks;
//   4. ndp_partition_segments: for every segment start p, the true flags before p are the tile's
//      base, plus the chunk's, plus the masks' bits below p. These are the offsets of each
//      predicate's pack per segment (what the count's `nest` needs), and their differences the
//      counts: no segmented reduction and no scan of the counts.
// Four launches and one wait; the flags are read twice, every column once.
//
// This header is the kernels' argument layout, compiled by nvcc and by the host compiler.
#pragma once

#include <cstdint>

namespace ndp::runtime::gpu {

inline constexpr int kPartitionBlock = 256;
inline constexpr int kPartitionTile = 4096;  // < 2^16: a tile's counts fit 16-bit fields
inline constexpr int kPartitionChunk = 32;   // a warp's round

/// The predicates of a partition: a byte per element each (0 false).
struct PartitionFlags {
  static constexpr int kMost = 4;
  int count = 0;
  const unsigned char* of[kMost] = {};
};

/// The columns a partition moves: column j's elements (bytes[j] each: 1, 4 or 8) whose
/// predicate[j] holds go to dst[j], in order.
struct PartitionColumns {
  static constexpr int kMost = 8;
  int count = 0;
  int predicate[kMost] = {};
  int bytes[kMost] = {};
  const void* src[kMost] = {};
  void* dst[kMost] = {};
};

/// Where a partition puts each predicate's offsets (count + 1) and counts per segment (null:
/// not wanted).
struct PartitionSegments {
  int64_t* offsets[PartitionFlags::kMost] = {};
  int64_t* counts[PartitionFlags::kMost] = {};
};

/// Words of the bases a partition of n elements by `predicates` predicates keeps between its
/// stages: predicates · (tiles + 1) bases, then the totals.
inline int64_t partition_bases_words(int64_t n, int predicates) {
  const int64_t tiles = (n + kPartitionTile - 1) / kPartitionTile;
  return predicates * (tiles + 1) + predicates;
}

}  // namespace ndp::runtime::gpu
