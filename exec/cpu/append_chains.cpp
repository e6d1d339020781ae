// Finding append chains (Note [Append chains] in append_chains.h) and running them.
#include "exec/cpu/append_chains.h"

#include <algorithm>
#include <map>

#include "exec/host/parallel_loops.h"
#include "flatten/passes/ir_walk.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


using flat::Block;
using flat::Op;
using flat::Stmt;
using flat::VarId;
using lang::core::PrimId;

namespace {

bool is_prim(const Stmt& s, PrimId p) { return s.op == Op::Prim && s.prim == p; }

/// Statements that cannot raise an error, so a chain may be computed after them.
bool cannot_fail(const Stmt& s) {
  switch (s.op) {
    case Op::Lit: case Op::Const: case Op::Length: case Op::Tuple: case Op::First: case Op::Second:
    case Op::Lengths: case Op::Elements: case Op::Nest: case Op::Retype: case Op::Iota: case Op::Kernel:
    case Op::Nothing:
      return true;
    default: return false;
  }
}

}  // namespace

AppendPlan::AppendPlan(const flat::Program& p) {
  for (const flat::Function& fn : p.functions) {
    plan_block(fn, fn.body, flat::use_counts(fn));
  }
}

void AppendPlan::plan_block(const flat::Function& fn, const Block& b, const std::vector<uint32_t>& uses) {
  std::map<VarId, size_t> defined_at;
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    const Stmt& s = b.stmts[i];
    flat::for_each_sub_block(s, [&](const Block& inner) { plan_block(fn, inner, uses); });
    if (s.op != Op::CheckLengths) defined_at[s.dst] = i;
  }
  // The last `++` of a chain first, so that it takes in the `++`s before it.
  for (size_t r = b.stmts.size(); r-- > 0;) {
    const Stmt& root = b.stmts[r];
    const lang::Type* t = fn.vars.at(root.dst).type;
    if (!is_prim(root, PrimId::Append) || roles_.count(&root) || t == nullptr || t->kind != lang::TypeKind::Seq ||
        !is_flat_scalar(t->a))
      continue;
    auto chain = std::make_unique<AppendChain>();
    std::vector<size_t> skipped;
    // Expands operand v of the chain: a single-use `++` or elt of this block before the root
    // is taken apart, anything else is a whole-sequence source.
    std::function<void(VarId)> expand = [&](VarId v) {
      auto d = defined_at.find(v);
      if (d != defined_at.end() && d->second < r && uses[v] == 1 && !roles_.count(&b.stmts[d->second])) {
        const Stmt& def = b.stmts[d->second];
        if (is_prim(def, PrimId::Append)) {
          skipped.push_back(d->second);
          expand(def.uses[0]);
          expand(def.uses[1]);
          return;
        }
        if (is_prim(def, PrimId::Elt)) {
          skipped.push_back(d->second);
          chain->sources.push_back(AppendChain::Source{def.uses[0], &def});
          return;
        }
      }
      chain->sources.push_back(AppendChain::Source{v, nullptr});
    };
    expand(root.uses[0]);
    expand(root.uses[1]);
    if (skipped.empty()) continue;
    size_t first = *std::min_element(skipped.begin(), skipped.end());
    bool safe = true;
    for (size_t i = first; i < r && safe; ++i)
      safe = cannot_fail(b.stmts[i]) || std::find(skipped.begin(), skipped.end(), i) != skipped.end();
    if (!safe) continue;
    std::sort(skipped.begin(), skipped.end());
    for (size_t i : skipped) {
      if (is_prim(b.stmts[i], PrimId::Elt)) chain->elts.push_back(&b.stmts[i]);
      roles_[&b.stmts[i]] = Role{nullptr, true};
    }
    roles_[&root] = Role{chain.get(), false};
    chains_.push_back(std::move(chain));
  }
}

Vec run_append_chain(const AppendChain& c, const std::function<const Vec&(VarId)>& operand, const lang::Type* result) {
  // The elts' checks first, in statement order: the error the statements would raise.
  for (const Stmt* e : c.elts) {
    const Vec& v = operand(e->uses[0]);
    const int64_t* idx = operand(e->uses[1]).data<int64_t>();
    const int64_t* len = v.lengths();
    if (first_failing(v.size(), [&](int64_t k) { return idx[k] < 0 || idx[k] >= len[k]; }) >= 0)
      throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::SeqRefBounds), e->span};
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
  for (const AppendChain::Source& s : c.sources) {
    const Vec& v = operand(s.seqs);
    NDP_ASSERT(n < 0 || v.size() == n, "append chain over vectors of different lengths");
    n = v.size();
    if (s.elt) {
      const Vec& inner = v.elems();
      parts.push_back(Part{inner.lengths(), inner.offsets(), inner.elems().raw_data(), v.offsets(),
                           operand(s.elt->uses[1]).data<int64_t>()});
    } else {
      parts.push_back(Part{v.lengths(), v.offsets(), v.elems().raw_data()});
    }
  }
  // Sources all regular (their chosen sequences all of one length each): the result is regular,
  // with no lengths to sum or scan.
  bool regular = true;
  int64_t regular_sum = 0;
  for (const AppendChain::Source& s : c.sources) {
    const Vec& v = s.elt ? operand(s.seqs).elems() : operand(s.seqs);
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
    parallel_runs(n, o, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        int64_t at = o[i];
        for (const Part& p : parts) {
          int64_t k = p.segment(i), m = p.len[k];
          copy_run(d + at, static_cast<const T*>(p.data) + p.off[k], m);
          at += m;
        }
      }
    });
    return Vec::scalar(result->a, o[n], out.share());
  });
  return Vec::seq(result, n, std::move(lengths), std::move(off), std::move(elems));
}

}  // namespace ndp::exec::cpu
