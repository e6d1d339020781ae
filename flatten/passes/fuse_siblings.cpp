// Fusion of sibling kernels (see fuse_siblings.h).
#include "flatten/passes/fuse_siblings.h"

#include <map>
#include <memory>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

/// Appends kernel `later` (reading `later_uses`) to `into` (reading `into_uses`); returns the
/// merged body and its uses.
std::pair<KernelBody, std::vector<VarId>> merge(const KernelBody& into, const std::vector<VarId>& into_uses,
                                                const KernelBody& later, const std::vector<VarId>& later_uses) {
  KernelBody k = into;
  std::vector<VarId> uses = into_uses;
  std::map<VarId, uint32_t> input_node;  // a variable's Input node in the merged body
  for (uint32_t n = 0; n < k.nodes.size(); ++n)
    if (k.nodes[n].kind == KernelNode::Kind::Input) input_node.emplace(uses.at(k.nodes[n].input), n);
  std::vector<uint32_t> node_of(later.nodes.size());
  for (uint32_t n = 0; n < later.nodes.size(); ++n) {
    KernelNode node = later.nodes[n];
    if (node.kind == KernelNode::Kind::Input) {
      VarId v = later_uses.at(node.input);
      if (auto it = input_node.find(v); it != input_node.end()) {
        node_of[n] = it->second;  // read once
        continue;
      }
      node.input = static_cast<uint32_t>(uses.size());
      uses.push_back(v);
      k.inputs.push_back(later.inputs.at(later.nodes[n].input));
      input_node.emplace(v, static_cast<uint32_t>(k.nodes.size()));
    }
    for (uint32_t& a : node.args) a = node_of.at(a);
    node_of[n] = static_cast<uint32_t>(k.nodes.size());
    k.nodes.push_back(std::move(node));
  }
  for (uint32_t o : later.outputs) k.outputs.push_back(node_of.at(o));
  return {std::move(k), std::move(uses)};
}

void fuse_block(const Function& fn, Block& b) {
  for (Stmt& s : b.stmts) for_each_sub_block(s, [&](Block& sub) { fuse_block(fn, sub); });
  // Where each variable this block defines at its top level is defined.
  std::map<VarId, size_t> defined_at;
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Stmt& s = b.stmts[i];
    if (defines_outs(s.op)) {
      for (VarId o : s.outs) defined_at[o] = i;
    } else if (s.op != Op::CheckLengths) {
      defined_at[s.dst] = i;
    }
  }
  auto available_at = [&](VarId v, size_t pos) {
    auto it = defined_at.find(v);
    return it == defined_at.end() || it->second < pos;  // defined outside the block, or before
  };
  std::vector<bool> removed(b.stmts.size(), false);
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    Stmt& later = b.stmts[i];
    if (later.op != Op::Kernel) continue;
    for (size_t j = 0; j < i; ++j) {
      Stmt& into = b.stmts[j];
      if (removed[j] || into.op != Op::Kernel) continue;
      bool shares = false, ready = true;
      for (VarId u : later.uses) {
        for (VarId w : into.uses) shares = shares || u == w;
        ready = ready && available_at(u, j);
      }
      if (!shares || !ready) continue;
      if (later.kernel->can_fail()) {  // its checks may not move past one that can fail
        bool safe = !into.kernel->can_fail();
        for (size_t m = j + 1; m < i && safe; ++m) safe = removed[m] || pure_and_total(fn, b.stmts[m]);
        if (!safe) continue;
      }
      auto [body, uses] = merge(*into.kernel, into.uses, *later.kernel, later.uses);
      into.kernel = std::make_shared<const KernelBody>(std::move(body));
      into.uses = std::move(uses);
      for (VarId o : later.outs) {
        into.outs.push_back(o);
        defined_at[o] = j;
      }
      removed[i] = true;
      break;
    }
  }
  std::vector<Stmt> kept;
  kept.reserve(b.stmts.size());
  for (size_t i = 0; i < b.stmts.size(); ++i)
    if (!removed[i]) kept.push_back(std::move(b.stmts[i]));
  b.stmts = std::move(kept);
}

}  // namespace

Program fuse_siblings(Program p) {
  for (Function& f : p.functions) fuse_block(f, f.body);
  return p;
}

}  // namespace ndp::flatten
