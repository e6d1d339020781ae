// Shrinking a failing program to a small reproducer by type-preserving replacements.
#pragma once

#include <functional>

#include "tests/difftest/program.h"

namespace ndp::difftest {

struct ShrinkStats {
  int attempts = 0;  // candidates run
  int accepted = 0;  // candidates that still failed and became the current program
};

/// Repeatedly tries smaller variants of `p` (drop a definition, replace a subexpression by a
/// same-typed descendant or by the smallest literal of its type, drop sequence-literal
/// elements, filters and generators, shorten literals) and keeps each one for which
/// `still_fails` holds, until no candidate helps or `max_attempts` candidates have run.
/// Guards marked frozen are never rewritten, so reproducers keep terminating.
Program shrink(Program p, const std::function<bool(const Program&)>& still_fails, int max_attempts, ShrinkStats* stats);

/// Source size used to rank programs: the length of the definitions and the expression.
size_t program_size(const Program& p);

}  // namespace ndp::difftest
