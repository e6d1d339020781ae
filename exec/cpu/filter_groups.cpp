// Finding filter groups (Note [Filter groups] in filter_groups.h) and running them.
#include "exec/cpu/filter_groups.h"

#include <map>

#include "exec/cpu/kernels.h"
#include "exec/host/lifted_prims.h"
#include "flatten/passes/ir_walk.h"
#include "lang/diagnostics.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


using flat::KernelBody;
using flat::KernelNode;
using flat::Op;
using flat::Stmt;
using flat::VarId;

namespace {

/// A statement seen as a consumer of one predicate.
struct Candidate {
  FilterGroup::Kind kind;
  std::vector<VarId> inputs;
  VarId other;                                // the lengths (count) or the values (pack)
  std::shared_ptr<const KernelBody> body;     // the predicate alone (output 0); null: an input
  uint32_t input = 0;                         // the predicate when body is null
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
  c.inputs = flat::kernel_inputs(s);
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

struct Building {
  std::unique_ptr<FilterGroup> group;
  size_t leader = 0;                                       // statement index in the block
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

}  // namespace

FilterPlan::FilterPlan(const flat::Program& p) {
  for (const flat::Function& fn : p.functions) plan_block(fn.body);
}

void FilterPlan::plan_block(const flat::Block& b) {
  std::map<VarId, size_t> defined_at;  // statement index of each variable this block defines
  std::vector<Building> built;
  std::map<std::vector<VarId>, size_t> open;  // inputs -> the group still taking members
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Stmt& s = b.stmts[i];
    flat::for_each_sub_block(s, [&](const flat::Block& inner) { plan_block(inner); });
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
        fresh.group = std::make_unique<FilterGroup>();
        fresh.group->inputs = c.inputs;
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
      g.group->members.push_back(FilterGroup::Member{&s, c.kind, pred});
    }
    if (s.op != Op::CheckLengths) defined_at[s.dst] = i;
    for (VarId o : s.outs) defined_at[o] = i;
  }
  for (Building& g : built) {
    if (g.group->members.size() < 2) continue;
    g.group->predicates = combine(g.bodies);
    for (size_t m = 0; m < g.group->members.size(); ++m) roles_[g.group->members[m].stmt] = Role{g.group.get(), m == 0};
    groups_.push_back(std::move(g.group));
  }
}

std::vector<Vec> run_filter_group(const FilterGroup& g, const std::function<const Vec&(VarId)>& operand,
                                  const std::function<const lang::Type*(VarId)>& result_type) {
  std::vector<Vec> ins;
  for (VarId v : g.inputs) ins.push_back(operand(v));
  // 1. Every distinct predicate, once, as a byte per element.
  std::vector<Vec> flags;
  if (g.predicates) flags = run_kernel(*g.predicates, ins, g.predicate_types());
  // 2. The packs and the counts (the counts of a filter's several predicates share lengths).
  std::vector<Vec> out(g.members.size());
  std::map<VarId, LengthSegs> segments;
  for (size_t a = 0; a < g.members.size(); ++a) {
    const FilterGroup::Member& m = g.members[a];
    const Vec& f = FilterGroup::flags_of(m, flags, ins);
    const Vec& other = operand(m.stmt->uses[0]);
    if (m.kind == FilterGroup::Kind::Pack) {
      NDP_ASSERT(other.size() == f.size(), "filter group: pack with flags of another length");
      out[a] = pack(other, f);
      continue;
    }
    int64_t segs = other.size();
    auto at = segments.find(m.stmt->uses[0]);
    if (at == segments.end()) at = segments.emplace(m.stmt->uses[0], segments_of(other)).first;
    NDP_ASSERT(at->second.view.total() == f.size(), "filter group: count lengths do not cut the flags");
    Buf<int64_t> r(segs);
    check_rt(runtime::pack_lengths(f.values<bool>(), at->second.view, std::span<int64_t>(r.data(), static_cast<size_t>(segs)),
                              nullptr),
             "pack_lengths");
    out[a] = Vec::scalar(result_type(m.stmt->dst), segs, r.share());
  }
  return out;
}

}  // namespace ndp::exec::cpu
