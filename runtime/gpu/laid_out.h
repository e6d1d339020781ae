// The parts of a laid-out recursion's instance as the cuda backend passes them to
// ndp_laid_out_pieces (runtime/gpu/device/laid_out.cu, exec/cuda/laid_out_levels.cpp): one
// layout, compiled by nvcc and by the host compiler.
#pragma once

#include <cstdint>

namespace ndp::runtime::gpu {

/// A recursing instance's pieces in order (Note [Results laid out before the calls] in
/// flatten/flat_ir.h): a child (its index among the instance's children) or rows of the level
/// (their offsets; each row's place written to `at`). Device pointers; passed by value. Child c
/// of instance j is the next level's instance j·k + c, or c·rec + j where child_major (Note
/// [Children one after another] in flatten/passes/lay_out_results.h).
struct LaidOutPieces {
  static constexpr int kMost = 4;
  int count = 0;
  bool child_major = false;
  int child[kMost] = {-1, -1, -1, -1};  // -1 for rows
  const int64_t* off[kMost] = {};       // rows: their offsets
  int64_t* at[kMost] = {};              // rows: each row's place
};

}  // namespace ndp::runtime::gpu
