// Running filter groups on the cpu backend (Note [Filter groups] in flatten/flat_ir.h).
#include "exec/cpu/filter_groups.h"

#include <algorithm>
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
      // An output that keeps every element is v itself (as in pack), and is not written. The
      // group's adjacent packs share one buffer, one after another (Note [Children one after
      // another] in flatten/passes/lay_out_results.h); each other output has its own, so that
      // none keeps another's memory alive.
      auto allocate = [&](std::span<const int64_t> counts, std::span<T*> room) {
        std::vector<size_t> adjacent;  // positions in `members`, in the group's order
        for (uint32_t a : g.adjacent_packs)
          if (auto at = std::find(members.begin(), members.end(), a); at != members.end() && counts[at - members.begin()] != v.size())
            adjacent.push_back(static_cast<size_t>(at - members.begin()));
        if (adjacent.size() >= 2) {
          int64_t shared = 0;
          for (size_t j : adjacent) shared += counts[j];
          Buf<T> buf(shared);
          T* next = buf.data();
          const Vec::Buffer whole = buf.share();
          for (size_t j : adjacent) {
            room[j] = next;
            out[members[j]] = Vec::scalar(v.type(), counts[j], Vec::Buffer(whole, next));
            next += counts[j];
          }
        }
        for (size_t j = 0; j < members.size(); ++j) {
          if (room[j] != nullptr) continue;
          if (counts[j] == v.size()) {
            out[members[j]] = v;
            continue;
          }
          Buf<T> own(counts[j]);
          room[j] = own.data();
          out[members[j]] = Vec::scalar(v.type(), counts[j], own.share());
        }
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
  if (partitions_on()) run_partitions(s, flags, ins, operand, out);
  std::map<VarId, std::vector<size_t>> counts;  // the count members of each segments operand
  for (size_t a = 0; a < g.members.size(); ++a) {
    const FilterGroup::Member& m = g.members[a];
    const Vec& f = FilterGroup::flags_of(m, flags, ins);
    const VarId other_var = s.uses.at(g.inputs + a);
    if (m.kind == FilterGroup::Kind::Count) {
      counts[other_var].push_back(a);
      continue;
    }
    if (out[a].type() != nullptr) continue;  // packed by run_partitions
    const Vec& other = operand(other_var);
    NDP_ASSERT(other.size() == f.size(), "filter group: pack with flags of another length");
    out[a] = pack(other, f);
  }
  // The counts over one operand's segments, a pass over them for up to kMostCounts at a time.
  for (const auto& [var, members] : counts) {
    const Vec& other = operand(var);
    const LengthSegs segments = segments_of(other);
    const int64_t segs = other.size();
    for (size_t first = 0; first < members.size(); first += runtime::kMostCounts) {
      const size_t last = std::min(members.size(), first + runtime::kMostCounts);
      std::vector<std::span<const bool>> fs;
      std::vector<std::span<int64_t>> to;
      for (size_t i = first; i < last; ++i) {
        const size_t a = members[i];
        const Vec& f = FilterGroup::flags_of(g.members[a], flags, ins);
        NDP_ASSERT(segments.view.total() == f.size(), "filter group: count lengths do not cut the flags");
        Buf<int64_t> r(segs);
        fs.push_back(f.values<bool>());
        to.emplace_back(r.data(), static_cast<size_t>(segs));
        out[a] = Vec::scalar(result_type(s.outs.at(a)), segs, r.share());
      }
      check_rt(runtime::pack_lengths_many(fs, segments.view, to), "pack_lengths");
    }
  }
  return out;
}

}  // namespace ndp::exec::cpu
