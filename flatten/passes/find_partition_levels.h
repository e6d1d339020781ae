// Pass: laid-out recursion loops whose levels partition their instances (Note [Partition
// levels] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after group_filters and lay_out_results.
/// Guarantees: RecursionLoop::partition is set exactly on the laid-out loops of functions with
/// no effect and no rand path, from a sequence of ints or floats to the same, whose
///  - prefix takes `#param`, computes bool flags F and not F from it alone in one kernel,
///    counts the recursing ones, and makes the base branch `pack(param, F)` (the argument);
///  - step packs the recursing instances, computes scalars from their lengths, elements at
///    those scalars (`elt`), and lone elementwise primitives, spreads some of them over the
///    elements (`replicate`), and filters the elements by one filter group over the elements
///    and the spread scalars; every part it nests is a count and a pack of one predicate, and
///    its next argument is the children literal's elements;
///  - layout (LaidOut) puts each part in the result once, the children's and the rows';
/// nothing else changes. Not on loops that are regular already.
Program find_partition_levels(Program p);

}  // namespace ndp::flatten
