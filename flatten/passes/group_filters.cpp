// Grouping of filters on the same inputs (see group_filters.h, Note [Filter groups] in
// flatten/flat_ir.h).
#include "flatten/passes/group_filters.h"

#include <map>
#include <string>
#include <vector>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

/// A statement seen as a consumer of one predicate.
struct Candidate {
  FilterGroup::Kind kind;
  std::vector<VarId> inputs;
  VarId other;                             // the lengths (count) or the values (pack)
  std::shared_ptr<const KernelBody> body;  // the predicate alone (output 0); null: an input
  uint32_t input = 0;                      // the predicate when body is null
};

/// `s` as a filter consumer, or false.
bool as_candidate(const Stmt& s, Candidate& c) {
  if (s.op == Op::Pack && s.uses.size() == 2) {
    c = Candidate{FilterGroup::Kind::Pack, {s.uses[1]}, s.uses[0], nullptr, 0};
    return true;
  }
  if ((s.op != Op::PackKernel && s.op != Op::ReduceKernel) || !s.kernel || s.kernel->outputs.size() != 1) return false;
  const KernelBody& k = *s.kernel;
  uint32_t pred = k.outputs[0];
  if (s.op == Op::ReduceKernel) {
    // sum(btoi(p)): the number of elements where p holds.
    const KernelNode& out = k.nodes[pred];
    if (s.prim != lang::core::PrimId::Sum || out.kind != KernelNode::Kind::Prim ||
        out.prim != lang::core::PrimId::Btoi || out.args.size() != 1)
      return false;
    pred = out.args[0];
  }
  if (k.nodes[pred].type->kind != lang::TypeKind::Bool) return false;
  c.kind = s.op == Op::ReduceKernel ? FilterGroup::Kind::Count : FilterGroup::Kind::Pack;
  c.inputs = kernel_inputs(s);
  c.other = s.uses[0];
  if (k.nodes[pred].kind == KernelNode::Kind::Input) {
    c.body = nullptr;
    c.input = k.nodes[pred].input;
    return true;
  }
  // Nodes are in evaluation order, so the ones up to the predicate compute it.
  auto body = std::make_shared<KernelBody>();
  body->inputs = k.inputs;
  body->nodes.assign(k.nodes.begin(), k.nodes.begin() + pred + 1);
  body->outputs = {pred};
  c.body = std::move(body);
  return true;
}

/// A group while the block is read.
struct Building {
  std::vector<VarId> inputs;
  size_t leader = 0;            // statement index in the block of the first member
  std::vector<size_t> members;  // statement indices, leader first
  std::vector<VarId> others;    // each member's lengths or values
  std::vector<FilterGroup::Member> data;
  std::vector<std::shared_ptr<const KernelBody>> bodies;  // the distinct predicates
  std::map<std::string, int32_t> by_key;
};

/// The predicates of a group as one kernel with an output per predicate.
std::shared_ptr<const KernelBody> combine(const std::vector<std::shared_ptr<const KernelBody>>& bodies) {
  if (bodies.empty()) return nullptr;
  auto k = std::make_shared<KernelBody>();
  k->inputs = bodies[0]->inputs;
  for (const auto& b : bodies) {
    uint32_t base = static_cast<uint32_t>(k->nodes.size());
    for (KernelNode n : b->nodes) {
      for (uint32_t& a : n.args) a += base;
      k->nodes.push_back(std::move(n));
    }
    k->outputs.push_back(base + b->outputs[0]);
  }
  return k;
}

/// The FilterGroup statement of a group of the block `b`.
Stmt group_stmt(const Block& b, const Building& g) {
  Stmt s;
  s.op = Op::FilterGroup;
  s.span = b.stmts[g.leader].span;
  s.uses = g.inputs;
  s.uses.insert(s.uses.end(), g.others.begin(), g.others.end());
  for (size_t m : g.members) s.outs.push_back(b.stmts[m].dst);
  s.dst = s.outs[0];
  s.kernel = combine(g.bodies);
  auto filters = std::make_shared<FilterGroup>();
  filters->inputs = static_cast<uint32_t>(g.inputs.size());
  filters->members = g.data;
  s.filters = std::move(filters);
  return s;
}

void group_block(Block& b) {
  for (Stmt& s : b.stmts) for_each_sub_block(s, group_block);
  std::map<VarId, size_t> defined_at;  // statement index of each variable this block defines
  std::vector<Building> built;
  std::map<std::vector<VarId>, size_t> open;  // inputs -> the group still taking members
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Stmt& s = b.stmts[i];
    Candidate c;
    if (as_candidate(s, c)) {
      auto it = open.find(c.inputs);
      bool joins = false;
      if (it != open.end()) {
        auto d = defined_at.find(c.other);
        joins = d == defined_at.end() || d->second < built[it->second].leader;
      }
      if (!joins) {
        Building fresh;
        fresh.inputs = c.inputs;
        fresh.leader = i;
        built.push_back(std::move(fresh));
        open[c.inputs] = built.size() - 1;
        it = open.find(c.inputs);
      }
      Building& g = built[it->second];
      int32_t pred;
      if (!c.body) {
        pred = -1 - static_cast<int32_t>(c.input);
      } else {
        auto [k, fresh] = g.by_key.emplace(c.body->key(), static_cast<int32_t>(g.bodies.size()));
        if (fresh) g.bodies.push_back(c.body);
        pred = k->second;
      }
      g.members.push_back(i);
      g.others.push_back(c.other);
      g.data.push_back(FilterGroup::Member{c.kind, pred});
    }
    if (defines_outs(s.op)) {
      for (VarId o : s.outs) defined_at[o] = i;
    } else if (s.op != Op::CheckLengths) {
      defined_at[s.dst] = i;
    }
  }
  // A group replaces its first member; the others go.
  std::map<size_t, Stmt> at_leader;
  std::vector<bool> joined(b.stmts.size(), false);
  for (const Building& g : built) {
    if (g.members.size() < 2) continue;
    at_leader.emplace(g.leader, group_stmt(b, g));
    for (size_t m : g.members) joined[m] = true;
  }
  if (at_leader.empty()) return;
  std::vector<Stmt> stmts;
  stmts.reserve(b.stmts.size());
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    auto g = at_leader.find(i);
    if (g != at_leader.end())
      stmts.push_back(std::move(g->second));
    else if (!joined[i])
      stmts.push_back(std::move(b.stmts[i]));
  }
  b.stmts = std::move(stmts);
}

}  // namespace

Program group_filters(Program p) {
  for (Function& fn : p.functions) group_block(fn.body);
  return p;
}

}  // namespace ndp::flatten
