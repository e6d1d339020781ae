// Pass: recursion loops whose results can be laid out before their calls (Note [Results laid
// out before the calls] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR, after chain_appends (a combine's `++`s are one AppendChain).
/// Guarantees: RecursionLoop::laid_out is set exactly on the loops of functions with no effect
/// whose finish is one merge of the base results with the branch, whose combine only
/// concatenates the children's results (an AppendChain of `elt(nest(counts, r), k)` for each
/// child k once and of rows defined before the calls) and whose
/// results are sequences of flat scalars; nothing else changes.
Program lay_out_results(Program p);

}  // namespace ndp::flatten
