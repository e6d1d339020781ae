// Note [Compiled block levels]
// The engine of Note [Levels in a block] (runtime/gpu/block_levels.h) interprets its program:
// every statement of every level dispatches on its kind, every kernel node of every element on
// its primitive, with the node values in local memory (under Nsight Compute a block issued an
// instruction every 14 cycles, bench/results/session33). The program is known when the loop
// first runs, so here it is compiled in instead, by partial evaluation through LLVM:
// - at build time clang compiles the engine itself (codegen/block_levels_engine.cu, over
//   runtime/gpu/device/block/levels_team.cuh) into LLVM bitcode, embedded in ndp, with the
//   program's arrays as external constants and its statement sequence as an external function;
// - here the arrays become constants of the module and the sequence a function that calls the
//   engine's op_at with a constant statement index, one basic block a statement, branching to
//   the statements that can follow it;
// - every function is inlined, the reads of the program fold to constants, the loops over a
//   statement's nodes, inputs and members (NDP_BL_UNROLL) unroll, and the node values become
//   registers. What is left is the statements' own block-wide passes over shared memory.
// The kernel takes the interpreting kernel's parameters but the program; the launch and the
// fallback to the levels one by one are the same (exec/cuda/block_levels.cpp). A build without
// clang has no bitcode, and the engine interprets.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/gpu/block_levels.h"

namespace ndp::codegen {

/// Whether this build embeds the engine's bitcode.
bool has_block_levels_engine();

/// PTX (sm_90) of the entry `ndp_block_levels_compiled(arg_off, n, window, arg, out, places,
/// failed)`: ndp_block_levels (runtime/gpu/device/block_levels.cu) with program `p` compiled in;
/// `p` points to its arrays on the host: n_ops ops, `n_nodes` nodes, `n_lists` list entries and
/// n_vars variables. Throws std::runtime_error where LLVM fails or the build has no bitcode.
std::string compile_block_levels_ptx(const runtime::gpu::block_levels::Program& p, int32_t n_nodes, int32_t n_lists);

}  // namespace ndp::codegen
