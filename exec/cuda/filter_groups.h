// Running a FilterGroup statement (Note [Filter groups] in flatten/flat_ir.h) on the cuda backend.
//
// Note [Filter groups on the GPU]
// Each member of a group on its own is a consumer kernel that computes its predicate from the
// inputs: quicksort's three filters on (e, pivot) read 16 bytes an element nine times a level
// (three segmented counts, three packs of two passes each). A group instead runs
//   1. one fused kernel that writes every distinct predicate as a byte per element;
//   2. each count: a segmented count of its predicate's bytes (pack_lengths);
//   3. each pack: the one-pass selection by its bytes (select_pass, decoupled look-back).
// A pack needs its number of kept elements to allocate its output. Where a count of the same
// predicate is in the group, that number is the sum of the counts, which the filter's `nest`
// needs as offsets anyway: the group scans the counts once and reads the totals of all its
// counts back with one wait (segments_of_valid_lengths, which remembers both: Note [Segment
// descriptor cache] in dvec.cpp), and gives each total to count_true's cache, so neither the
// nest nor the pack counts again.
// Most groups no longer go that way: a group with a pack, at most four predicates and eight
// columns, over one set of segments, is one partition after step 1 (Note [Partitions] in
// runtime/gpu/partition.h: four launches and one wait in all; quicksort's took 25 launches).
// The steps above remain for the others, and for NDP_PARTITIONS=0.
#pragma once

#include <functional>
#include <vector>

#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "exec/cuda/kernels.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cuda {

/// Runs the group `s`: `operand(v)` is the value of variable v, `result_type(v)` its type.
/// Returns the value of each of s.outs, in order.
std::vector<DVec> run_filter_group(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s,
                                   const std::function<const DVec&(flatten::VarId)>& operand,
                                   const std::function<const lang::Type*(flatten::VarId)>& result_type);

}  // namespace ndp::exec::cuda
