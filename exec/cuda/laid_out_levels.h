// The device passes of a laid-out recursion on the cuda backend (Note [Results laid out on the
// GPU]); the executor's lay_out_levels (exec/cuda/executor.cpp) drives them level by level.
//
// Note [Results laid out on the GPU]
// Note [Results laid out before the calls] (flatten/flat_ir.h) on the GPU: the cpu backend's
// walk (FlatWalk::lay_out_from) reads every instance's length and place back to the host each
// level, which at quicksort's middle levels (10^6 instances) would cost more than the append
// chain and the merge it saves (8.1 and 6.5 ms of a 2^24 sort's 55 on an H200). Here the places
// stay on the device: each level packs the places of its finished and recursing instances by
// the finish's flags, scatters the base results and the pieces to their places, and computes
// the children's places with one pass per recursing instance. The lengths' checks set a word
// on the device, read once when the loop ends; where it is set the loop runs again from its
// first level as Note [Recursion as loops] says. Once a level holds few elements, its small
// instances finish in blocks (Note [Levels in a block]) at their places, the others go on.
//
// Note [Children one after another] (flatten/passes/lay_out_results.h) on the GPU: the
// concatenation is a copy per child (a 2^22 quicksort's interleave had been 11% of its GPU
// time).
#pragma once

#include <array>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// !flags, a bool vector.
DVec flags_not(Gpu& g, const DVec& flags);
/// Row r of the sequences `rows` (of flat scalars) to out + places[r] (elements).
void place_rows(Gpu& g, const DVec& rows, CUdeviceptr places, CUdeviceptr out);
/// *failed = 1 where lens (an int vector) is not the lengths of the sequences `rows`.
void check_lengths(Gpu& g, const DVec& lens, const DVec& rows, CUdeviceptr failed);

/// A recursing instance's parts, in order: child `child`, or (child < 0) a row of `rows`.
struct LaidOutPart {
  int child = -1;
  const DVec* rows = nullptr;
};
/// The places of the `rec` recursing instances' parts from their own (rec_at, their argument's
/// lengths rec_len): the next level's instances' (returned; `counts` children each, k of them,
/// the next argument `next`, child c of instance j its instance j·k + c, or c·rec + j where
/// child_major) and each rows part's (rows_at, one buffer a rows part, in order). Sets *failed
/// where an instance's children are not k or its parts do not fill its place.
DBuf place_parts(Gpu& g, const std::vector<LaidOutPart>& parts, int64_t rec, CUdeviceptr rec_at, CUdeviceptr rec_len,
                 const DVec& counts, int64_t k, bool child_major, const DVec& next, std::vector<DBuf>& rows_at,
                 CUdeviceptr failed);

}  // namespace ndp::exec::cuda
