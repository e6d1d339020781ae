// Pass: where each vector's last reader is, so that executors drop it there.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

// Note [Releasing dead vectors]
// Executors keep a variable's vector until its frame ends, or in a recursion loop until the
// next level writes the variable again. A vector that nothing reads any more still holds its
// memory, and, worse, it shares its buffers with the values computed from it, so that a
// primitive that could update its operand in place (`rep` in a loop, Note [Updates in place]
// in exec/host/lifted_prims.h) never finds that operand's buffers unshared. So each statement
// lists in `releases` the variables whose last reader it is, and the executor drops them once
// it has run (and may hand such an operand over to the primitive instead of copying it).
//
// A variable is released only where that is certain to be its last read on every path:
//  * it is defined by a statement of the region that reads it, where a region is a block, or
//    the descent of a recursion loop (its prefix and then its step, which run in that order at
//    every level and define their variables anew at the next);
//  * every read of it is in a statement of that region (nested blocks included), and the last
//    of those statements releases it;
//  * it is no block's result, and no part of a recursion loop names it (the parameter, the path,
//    the saved values, the call result, the branch): those are read by the loop itself.
// A recursion loop's parameter is released by the last reader in its descent region too: each
// level binds it anew.

/// Assumes: valid Flat IR, after every pass that moves or adds statements. Guarantees: every
/// statement's `releases` is set as Note [Releasing dead vectors] says (and nothing else
/// changes).
Program mark_releases(Program p);

}  // namespace ndp::flatten
