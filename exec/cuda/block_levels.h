// Note [Levels in a block] (runtime/gpu/block_levels.h) on the cuda backend: the levels of a
// laid-out recursion loop that a kernel runs with a block per window of the argument.
#pragma once

#include <optional>

#include "exec/cuda/block_levels_program.h"
#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

class BlockLevels {
 public:
  /// The engine's program of loop statement `s` of `fn`; ok() is false where the loop is not
  /// one the blocks run (a statement or type they do not, no layout, too little shared memory).
  BlockLevels(Gpu& g, const flatten::Function& fn, const flatten::Stmt& s);
  bool ok() const { return prog_.has_value(); }

  /// The most elements a level may hold for its small instances to leave it for the blocks:
  /// the tuning's block_levels_elements (Note [Tuning]), NDP_BLOCK_LEVELS_ELEMENTS where set;
  /// -1 for never (a tuning of 0, or NDP_BLOCK_LEVELS=0).
  static int64_t most_elements(Gpu& g);

  /// Which instances of a level's argument a block can take (those of at most a window).
  struct Fit {
    int64_t instances = 0, small = 0;            // the level's, and those that fit
    int64_t elements = 0, small_elements = 0;    // their elements
    DBuf small_flags, large_flags;               // a bool per instance: fits, does not
  };
  Fit fit(const DVec& arg);

  /// Runs the levels left of the instances of `arg`, every one of which fits, instance i's
  /// result placed at out + places[i] (elements of the result's type); false where a block
  /// could not run them (an error, a vector past its capacity, lengths that do not lay out).
  bool run(const DVec& arg, CUdeviceptr places, CUdeviceptr out);

 private:
  Gpu& g_;
  std::optional<BlockLevelsProgram> prog_;
  int64_t cap_ = 0;
};

}  // namespace ndp::exec::cuda
