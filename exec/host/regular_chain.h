// The lengths of a regular recursion's levels (Note [Regular levels] in flatten/flat_ir.h),
// computed on the host from the first level's length.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::exec::host {

/// The instances' length at each level that recurses, from `length` down, for the loop of
/// `plan` over instances of that one length: empty where the first level is already the base
/// case (the result is the argument). Nothing where some level does not split as the plan runs it
/// (its parts of unequal lengths, or not adding up to the level's, or no shorter than it; its
/// flags both or neither; an expression that fails or is not an int or bool): the loop then
/// runs level by level, which meets whatever error the program has. Kept with the plan
/// (RegularLevels::chain_memo), since a sort calls its merge once a level with the same lengths.
std::optional<std::vector<int64_t>> regular_chain(const flatten::RegularLevels& plan, int64_t length);

}  // namespace ndp::exec::host
