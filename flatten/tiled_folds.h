// Map kernels whose instances form a grid of rows and columns, and whose fold reads one row of
// each: a block's rows shared through tiles (Note [Tiled folds]).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

// Note [Tiled folds]
// A matrix product written in NESL, {{sum({x * y : x in r; y in c}) : c in bt} : r in a}, is a
// map kernel (Note [Map kernels]) of n·m instances, instance i·m + j folding row r_i of `a`
// against row c_j of `bt`. Run an instance a thread (or a unit), every instance reads both rows
// whole: n·m·2·len elements, 64 GB for 2048² floats, from L2 at best. Yet the instances of a
// 16 × 16 square of the grid read only 16 rows of each: the square's block can read them once
// into shared memory, a chunk of the fold's indices at a time, and every thread then folds its
// pair of rows from there, 16 times fewer reads from memory.
//
// The body's shape makes it possible (tiled_fold below): it has one fold, whose region reads
// sequences only at the fold's index, through two row-id inputs, and otherwise computes. Whether
// the instances form a grid is known only at run time: the executor checks that the first
// row-id input is constant over runs of m instances and the second repeats with period m (one
// pass, runtime/gpu grid_columns), and then launches the tiled kernel (codegen/tiled_folds.h),
// else the plain one. In the tiled kernel, a block whose instances' rows are each at least as
// long as their fold (no read out of bounds) folds from the tiles; any other block folds as the
// plain kernel does, with the plain kernel's errors. The answers are the same either way: each
// instance folds its own indices in order.

/// The shape of a map kernel's tiled fold: the Fold node, the inputs holding each instance's
/// row ids on the grid's rows (`rows`, constant over a run of m instances) and columns
/// (`columns`, repeating every m), and each flat component the fold's region reads through
/// either, one tile each.
struct TiledFold {
  struct Tile {
    uint32_t seq;        // KernelBody::seqs
    uint32_t component;  // the flat component of its element
    bool columns;        // read through the columns' row ids
  };
  uint32_t fold = 0;
  uint32_t rows = 0, columns = 0;  // input numbers
  std::vector<Tile> tiles;
};

/// At most this many tiles (rows' components) a tiled fold reads.
inline constexpr size_t kMostTiles = 4;

/// The tiled fold of map kernel body `k`, or nothing where it has not that shape: not a loop;
/// exactly one fold; the region of which holds only computations (primitives, constants, its
/// accumulator) and unguarded reads of sequences at the fold's index through row ids that are
/// inputs (int), of two inputs in all, at most kMostTiles components.
std::optional<TiledFold> tiled_fold(const KernelBody& k);

/// The tile of SeqElt node `n` of a tiled fold's region (an index into tiles).
size_t tile_of(const KernelBody& k, const TiledFold& t, const KernelNode& n);

}  // namespace ndp::flatten
