// Which frame slots a Core expression reads without binding them itself.
#pragma once

#include <cstdint>
#include <set>

#include "lang/core.h"

namespace ndp::flatten {

/// The slots that `e` reads and that are bound outside it (ordered, so what is emitted from
/// them is deterministic).
std::set<uint32_t> free_slots(const lang::core::Expr* e);

/// The slots bound by a pattern.
void pattern_slots(const lang::core::Pattern* p, std::set<uint32_t>& out);

}  // namespace ndp::flatten
