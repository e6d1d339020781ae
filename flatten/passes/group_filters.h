// Pass: the filters of a block whose predicates read the same inputs become one FilterGroup
// statement (Note [Filter groups] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after fuse_consumers. Guarantees: within each block, the filter
/// consumers
///   n = reduce_kernel sum(lens; ins) btoi(p)    (a Count member)
///   y = pack_kernel(x; ins) p,  y = pack(x, f)  (Pack members; for pack, ins = [f] and p = f)
/// that read the same kernel inputs `ins`, two or more of them, become one FilterGroup at the
/// place of the first, whose kernel computes each distinct predicate once. A consumer joins
/// only if its lengths or values are defined before the group's first statement; a later one
/// that cannot starts a group of its own. The members cannot fail, so results and errors are
/// those of the statements. Why: each predicate is computed once, not once per consumer.
Program group_filters(Program p);

}  // namespace ndp::flatten
