// Running a FilterGroup statement (Note [Filter groups] in flatten/flat_ir.h) on host vectors.
#pragma once

#include <functional>
#include <vector>

#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

/// Runs the group `s`: `operand(v)` is the value of variable v, `result_type(v)` its element
/// type. Returns the value of each of s.outs, in order.
std::vector<Vec> run_filter_group(const flatten::Stmt& s, const std::function<const Vec&(flatten::VarId)>& operand,
                                  const std::function<const lang::Type*(flatten::VarId)>& result_type);

}  // namespace ndp::exec::cpu
