#include "flatten/passes/loop_shapes.h"

#include <memory>
#include <vector>

#include "flatten/passes/fuse_elementwise.h"

namespace ndp::flatten {

std::optional<Stmt> as_one_node_kernel(const Function& fn, const Stmt& prim) {
  std::vector<const lang::Type*> args;
  for (VarId u : prim.uses) args.push_back(fn.vars.at(u).type);
  if (!kernel_prim_ok(prim.prim, args, prim.type) && !kernel_prim_fallible(prim.prim, args, prim.type)) return std::nullopt;
  Stmt k;
  k.op = Op::Kernel;
  k.dst = prim.dst;
  k.uses = prim.uses;
  k.outs = {prim.dst};
  k.kernel = std::make_shared<const KernelBody>(one_node_kernel(prim.prim, args, prim.type, prim.span));
  return k;
}

std::optional<std::pair<VarId, VarId>> base_branch_pack(const Stmt& s) {
  if (s.op != Op::IfNonEmpty || s.uses.size() != 1 || !s.then_block || !s.else_block || s.then_block->stmts.size() != 1 ||
      s.else_block->stmts.size() != 1 || s.else_block->stmts[0].op != Op::Nothing)
    return std::nullopt;
  const Stmt& p = s.then_block->stmts[0];
  if (p.op != Op::Pack || p.dst != s.then_block->result || p.uses.size() != 2) return std::nullopt;
  return std::make_pair(p.uses[0], p.uses[1]);
}

}  // namespace ndp::flatten
