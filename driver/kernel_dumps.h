// The fused kernels of a flat program as text, for people (`--dump=llvm|ptx`, `:dump`) and for
// CI, which has no GPU but checks every kernel's PTX with ptxas.
#pragma once

#include <string>

#include "driver/session.h"
#include "flatten/flat_ir.h"

namespace ndp::driver {

/// The host LLVM IR (DumpStage::Llvm) or the sm_90 PTX (DumpStage::Ptx) of every fused kernel
/// of `program`, each under a comment line naming it.
std::string dump_kernels(DumpStage stage, const flatten::Program& program);

/// With NDP_PTX_CHECK_DIR set (tools/test.sh), writes the sm_90 PTX of every distinct fused
/// kernel of `program` into that folder, one file per kernel key, so that CI, which has no GPU,
/// can assemble each with ptxas (tools/check-ptx.sh). A consumer kernel's element function goes
/// in as the cuda backend compiles it: in its consumer program (<hash>.consumer.ptx), which must
/// compile without a stack frame. A kernel LLVM cannot compile leaves its error message in the
/// file, which ptxas then rejects. Without the variable it does nothing.
void save_ptx_for_check(const flatten::Program& program);

}  // namespace ndp::driver
