// Pass: common-subexpression elimination of pure Flat IR statements.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: a pure statement (no effect, no call, no control, no
/// check) that repeats an earlier one with the same operands and attributes, in the same block
/// or an enclosing one, is removed and its uses read the earlier result. Why: vectorisation
/// translates each apply-to-each on its own, so `{e in a | e < p}`, `{e in a | e == p}`, ...
/// each replicate `p` and split `a` again (whole passes over the data per level of recursion).
/// Also, a projection of a tuple in scope is its component, and the elements of a nest in scope
/// what it nested (Notes [Components of a tuple] and [Elements of a nest] in cse.cpp).
Program cse(Program p);

}  // namespace ndp::flatten
