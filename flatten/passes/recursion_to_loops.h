// Pass: run self-recursion as loops over recursion levels (Note [Recursion as loops]).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR, after merge_calls (so recursive calls of one level are one call).
/// Guarantees: every function whose only self-call sits directly in the then-block of an
/// if_nonempty at the top of its body has that body replaced by one Recurse statement; the
/// descent processes all instances of one depth per iteration and a stack of saved per-level
/// values (segment descriptors among them) drives the ascent. Other functions are unchanged
/// (they keep host recursion, which does the same vector work).
Program recursion_to_loops(Program p);

}  // namespace ndp::flatten
