// The flattening pipeline: Core IR of one top-level body -> verified Flat IR.
#pragma once

#include "flatten/flat_ir.h"
#include "flatten/vectorise.h"
#include "lang/core.h"

namespace ndp::flatten {

/// Runs every flattening pass in order (see pipeline.cpp for the list). The IR is verified
/// after each pass (an invalid result is an InternalError naming the pass); `NDP_DEBUG=2` in the
/// environment prints the IR after each pass to stderr. Throws Unsupported for constructs the
/// flat backends cannot run yet.
Program flatten(lang::core::Program& core, const lang::core::Expr* body);

}  // namespace ndp::flatten
