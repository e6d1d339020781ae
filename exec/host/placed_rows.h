// The host's PlacedRows (exec/common/placed_rows.h): a laid-out recursion loop's results in one
// host buffer (Note [Results laid out before the calls] in flatten/flat_ir.h).
#pragma once

#include <memory>

#include "exec/common/placed_rows.h"
#include "exec/host/vec.h"

namespace ndp::exec::host {

/// Room for `total` elements of the rows of `rows_type` (a sequence of flat scalars), or null
/// for rows of anything else.
std::unique_ptr<PlacedRows<Vec>> placed_rows(const lang::Type* rows_type, int64_t total);

}  // namespace ndp::exec::host
