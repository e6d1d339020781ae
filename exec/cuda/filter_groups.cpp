// Running filter groups on the GPU (Note [Filter groups on the GPU] in filter_groups.h).
#include "exec/cuda/filter_groups.h"

#include <algorithm>

#include "exec/cuda/device_vec_ops.h"
#include "lang/diagnostics.h"

namespace ndp::exec::cuda {

using flatten::FilterGroup;
using flatten::VarId;

std::vector<DVec> run_filter_group(Gpu& g, GpuKernels& kernels, const flatten::Stmt& s,
                                   const std::function<const DVec&(VarId)>& operand,
                                   const std::function<const lang::Type*(VarId)>& result_type) {
  NDP_ASSERT(s.filters != nullptr, "filter group without its members");
  const FilterGroup& group = *s.filters;
  std::vector<DVec> ins;
  for (VarId v : flatten::kernel_inputs(s)) ins.push_back(operand(v));
  // Member a's lengths (a count) or values (a pack).
  auto other = [&](size_t a) -> const DVec& { return operand(s.uses.at(group.inputs + a)); };
  // 1. Every distinct predicate, once, as a byte per element.
  std::vector<DVec> flags;
  if (s.kernel) flags = kernels.run(*s.kernel, ins, s.kernel->output_types());
  auto packs_predicate = [&](int32_t predicate) {
    for (const FilterGroup::Member& m : group.members)
      if (m.kind == FilterGroup::Kind::Pack && m.predicate == predicate) return true;
    return false;
  };
  // 2. The counts, before the packs: a pack of the same predicate keeps their sum. The sums of
  // all the counts come back with one wait (quicksort's three filters: one, not three).
  std::vector<DVec> out(group.members.size());
  std::vector<DBuf> summed;        // counts whose sum a pack needs, all of n instances
  std::vector<const DVec*> whose;  // the flags each counts
  std::vector<size_t> member;      // and the member whose counts they are
  int64_t n = 0;
  for (size_t a = 0; a < group.members.size(); ++a) {
    const FilterGroup::Member& m = group.members[a];
    if (m.kind != FilterGroup::Kind::Count) continue;
    const DVec& f = FilterGroup::flags_of(m, flags, ins);
    const DVec& lengths = other(a);
    NDP_ASSERT(summed.empty() || n == lengths.size(), "a filter group's counts over different instances");
    n = lengths.size();
    DBuf off;
    DBuf counts = g.alloc(n * 8);
    g.check(g.prims().pack_lengths(f.data(), segments_of_lengths(g, lengths, f.size(), off), counts->pointer(), nullptr));
    if (packs_predicate(m.predicate) && !known_count_true(f) &&
        std::find(whose.begin(), whose.end(), &f) == whose.end()) {
      summed.push_back(counts);
      whose.push_back(&f);
      member.push_back(a);
    }
    out[a] = DVec::scalar(result_type(s.outs.at(a)), n, std::move(counts));
  }
  std::vector<KnownSegments> sums = segments_of_valid_lengths(g, n, summed);
  for (size_t i = 0; i < sums.size(); ++i) {
    remember_count_true(*whose[i], sums[i].total);
    // The nest of these counts and the pack takes the scan's offsets (no scan again).
    out[member[i]] = out[member[i]].with_scanned_offsets(std::move(sums[i].offsets));
  }
  // 3. The packs.
  for (size_t a = 0; a < group.members.size(); ++a) {
    const FilterGroup::Member& m = group.members[a];
    if (m.kind != FilterGroup::Kind::Pack) continue;
    out[a] = pack(g, other(a), FilterGroup::flags_of(m, flags, ins));
  }
  return out;
}

}  // namespace ndp::exec::cuda
