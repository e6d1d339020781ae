// Running append chains on the GPU (Note [Append chains on the GPU] in append_chains.h).
#include "exec/cuda/append_chains.h"

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "exec/cuda/device_vec_ops.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"

namespace ndp::exec::cuda {

using flatten::VarId;
using runtime::gpu::Primitives;

namespace {

/// One part of every instance: `length[k]` elements of `data` from `start[k]` (the buffers keep
/// what the pointers point into alive).
struct Part {
  DBuf data, start, length;
};

/// The parts, appended per instance: a sequence of n instances of type `result`; `total`, their
/// elements in all where the host knows it (else it is read back).
DVec append_parts(Gpu& g, std::span<const Part> parts, int64_t n, const lang::Type* result, std::optional<int64_t> total_known) {
  Primitives::AppendParts p;
  p.count = static_cast<int32_t>(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    p.data[i] = parts[i].data ? parts[i].data->pointer() : 0;
    p.start[i] = parts[i].start->pointer();
    p.length[i] = parts[i].length->pointer();
  }
  DBuf len = g.alloc(n * 8);
  g.check(g.prims().append_parts_lengths(p, n, len->pointer()));
  auto [off, total] = total_known ? segments_of_valid_lengths(g, n, len, *total_known) : segments_of_valid_lengths(g, n, len);
  DBuf out = g.alloc(total * elem_bytes(result->a));
  g.check(g.prims().append_parts(elem_type(result->a), p, runtime::gpu::DSegs::irregular(n, total, off->pointer()),
                                 out->pointer()));
  return DVec::seq(result, n, std::move(len), std::move(off), DVec::scalar(result->a, total, std::move(out)));
}

/// A whole sequence of flat elements as a part.
Part whole(const DVec& v) { return Part{v.elems().buffer(), v.offsets_buffer(), v.buffer()}; }

/// Whether elt of index vector `index` is in range in every instance of v: a known index, and v
/// regular (Note [Known values] in device_vec.cpp) with more sequences than it.
bool elt_in_range(const DVec& v, const DVec& index) {
  std::optional<int64_t> k = v.regular_length();
  std::optional<uint64_t> i = index.known_bits();
  return k && i && static_cast<int64_t>(*i) >= 0 && static_cast<int64_t>(*i) < *k;
}

}  // namespace

DVec run_append_chain(Gpu& g, const flatten::Stmt& s, const std::function<const DVec&(VarId)>& operand,
                      const lang::Type* result) {
  NDP_ASSERT(s.chain != nullptr, "append chain without its sources");
  const flatten::AppendChain& chain = *s.chain;
  auto use = [&](int64_t i) -> const DVec& { return operand(s.uses.at(static_cast<size_t>(i))); };
  // The elts' sequences first, in statement order, so the first failure is the one the
  // statements would raise.
  std::map<uint32_t, Part> chosen;  // by source
  for (uint32_t k : chain.checks) {
    const flatten::AppendChain::Source& e = chain.sources.at(k);
    const DVec& v = use(e.seqs);
    const DVec& inner = v.elems();
    const int64_t n = v.size();
    DBuf start = g.alloc(n * 8), length = g.alloc(n * 8);
    if (elt_in_range(v, use(e.index))) {
      g.check(g.prims().elt_segments_in_range(v.offsets(), use(e.index).data(), inner.offsets(), n, start->pointer(),
                                              length->pointer()));
    } else if (int64_t j = g.check(g.prims().elt_segments(v.offsets(), use(e.index).data(), inner.offsets(), n,
                                                          start->pointer(), length->pointer()));
               j >= 0)
      throw lang::eval::EvalError{
          lang::message(lang::RuntimeErrorId::SeqRefBounds, g.read_int(use(e.index).data(), j), g.read_int(v.lengths(), j)),
          e.span};
    chosen[k] = Part{inner.elems().buffer(), std::move(start), std::move(length)};
  }
  std::vector<Part> parts;
  int64_t n = -1;
  // The elements in all, where the host knows them: whole sequences' totals, and elts that take
  // every sequence of a regular nested vector once (quicksort's sorted[0] ++ equal ++ sorted[1])
  // its elements' total.
  std::optional<int64_t> total = 0;
  std::map<VarId, std::vector<int64_t>> elt_indices;  // by nested vector: the known indices taken
  for (uint32_t k = 0; k < chain.sources.size(); ++k) {
    const flatten::AppendChain::Source& src = chain.sources[k];
    const DVec& v = use(src.seqs);
    NDP_ASSERT(n < 0 || v.size() == n, "append chain over vectors of different lengths");
    n = v.size();
    parts.push_back(src.is_elt() ? chosen.at(k) : whole(v));
    if (!src.is_elt()) {
      if (total) *total += v.total();
    } else if (elt_in_range(v, use(src.index))) {
      elt_indices[s.uses.at(src.seqs)].push_back(static_cast<int64_t>(*use(src.index).known_bits()));
    } else {
      total.reset();
    }
  }
  for (auto& [seqs, taken] : elt_indices) {
    const DVec& v = operand(seqs);
    std::sort(taken.begin(), taken.end());
    bool each_once = static_cast<int64_t>(taken.size()) == *v.regular_length();
    for (size_t i = 0; i < taken.size(); ++i) each_once = each_once && taken[i] == static_cast<int64_t>(i);
    if (!each_once) total.reset();
    if (total) *total += v.elems().total();
  }
  // More parts than a kernel takes: the first ones become one part.
  while (parts.size() > static_cast<size_t>(Primitives::kMaxAppendParts)) {
    DVec head = append_parts(g, std::span<const Part>(parts.data(), Primitives::kMaxAppendParts), n, result, std::nullopt);
    parts.erase(parts.begin(), parts.begin() + Primitives::kMaxAppendParts);
    parts.insert(parts.begin(), whole(head));
  }
  return append_parts(g, parts, n, result, total);
}

}  // namespace ndp::exec::cuda
