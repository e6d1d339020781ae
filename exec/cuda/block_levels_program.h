// A laid-out recursion loop's descent written as a program of runtime/gpu/block_levels.h (Note
// [Levels in a block]): the statements a block runs at every level, their variables' columns
// and the slots of shared memory that hold them. Host code only (the unit tests run it on the
// engine's one-thread team).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flatten/flat_ir.h"
#include "runtime/gpu/block_levels.h"

namespace ndp::exec::cuda {

struct BlockLevelsProgram {
  std::vector<runtime::gpu::block_levels::Op> ops;
  std::vector<runtime::gpu::block_levels::Node> nodes;
  std::vector<int32_t> lists;
  std::vector<runtime::gpu::block_levels::Var> vars;
  /// Everything but the arrays' pointers and `cap` (the launch's choice).
  runtime::gpu::block_levels::Program shape;

  /// The program with its arrays at these addresses and slots of `cap` words.
  runtime::gpu::block_levels::Program at(const void* ops_at, const void* nodes_at, const void* lists_at,
                                         const void* vars_at, int64_t cap) const;
  /// The program over this object's own arrays (for a run on the host).
  runtime::gpu::block_levels::Program on_host(int64_t cap) const {
    return at(ops.data(), nodes.data(), lists.data(), vars.data(), cap);
  }
};

/// The block-levels program of loop statement `s` (a Recurse with a layout) of function `fn`;
/// or nothing, with the reason in `why`, where a statement, a type or the layout is not one
/// the engine runs (the loop then runs level by level).
std::optional<BlockLevelsProgram> block_levels_program(const flatten::Function& fn, const flatten::Stmt& s, std::string* why);

}  // namespace ndp::exec::cuda
