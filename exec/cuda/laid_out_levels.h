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
// Note [Children one after another]
// A level's instances are independent once each has its place, so their order in the next
// level's argument is the executor's to choose. Quicksort's step ends in the literal
// `[lesser, greater]`, whose elements interleave the two: lesser_0, greater_0, lesser_1, ...
// (a gather of every element, 11% of a 2^22 sort's GPU time). Where the step's argument is such
// a literal that nothing else reads (children_literal), the level's argument is instead every
// instance's first child, then every second child (concat: a copy per part), and the places
// follow: child c of recursing instance j is the next level's instance c·rec + j.
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

/// The step's last statements `seq = seqlit(x_1 .. x_k); lens = lengths(seq); a = elements(seq)`
/// (a the next argument, lens the plan's child counts), where nothing else reads seq: the
/// seqlit, whose children may then go one after another (Note [Children one after another]);
/// null otherwise, or where NDP_CHILD_MAJOR=0 keeps the literal's order (for measuring).
const flatten::Stmt* children_literal(const flatten::RecursionLoop& loop);

}  // namespace ndp::exec::cuda
