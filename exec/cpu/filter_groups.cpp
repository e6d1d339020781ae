// Running filter groups on the cpu backend (Note [Filter groups] in flatten/flat_ir.h).
#include "exec/cpu/filter_groups.h"

#include <map>

#include "exec/common/switches.h"
#include "exec/cpu/kernels.h"
#include "exec/host/lifted_prims.h"
#include "lang/diagnostics.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

using flatten::FilterGroup;
using flatten::Stmt;
using flatten::VarId;

namespace {

/// NDP_PARTITIONS=0 runs every pack on its own (for measuring), as on the cuda backend.
bool partitions_on() {
  static const bool on = !switched_off("NDP_PARTITIONS");
  return on;
}

/// The pack members that filter one flat vector by several flags run as one partition (Note [One
/// pass for a filter group's packs] in runtime/cpu/pack.cpp): fills their entries of `out`.
void run_partitions(const Stmt& s, const std::vector<Vec>& flags, const std::vector<Vec>& ins,
                    const std::function<const Vec&(VarId)>& operand, std::vector<Vec>& out) {
  const FilterGroup& g = *s.filters;
  std::map<VarId, std::vector<size_t>> by_vector;  // in member order
  for (size_t a = 0; a < g.members.size(); ++a) {
    const FilterGroup::Member& m = g.members[a];
    if (m.kind == FilterGroup::Kind::Pack && !FilterGroup::flags_of(m, flags, ins).is_uniform())
      by_vector[s.uses.at(g.inputs + a)].push_back(a);
  }
  for (const auto& [var, members] : by_vector) {
    const Vec& v = operand(var);
    if (members.size() < 2 || members.size() > runtime::kMostPartitions || !is_flat_scalar(v.type()) || v.is_uniform())
      continue;
    with_scalar(v.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<std::span<const bool>> fs;
      for (size_t a : members) fs.push_back(FilterGroup::flags_of(g.members[a], flags, ins).template values<bool>());
      // An output that keeps every element is v itself (as in pack), and is not written.
      auto allocate = [&](size_t j, int64_t count) -> T* {
        if (count == v.size()) {
          out[members[j]] = v;
          return nullptr;
        }
        Buf<T> buf(count);
        T* data = buf.data();
        out[members[j]] = Vec::scalar(v.type(), count, buf.share());
        return data;
      };
      check_rt(runtime::partition<T>(v.values<T>(), fs, allocate), "partition");
    });
  }
}

}  // namespace

std::vector<Vec> run_filter_group(const Stmt& s, const std::function<const Vec&(VarId)>& operand,
                                  const std::function<const lang::Type*(VarId)>& result_type) {
  NDP_ASSERT(s.filters != nullptr, "filter group without its members");
  const FilterGroup& g = *s.filters;
  std::vector<Vec> ins;
  for (VarId v : flatten::kernel_inputs(s)) ins.push_back(operand(v));
  // 1. Every distinct predicate, once, as a byte per element.
  std::vector<Vec> flags;
  if (s.kernel) flags = run_kernel(*s.kernel, ins, s.kernel->output_types());
  // 2. The packs and the counts (the counts of a filter's several predicates share lengths).
  std::vector<Vec> out(g.members.size());
  std::map<VarId, LengthSegs> segments;
  if (partitions_on()) run_partitions(s, flags, ins, operand, out);
  for (size_t a = 0; a < g.members.size(); ++a) {
    const FilterGroup::Member& m = g.members[a];
    const Vec& f = FilterGroup::flags_of(m, flags, ins);
    const VarId other_var = s.uses.at(g.inputs + a);
    const Vec& other = operand(other_var);
    if (m.kind == FilterGroup::Kind::Pack) {
      if (out[a].type() != nullptr) continue;  // packed by run_partitions
      NDP_ASSERT(other.size() == f.size(), "filter group: pack with flags of another length");
      out[a] = pack(other, f);
      continue;
    }
    int64_t segs = other.size();
    auto at = segments.find(other_var);
    if (at == segments.end()) at = segments.emplace(other_var, segments_of(other)).first;
    NDP_ASSERT(at->second.view.total() == f.size(), "filter group: count lengths do not cut the flags");
    Buf<int64_t> r(segs);
    check_rt(runtime::pack_lengths(f.values<bool>(), at->second.view,
                                   std::span<int64_t>(r.data(), static_cast<size_t>(segs)), nullptr),
             "pack_lengths");
    out[a] = Vec::scalar(result_type(s.outs.at(a)), segs, r.share());
  }
  return out;
}

}  // namespace ndp::exec::cpu
