// Running filter groups on the GPU (Note [Filter groups on the GPU] in filter_groups.h).
#include "exec/cuda/filter_groups.h"

#include <algorithm>
#include <optional>

#include "exec/common/switches.h"
#include "exec/cuda/device_vec_ops.h"
#include "lang/diagnostics.h"

namespace ndp::exec::cuda {

using flatten::FilterGroup;
using flatten::VarId;

namespace {

/// NDP_PARTITIONS=0 runs filter groups as separate counts and packs (for measuring).
bool partitions_on() {
  static const bool on = !switched_off("NDP_PARTITIONS");
  return on;
}

/// The flat vectors v is made of (a pair's and a datatype's components, in order); false where
/// it holds sequences.
bool flat_leaves(const DVec& v, std::vector<const DVec*>& out) {
  switch (v.kind()) {
    case lang::TypeKind::Pair: return flat_leaves(v.first(), out) && flat_leaves(v.second(), out);
    case lang::TypeKind::Data: return flat_leaves(v.fields(), out);
    default:
      if (!host::is_flat_scalar(v.type())) return false;
      out.push_back(&v);
      return true;
  }
}

/// A vector shaped as `like` with n instances, its flat leaves the next buffers of `bufs`.
DVec rebuilt(const DVec& like, int64_t n, std::vector<DBuf>::iterator& bufs) {
  switch (like.kind()) {
    case lang::TypeKind::Pair: {
      DVec a = rebuilt(like.first(), n, bufs);
      return DVec::pair(like.type(), std::move(a), rebuilt(like.second(), n, bufs));
    }
    case lang::TypeKind::Data: return DVec::data(like.type(), rebuilt(like.fields(), n, bufs));
    default: return DVec::scalar(like.type(), n, std::move(*bufs++));
  }
}

/// The group as one partition (Note [Partitions] in runtime/gpu/partition.h), or nothing where
/// it is not one: more than PartitionFlags::kMost predicates or PartitionColumns::kMost
/// columns, packs of sequences, counts over different segments, or no pack at all (counts
/// alone need no read-back as they are).
std::optional<std::vector<DVec>> run_as_partition(Gpu& g, const flatten::Stmt& s, const std::vector<DVec>& flags,
                                                  const std::vector<DVec>& ins,
                                                  const std::function<const DVec&(VarId)>& operand,
                                                  const std::function<const lang::Type*(VarId)>& result_type) {
  const FilterGroup& group = *s.filters;
  auto other = [&](size_t a) -> const DVec& { return operand(s.uses.at(group.inputs + a)); };
  std::vector<const DVec*> predicates;  // distinct, in order of first use
  std::vector<int> predicate_of(group.members.size());
  const DVec* lengths = nullptr;  // the counts' segments
  bool packs = false;
  for (size_t a = 0; a < group.members.size(); ++a) {
    const FilterGroup::Member& m = group.members[a];
    const DVec* f = &FilterGroup::flags_of(m, flags, ins);
    auto it = std::find(predicates.begin(), predicates.end(), f);
    predicate_of[a] = static_cast<int>(it - predicates.begin());
    if (it == predicates.end()) predicates.push_back(f);
    if (m.kind == FilterGroup::Kind::Pack) {
      packs = true;
    } else if (lengths == nullptr) {
      lengths = &other(a);
    } else if (other(a).buffer() != lengths->buffer() || other(a).size() != lengths->size()) {
      return std::nullopt;
    }
  }
  if (!packs || predicates.size() > static_cast<size_t>(runtime::gpu::PartitionFlags::kMost)) return std::nullopt;
  const int64_t n = predicates.front()->size();
  runtime::gpu::PartitionFlags pf;
  pf.count = static_cast<int>(predicates.size());
  for (int k = 0; k < pf.count; ++k) {
    if (predicates[k]->size() != n) return std::nullopt;
    pf.of[k] = reinterpret_cast<const unsigned char*>(predicates[k]->data());
  }
  // Each pack's flat leaves are its columns.
  std::vector<std::vector<const DVec*>> leaves(group.members.size());
  size_t columns = 0;
  for (size_t a = 0; a < group.members.size(); ++a) {
    if (group.members[a].kind != FilterGroup::Kind::Pack) continue;
    if (!flat_leaves(other(a), leaves[a]) || other(a).size() != n) return std::nullopt;
    // Components gathered through positions not yet made pack those positions, 8 bytes an
    // element for all of them; the partition would make every component first, reading and
    // writing each (quickhull's points left of a line: two gathers of 465 MB and a 240 µs
    // scatter at its first level, against 58 + 76 µs for the positions' pack; Nsight Compute,
    // H200). One such component moves as many bytes either way, and the partition keeps it.
    if (std::count_if(leaves[a].begin(), leaves[a].end(), [](const DVec* l) { return packs_positions(*l); }) > 1)
      return std::nullopt;
    columns += leaves[a].size();
  }
  if (columns > static_cast<size_t>(runtime::gpu::PartitionColumns::kMost)) return std::nullopt;

  // Flags counted before (a loop's `if` counts its own) need no read-back; where each keeps all
  // of its vectors or nothing (a recursion's one instance), the packs launch nothing at all.
  const bool known = std::all_of(predicates.begin(), predicates.end(),
                                 [](const DVec* f) { return f->known_bits() || known_count_true(*f); });
  if (known && std::all_of(predicates.begin(), predicates.end(), [&](const DVec* f) {
        const int64_t c = count_true(g, *f);
        return c == 0 || c == n;
      }))
    return std::nullopt;
  DBuf bases = g.alloc(runtime::gpu::partition_bases_words(n, pf.count) * 8);
  int64_t totals[runtime::gpu::PartitionFlags::kMost] = {};
  g.check(g.prims().partition_totals(pf, n, bases->pointer(), known ? nullptr : totals));
  for (int k = 0; k < pf.count; ++k) {
    if (known) totals[k] = count_true(g, *predicates[k]);
    else remember_count_true(*predicates[k], totals[k]);
  }

  std::vector<DVec> out(group.members.size());
  runtime::gpu::PartitionColumns pc;
  struct Column {
    int predicate, bytes;
    CUdeviceptr src, dst;
  };
  std::vector<Column> columns_of;
  std::vector<std::vector<DBuf>> packed(group.members.size());
  for (size_t a = 0; a < group.members.size(); ++a) {
    if (group.members[a].kind != FilterGroup::Kind::Pack) continue;
    const int k = predicate_of[a];
    if (totals[k] == n) continue;  // all kept: the values as they are, below
    for (const DVec* leaf : leaves[a]) {
      const int bytes = elem_bytes(leaf->type());
      packed[a].push_back(g.alloc(totals[k] * bytes));
      if (totals[k] > 0) columns_of.push_back(Column{k, bytes, leaf->data(), packed[a].back()->pointer()});
    }
  }
  // Columns of one source next to each other: the scatter reads a source once for all of them.
  std::stable_sort(columns_of.begin(), columns_of.end(), [](const Column& x, const Column& y) { return x.src < y.src; });
  for (const Column& col : columns_of) {
    pc.predicate[pc.count] = col.predicate;
    pc.bytes[pc.count] = col.bytes;
    pc.src[pc.count] = reinterpret_cast<const void*>(col.src);
    pc.dst[pc.count] = reinterpret_cast<void*>(col.dst);
    ++pc.count;
  }
  // The counts' segments: each counted predicate's offsets and counts.
  runtime::gpu::DSegs segs;
  DBuf keep;
  std::vector<DBuf> offsets(pf.count), counts(pf.count);
  runtime::gpu::PartitionSegments ps;
  if (lengths != nullptr) {
    segs = segments_of_lengths(g, *lengths, n, keep);
    for (size_t a = 0; a < group.members.size(); ++a) {
      const int k = predicate_of[a];
      if (group.members[a].kind != FilterGroup::Kind::Count || offsets[k]) continue;
      offsets[k] = g.alloc((segs.count + 1) * 8);
      counts[k] = g.alloc(segs.count * 8);
      ps.offsets[k] = reinterpret_cast<int64_t*>(offsets[k]->pointer());
      ps.counts[k] = reinterpret_cast<int64_t*>(counts[k]->pointer());
    }
  }
  g.check(g.prims().partition_scatter(pf, pc, n, bases->pointer(), segs, ps));
  for (size_t a = 0; a < group.members.size(); ++a) {
    const int k = predicate_of[a];
    if (group.members[a].kind == FilterGroup::Kind::Pack) {
      auto it = packed[a].begin();
      // All kept: the values as they are (buffers are never written).
      out[a] = totals[k] == n ? other(a) : rebuilt(other(a), totals[k], it);
    } else {
      remember_segments(counts[k], offsets[k], segs.count, totals[k]);
      out[a] = DVec::scalar(result_type(s.outs.at(a)), segs.count, counts[k]).with_scanned_offsets(offsets[k]);
    }
  }
  return out;
}

}  // namespace

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
  if (partitions_on())
    if (std::optional<std::vector<DVec>> out = run_as_partition(g, s, flags, ins, operand, result_type)) return *out;
  // Whether a member packs by this predicate (one whose values `moving` says so, where given).
  auto packs_predicate = [&](int32_t predicate, bool (*moving)(const DVec&) = nullptr) {
    for (size_t b = 0; b < group.members.size(); ++b)
      if (group.members[b].kind == FilterGroup::Kind::Pack && group.members[b].predicate == predicate &&
          (moving == nullptr || moving(other(b))))
        return true;
    return false;
  };
  // 2. The counts, before the packs: a pack of the same predicate keeps their sum. The sums of
  // the counts come back with one wait (quicksort's three filters: one, not three); those made
  // from a pack's positions with another.
  std::vector<DVec> out(group.members.size());
  std::vector<DBuf> summed;        // counts whose sum a pack needs, all of n instances
  std::vector<const DVec*> whose;  // the flags each counts
  std::vector<size_t> member;      // and the member whose counts they are
  // Counts from the positions a pack makes anyway (Note [Counts from the kept positions] in
  // runtime/gpu/pack.cpp): the flags, their positions, the member and its counts' offsets.
  // The positions take room for every flag, as the number kept is not known before the pass.
  struct Positioned {
    const DVec* flags;
    DBuf positions;
    size_t member;
    DBuf offsets;
  };
  std::vector<Positioned> positioned;
  int64_t n = 0;
  bool counted = false;
  for (size_t a = 0; a < group.members.size(); ++a) {
    const FilterGroup::Member& m = group.members[a];
    if (m.kind != FilterGroup::Kind::Count) continue;
    const DVec& f = FilterGroup::flags_of(m, flags, ins);
    const DVec& lengths = other(a);
    NDP_ASSERT(!counted || n == lengths.size(), "a filter group's counts over different instances");
    counted = true;
    n = lengths.size();
    DBuf off;
    DBuf counts = g.alloc(n * 8);
    const runtime::gpu::DSegs segs = segments_of_lengths(g, lengths, f.size(), off);
    if (f.size() > 0 && !known_count_true(f) && packs_predicate(m.predicate, moves_by_positions) &&
        std::none_of(positioned.begin(), positioned.end(), [&](const Positioned& p) { return p.flags == &f; })) {
      DBuf positions = g.alloc(f.size() * 8), offsets = g.alloc((n + 1) * 8);
      g.check(g.prims().true_positions_counted(f.data(), segs, positions->pointer(), counts->pointer(),
                                               offsets->pointer()));
      positioned.push_back(Positioned{&f, std::move(positions), a, std::move(offsets)});
      out[a] = DVec::scalar(result_type(s.outs.at(a)), n, std::move(counts));
      continue;
    }
    g.check(g.prims().pack_lengths(f.data(), segs, counts->pointer(), nullptr));
    if (packs_predicate(m.predicate) && !known_count_true(f) &&
        std::find(whose.begin(), whose.end(), &f) == whose.end()) {
      summed.push_back(counts);
      whose.push_back(&f);
      member.push_back(a);
    }
    out[a] = DVec::scalar(result_type(s.outs.at(a)), n, std::move(counts));
  }
  if (!positioned.empty()) {  // the numbers kept, with one wait
    std::vector<DBuf> offsets;
    for (const Positioned& p : positioned) offsets.push_back(p.offsets);
    const std::vector<int64_t> totals = read_totals(g, offsets, n);
    for (size_t i = 0; i < positioned.size(); ++i) {
      const Positioned& p = positioned[i];
      remember_count_true(*p.flags, totals[i]);
      remember_segments(out[p.member].buffer(), p.offsets, n, totals[i]);
      out[p.member] = out[p.member].with_scanned_offsets(p.offsets);
    }
  }
  std::vector<KnownSegments> sums = segments_of_valid_lengths(g, n, summed);
  for (size_t i = 0; i < sums.size(); ++i) {
    remember_count_true(*whose[i], sums[i].total);
    // The nest of these counts and the pack takes the scan's offsets (no scan again).
    out[member[i]] = out[member[i]].with_scanned_offsets(std::move(sums[i].offsets));
  }
  // 3. The packs, those by the same flags together: one vector of positions for them all and
  // their gathers launched together (pack_all), where each member made its own.
  std::vector<bool> packed(group.members.size(), false);
  for (size_t a = 0; a < group.members.size(); ++a) {
    const FilterGroup::Member& m = group.members[a];
    if (m.kind != FilterGroup::Kind::Pack || packed[a]) continue;
    const DVec& f = FilterGroup::flags_of(m, flags, ins);
    std::vector<size_t> same;
    std::vector<const DVec*> values;
    for (size_t b = a; b < group.members.size(); ++b) {
      const FilterGroup::Member& mb = group.members[b];
      if (mb.kind == FilterGroup::Kind::Pack && !packed[b] && &FilterGroup::flags_of(mb, flags, ins) == &f) {
        packed[b] = true;
        same.push_back(b);
        values.push_back(&other(b));
      }
    }
    DBuf made;
    for (Positioned& p : positioned)
      if (p.flags == &f) made = std::move(p.positions);
    std::vector<DVec> kept = pack_all(g, values, f, std::move(made));
    for (size_t k = 0; k < same.size(); ++k) out[same[k]] = std::move(kept[k]);
  }
  return out;
}

}  // namespace ndp::exec::cuda
