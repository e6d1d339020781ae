// Pass: merge independent calls of one function in a block into a single call.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: in every block, two calls `r1 = call f(a1)` ...
/// `r2 = call f(a2)` where nothing between them (the second included) reads r1 become
/// `r = call f(concat(a1, a2))` with r1, r2 sliced out of r. Why: `fib(n-1) + fib(n-2)` in a
/// lifted function would otherwise make two lifted calls per level, so the number of vector
/// steps would grow with the number of recursive calls (2^depth) instead of with the depth.
/// Calls of functions that can run an effect (rand, rand_seed, I/O) keep their order.
Program merge_calls(Program p);

}  // namespace ndp::flatten
