// What the partition engine's kernels (codegen/partition_engine.cu, compiled by clang for the
// device) and the host that launches them (exec/cuda/partition_levels.cpp) must agree on: the
// blocks' shapes, the tile, the records of the levels' lists and the counters (Note [Partition
// levels on the GPU] in codegen/partition_levels_ptx.h). Plain constants and structs, so that
// the device compile includes it too.
#pragma once

#include <cstdint>

namespace ndp::flatten::partition_engine {

inline constexpr int kMaxParts = 4;    // PartitionLevels::kMostParts
inline constexpr int kMaxScalars = 4;  // PartitionLevels::kMostPredicateScalars
inline constexpr int kThreads = 256;   // the seed's, the counts' and the plan's blocks
inline constexpr int kTileItems = 16;  // the counts' elements a thread
inline constexpr int64_t kPerTile = int64_t{kTileItems} * kThreads;  // a grid level's tile (4096)
inline constexpr int kScatterThreads = 512;  // the moves' blocks
inline constexpr int kBlockThreads = 128;    // the block kernel's: its warps take a level's segments
inline constexpr int kMostBlockTile = 4096;  // the most elements a block takes (its buffers' capacity)

/// A segment of a grid level: its place and length, and its tiles in the level's tile list.
struct Large {
  int64_t at, len, tile0, tiles;
};
/// A tile of a grid level: part of one segment, from `start` within it.
struct Tile {
  int64_t seg, start;
};
/// A segment left for the blocks: its place and length; from_arg where its keys are still in
/// the loop's argument (an instance of the first level), not in the result.
struct Small {
  int64_t at, len, from_arg;
};

/// The counters the levels keep on the device: a level's lists' lengths in one of two slots (the
/// level's parity: a level reads its own slot and fills the other for the next), the small list's
/// length and the failure flag. The host reads them only every few levels.
enum Counter { kLarge, kTiles, kSlot = 2, kSmall = 2 * kSlot, kFailed, kCounters };

}  // namespace ndp::flatten::partition_engine
