// Running append chains on the cpu backend (Note [Append chains] in flatten/flat_ir.h).
#include "exec/cpu/append_chains.h"

#include <algorithm>

#include <vector>

#include "exec/host/parallel_loops.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives

using flatten::AppendChain;
using flatten::Stmt;
using flatten::VarId;

Vec run_append_chain(const Stmt& s, const std::function<const Vec&(VarId)>& operand, const lang::Type* result) {
  NDP_ASSERT(s.chain != nullptr, "append chain without its sources");
  const AppendChain& c = *s.chain;
  auto use = [&](int64_t i) -> const Vec& { return operand(s.uses.at(static_cast<size_t>(i))); };
  // The elts' checks first, in statement order: the error the statements would raise.
  for (uint32_t k : c.checks) {
    const AppendChain::Source& e = c.sources.at(k);
    const Vec& v = use(e.seqs);
    const int64_t* idx = use(e.index).data<int64_t>();
    const int64_t* len = v.lengths();
    if (int64_t j = first_failing(v.size(), [&](int64_t j) { return idx[j] < 0 || idx[j] >= len[j]; }); j >= 0)
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds, idx[j], len[j]), e.span};
  }
  // Each source as (segment lengths, offsets) over a flat element buffer, with a map from
  // instance to segment: the instance itself, or for an elt the chosen inner sequence.
  struct Part {
    const int64_t* len;
    const int64_t* off;
    const void* data;
    const int64_t* outer_off = nullptr;  // elt: the nested vector's offsets
    const int64_t* index = nullptr;      // elt: the chosen sequence per instance
    int64_t segment(int64_t i) const { return outer_off ? outer_off[i] + index[i] : i; }
  };
  std::vector<Part> parts;
  int64_t n = -1;
  for (const AppendChain::Source& src : c.sources) {
    const Vec& v = use(src.seqs);
    NDP_ASSERT(n < 0 || v.size() == n, "append chain over vectors of different lengths");
    n = v.size();
    if (src.is_elt()) {
      const Vec& inner = v.elems();
      parts.push_back(Part{inner.lengths(), inner.offsets(), inner.elems().raw_data(), v.offsets(),
                           use(src.index).data<int64_t>()});
    } else {
      parts.push_back(Part{v.lengths(), v.offsets(), v.elems().raw_data()});
    }
  }
  // Sources all regular (their chosen sequences all of one length each): the result is regular,
  // with no lengths to sum or scan.
  bool regular = true;
  int64_t regular_sum = 0;
  for (const AppendChain::Source& src : c.sources) {
    const Vec& v = src.is_elt() ? use(src.seqs).elems() : use(src.seqs);
    regular = regular && v.is_regular();
    if (regular) regular_sum += v.regular_length();
  }
  std::shared_ptr<const void> lengths;
  if (regular) {
    lengths = uniform_buffer(regular_sum, n);
  } else {
    Buf<int64_t> len(n);
    int64_t* l = len.data();
    parallel_for(n, [&](int64_t i) {
      int64_t sum = 0;
      for (const Part& p : parts) sum += p.len[p.segment(i)];
      l[i] = sum;
    });
    lengths = len.share();
  }
  auto off = offsets_for(lengths, n);
  const int64_t* o = off.get();
  Vec elems = with_scalar(result->a->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> out(o[n]);
    T* d = out.data();
    // Instance i's output [from, to) of its run: the parts' elements that fall in it.
    parallel_run_pieces(n, o, [&](int64_t i, int64_t from, int64_t to) {
      int64_t at = 0;  // where the part starts in the run
      for (const Part& p : parts) {
        const int64_t k = p.segment(i), m = p.len[k];
        const int64_t b = std::max(from, at), e = std::min(to, at + m);
        if (b < e) copy_run(d + o[i] + b, static_cast<const T*>(p.data) + p.off[k] + (b - at), e - b);
        at += m;
        if (at >= to) break;
      }
    });
    return Vec::scalar(result->a, o[n], out.share());
  });
  return Vec::seq(result, n, std::move(lengths), std::move(off), std::move(elems));
}

}  // namespace ndp::exec::cpu
