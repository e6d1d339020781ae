// Statement shapes that the finders of recursion-loop plans read alike (find_regular_levels,
// find_partition_levels).
#pragma once

#include <optional>
#include <utility>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// A lone elementwise primitive of `fn` (one that fusion left alone) as the Kernel statement of
/// one node that computes it; nothing where no kernel computes that primitive.
std::optional<Stmt> as_one_node_kernel(const Function& fn, const Stmt& prim);

/// The base branch of a loop's prefix, `if_nonempty(n) { pack(x, f) } else { nothing }`: its
/// (x, f); nothing for any other statement. The caller checks that x is the level's argument
/// and that n counts f.
std::optional<std::pair<VarId, VarId>> base_branch_pack(const Stmt& s);

}  // namespace ndp::flatten
