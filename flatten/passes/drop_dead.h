// Pass: removal of statements whose results nobody reads and that cannot fail.
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR. Guarantees: statements that only compute a value (no effects, no
/// error: lengths, counts, literals, structure, nests, packs, kernels, primitives a kernel may
/// hold ...) whose results are read nowhere are removed, repeatedly, and a Kernel statement
/// loses the outputs nobody reads. Statements that can fail (primitives that check, bounds
/// checks, calls) stay, so errors are unchanged. Why: vectorisation leaves a few unused counts
/// behind, and a count that reads a filter's flags keeps them from fusing into their pack.
Program drop_dead(Program p);

}  // namespace ndp::flatten
