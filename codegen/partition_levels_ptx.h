// PTX for the levels of a partition recursion (Note [Partition levels] in flatten/flat_ir.h).
//
// Note [Partition levels on the GPU]
// The kernels are written once, in CUDA C++ (codegen/partition_engine.cu, LLVM bitcode built by
// clang), over three functions and two constants that this code generator defines from a plan:
// whether an instance of a length recurses, its scalars from its elements, and an element's part
// (-1 where not exactly one predicate holds); the number of parts and which are children. LLVM
// then inlines them into the kernels and optimises. The blocks' shapes, the tile, the records of
// the levels' lists and the counters are flatten/partition_engine_abi.h, which the kernels and
// the host both include. The executor (exec/cuda/partition_levels.h)
// runs, from the loop's first level:
//  - grid levels while some instance holds more than the switch point (the tuning's; 2048
//    elements): each such instance is cut into tiles of 4096 elements, and a kernel counts
//    every tile's elements in each part, one scans the counts of each instance's tiles and lists
//    the next level's instances, and one moves every element to its place, stably within its
//    part, straight from registers: each warp ranks its chunks of 32 elements by ballots, and the
//    chunks' counts, scanned over the tile a part at a time, place them (through shared memory,
//    the tile rewritten in its parts' order, a full level of 2^24 ints had taken 133 against 114
//    µs under Nsight Compute's clocks). Parts that recurse over more than the switch point go to
//    the next level's buffer, all others to the result, at their places. The lists' sizes stay
//    on the device: each kernel runs a fixed grid over the items its level has, so the host
//    launches six levels at a time and reads the sizes back between (a wait a level had cost
//    quicksort of 2^24 ints about 0.6 ms);
//  - then one kernel for every instance of at most the switch point, a block of four warps each,
//    all its levels left in shared memory, in two buffers: the instance is read into one, and
//    each level's instances of more than 32 elements are listed; the warps take them one at a
//    time and split each from one buffer into the other, counting the parts by ballots over
//    chunks of 32 elements, then moving every element to its rank within its part. A part that
//    is final goes straight to the result; a recursing part of more than 32 elements joins the
//    next level's list, and the shorter ones wait until a warp's lanes are full, then are
//    finished together, all their levels, with ballots masked to each instance (lane l holds
//    element l of the window). Splitting a level over whole blocks had passed every element of
//    the block at every level, the finished ones too, with block barriers: quicksort's block
//    kernel took 3.78 ms, by warps 2.56 (2^24 ints, H200, Nsight Compute's clocks;
//    bench/results/session46).
// Each element moves once a level, where the level-by-level loop moves it through a partition,
// the children's layout and the placing of the finished instances.
#pragma once

#include <string>

#include "flatten/flat_ir.h"

namespace ndp::codegen {

/// Whether this build holds the engine's bitcode (it needs clang++-19 at build time).
bool has_partition_engine();

/// PTX text (sm_90) of the engine's kernels (ndp_pl_seed, ndp_pl_count, ndp_pl_plan,
/// ndp_pl_scatter, ndp_pl_block: codegen/partition_engine.cu) for `plan`, whose argument's
/// elements have type `elem` (8 bytes: an int or a float). Throws std::runtime_error where the
/// plan is not one the engine runs (more parts or scalars than it holds), the build has no
/// engine, or LLVM fails.
std::string compile_partition_levels_ptx(const flatten::PartitionLevels& plan, const lang::Type* elem);

/// The engine's limits (flatten::PartitionLevels plans no more).
inline constexpr size_t kPartitionMaxParts = flatten::PartitionLevels::kMostParts;
inline constexpr size_t kPartitionMaxScalars = flatten::PartitionLevels::kMostPredicateScalars;

}  // namespace ndp::codegen
