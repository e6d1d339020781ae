// Pass: recursion loops whose levels are regular (Note [Regular levels] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR after fusion (the step's elementwise work is one Kernel statement).
/// Guarantees: RecursionLoop::regular is set exactly on the loops of functions with no effect
/// and no rand path whose
///  - prefix takes `#param`, computes bool flags from it alone, counts them, and makes the
///    base branch as `if_nonempty(count(F)) { pack(param, F) } else { nothing }`;
///  - step packs the recursing instances of param, cuts them by `partition` into parts whose
///    lengths come from the length alone, zips elements of parts through one Kernel that can
///    not fail, and ends in `elements(seqlit(nest(lengths(part), output), ...))`, every child
///    one output of the same element type as the argument;
///  - combine is `flatten(nest(child counts, the calls' result))`, and finish is one merge of the
///    base branch with the combine's by F;
/// nothing else changes.
Program find_regular_levels(Program p);

}  // namespace ndp::flatten
