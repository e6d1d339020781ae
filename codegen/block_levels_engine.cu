// Note [Compiled block levels] (codegen/block_levels_ptx.h): the engine of runtime/gpu/
// block_levels.h compiled by clang into LLVM bitcode at build time, over a program it does not
// hold. codegen/block_levels_ptx.cpp defines the program's arrays (ndp_bl_*) as constants and
// ndp_bl_program, the statements in order, each a call of ndp_bl_op_at with a constant index;
// LLVM's optimiser then folds every read of the program away.
#define NDP_BL_SPECIALISE 1
#include "codegen/clang_cuda_shim.h"

#include <cstdint>

#include "runtime/gpu/device/block/levels_team.cuh"

using namespace ndp::runtime::gpu::block_levels;

extern "C" {
// The program, defined by the code generator.
extern __device__ const Op ndp_bl_ops[];
extern __device__ const Node ndp_bl_nodes[];
extern __device__ const int32_t ndp_bl_lists[];
extern __device__ const Var ndp_bl_vars[];
/// n_ops, n_vars, n_slots, param, at, next_at, rec_ids, tmp0, tmp1, tmp2, in_bytes, out_bytes, cap.
extern __device__ const int64_t ndp_bl_scalars[];
/// The statements, stepped through in order with ndp_bl_op_at; false where the run failed.
__device__ bool ndp_bl_program(Engine<BlockTeam>* engine);

/// Statement pc of the program (Engine::op_at): the next one's index, kDone or kFailed.
__device__ __attribute__((used)) int ndp_bl_op_at(Engine<BlockTeam>* engine, int pc) { return engine->op_at(pc); }

/// As ndp_block_levels (runtime/gpu/device/block_levels.cu), the program compiled in; launched
/// with kThreads threads a block, which lets each have up to 255 registers.
__global__ void __launch_bounds__(kThreads) ndp_block_levels_compiled(const int64_t* arg_off, int64_t n, int64_t window,
                                                                  const void* arg, void* out, const int64_t* places,
                                                                  int* failed) {
  extern __shared__ int64_t mem[];
  __shared__ int64_t scratch[33];
  __shared__ int64_t range[2];
  Program prog;
  prog.ops = ndp_bl_ops;
  prog.nodes = ndp_bl_nodes;
  prog.lists = ndp_bl_lists;
  prog.vars = ndp_bl_vars;
  const int64_t* s = ndp_bl_scalars;
  prog.n_ops = static_cast<int32_t>(s[0]);
  prog.n_vars = static_cast<int32_t>(s[1]);
  prog.n_slots = static_cast<int32_t>(s[2]);
  prog.param = static_cast<int32_t>(s[3]);
  prog.at = static_cast<int32_t>(s[4]);
  prog.next_at = static_cast<int32_t>(s[5]);
  prog.rec_ids = static_cast<int32_t>(s[6]);
  prog.tmp0 = static_cast<int32_t>(s[7]);
  prog.tmp1 = static_cast<int32_t>(s[8]);
  prog.tmp2 = static_cast<int32_t>(s[9]);
  prog.in_bytes = static_cast<uint8_t>(s[10]);
  prog.out_bytes = static_cast<uint8_t>(s[11]);
  prog.cap = s[12];
  run_levels_block(prog, arg_off, n, window, arg, out, places, failed, mem, scratch, range,
                   [](Engine<BlockTeam>& e) { return ndp_bl_program(&e); });
}
}
