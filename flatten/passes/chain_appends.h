// Pass: chains of `++` and elt become one AppendChain statement that copies each element once
// (Note [Append chains] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: within each block, a `++` of sequences of flat scalars
/// (the root) whose operands are `++`s or elts of the same block, read nowhere else (and so
/// on through their operands), becomes one AppendChain at the root's place, and those
/// statements go; the chain's sources are the operands that are not taken apart, in result
/// order. A chain is formed only where every statement from the first one taken in up to the
/// root cannot fail or is taken in, and it raises the first failing elt's error with that
/// elt's span, so results and errors are those of the statements. Run it before group_filters:
/// the statements that group moves are among those a chain may not be formed across.
Program chain_appends(Program p);

}  // namespace ndp::flatten
