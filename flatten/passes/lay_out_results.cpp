// Finding the recursion loops whose results are laid out before their calls (see
// lay_out_results.h, Note [Results laid out before the calls] in flatten/flat_ir.h).
#include "flatten/passes/lay_out_results.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

using Piece = LaidOut::Piece;

bool is_rows_of_scalars(const lang::Type* t) { return t != nullptr && t->kind == lang::TypeKind::Seq && is_flat_scalar(t->a); }

/// A statement that cannot fail, nor anything in its branches.
bool total(const Function& fn, const Stmt& s) {
  if (s.op == Op::IfNonEmpty) {
    for (const Block* b : {s.then_block.get(), s.else_block.get()})
      for (const Stmt& t : b->stmts)
        if (!total(fn, t)) return false;
    return true;
  }
  return pure_and_total(fn, s);
}

bool reads_any(const Stmt& s, const std::set<VarId>& vars) {
  std::set<VarId> read;
  collect_uses(s, read);
  return std::any_of(read.begin(), read.end(), [&](VarId v) { return vars.count(v) > 0; });
}

/// The combine's pieces, or nothing where it does more than concatenate; sets the nest's
/// lengths and the statements that may run before the calls' results exist.
std::optional<std::vector<Piece>> combine_pieces(const Function& fn, const RecursionLoop& l, LaidOut& out) {
  const std::vector<Stmt>& stmts = l.combine.stmts;
  if (stmts.empty() || stmts.back().dst != l.combine.result) return std::nullopt;
  std::optional<VarId> nest;
  std::map<VarId, int64_t> ints;  // the loop's int literals (cse shares them between its parts)
  for (const Block* b : {&l.prefix, &l.step})
    for (const Stmt& s : b->stmts)
      if (s.op == Op::Lit && s.lit.kind() == lang::ValueKind::Int) ints[s.dst] = s.lit.as_int();
  std::set<VarId> late{l.call_result}, early;  // variables defined from the calls' results, and not
  for (uint32_t i = 0; i + 1 < stmts.size(); ++i) {
    const Stmt& s = stmts[i];
    if (s.op == Op::Lit && s.lit.kind() == lang::ValueKind::Int) ints[s.dst] = s.lit.as_int();
    if (!reads_any(s, late) && total(fn, s)) {
      out.early_combine.push_back(i);
      collect_defs(s, early);
    } else if (s.op == Op::Nest && !nest && s.uses.size() == 2 && s.uses[1] == l.call_result) {
      nest = s.dst;
      out.child_counts = s.uses[0];
      late.insert(s.dst);
    } else {
      return std::nullopt;
    }
  }
  if (!nest || out.child_counts == l.call_result || early.count(out.child_counts)) return std::nullopt;
  const Stmt& root = stmts.back();
  if (root.op != Op::AppendChain || root.chain == nullptr) return std::nullopt;
  std::vector<Piece> pieces;
  std::vector<bool> taken;
  for (const AppendChain::Source& src : root.chain->sources) {
    const VarId seqs = root.uses.at(src.seqs);
    if (src.is_elt()) {
      auto k = ints.find(root.uses.at(static_cast<size_t>(src.index)));
      // (A seqlit of more than 1024 calls is not worth a table of that many children.)
      if (seqs != *nest || k == ints.end() || k->second < 0 || k->second > 1024) return std::nullopt;
      const auto child = static_cast<uint32_t>(k->second);
      if (taken.size() <= child) taken.resize(child + 1, false);
      if (taken[child]) return std::nullopt;  // a child's result twice
      taken[child] = true;
      pieces.push_back(Piece{Piece::Kind::Child, child, 0});
    } else {
      // Rows the level computes before its calls, of the result's element type.
      if (late.count(seqs) || fn.vars.at(seqs).type != fn.vars.at(l.combine.result).type) return std::nullopt;
      pieces.push_back(Piece{Piece::Kind::Rows, 0, seqs});
    }
  }
  // Every child once: children 0 .. K-1.
  if (taken.empty() || std::find(taken.begin(), taken.end(), false) != taken.end()) return std::nullopt;
  return pieces;
}

std::optional<LaidOut> plan(const Function& fn, const RecursionLoop& l) {
  // The finish: `merge(flags, base, branch)` or `merge(flags, branch, base)`, after statements
  // that compute the base results from the prefix's values.
  const std::vector<Stmt>& finish = l.finish.stmts;
  if (finish.empty()) return std::nullopt;
  const Stmt& m = finish.back();
  if (m.op != Op::Merge || m.dst != l.finish.result || m.uses.size() != 3 || !is_rows_of_scalars(fn.vars.at(m.dst).type))
    return std::nullopt;
  LaidOut out;
  out.flags = m.uses[0];
  if (m.uses[2] == l.branch && m.uses[1] != l.branch) {
    out.base = m.uses[1];
    out.base_when = true;
  } else if (m.uses[1] == l.branch && m.uses[2] != l.branch) {
    out.base = m.uses[2];
    out.base_when = false;
  } else {
    return std::nullopt;
  }
  std::set<VarId> unseen{l.branch, l.call_result};  // at the last level, the step does not run
  collect_defs(l.step, unseen);
  collect_defs(l.combine, unseen);
  for (uint32_t i = 0; i + 1 < finish.size(); ++i) {
    if (reads_any(finish[i], unseen) || !total(fn, finish[i])) return std::nullopt;
    out.early_finish.push_back(i);
  }
  if (unseen.count(out.flags) || unseen.count(out.base)) return std::nullopt;
  std::optional<std::vector<Piece>> pieces = combine_pieces(fn, l, out);
  if (!pieces) return std::nullopt;
  out.pieces = std::move(*pieces);
  return out;
}

/// Marks the packs that a children literal's children are (each child `nest(counts, e)` with e
/// a pack member's output, all of one filter group and one vector) as that group's
/// adjacent_packs (Note [Children one after another]).
void mark_adjacent_packs(RecursionLoop& l) {
  const Stmt* lit = children_literal(l);
  if (lit == nullptr) return;
  std::map<VarId, Stmt*> def;
  for (Stmt& s : l.step.stmts)
    for (VarId v : s.outs.empty() ? std::vector<VarId>{s.dst} : s.outs) def[v] = &s;
  Stmt* group = nullptr;
  std::vector<uint32_t> members;
  for (VarId child : lit->uses) {
    auto nest = def.find(child);
    if (nest == def.end() || nest->second->op != Op::Nest || nest->second->uses.size() != 2) return;
    auto pack = def.find(nest->second->uses[1]);
    if (pack == def.end() || pack->second->op != Op::FilterGroup || pack->second->filters == nullptr) return;
    Stmt& g = *pack->second;
    if (group != nullptr && group != &g) return;
    group = &g;
    const auto at = static_cast<uint32_t>(std::find(g.outs.begin(), g.outs.end(), nest->second->uses[1]) - g.outs.begin());
    if (g.filters->members.at(at).kind != FilterGroup::Kind::Pack ||
        std::find(members.begin(), members.end(), at) != members.end() ||
        (!members.empty() && g.uses.at(g.filters->inputs + at) != g.uses.at(g.filters->inputs + members[0])))
      return;
    members.push_back(at);
  }
  auto marked = std::make_shared<FilterGroup>(*group->filters);
  marked->adjacent_packs = std::move(members);
  group->filters = std::move(marked);
}

}  // namespace

const Stmt* children_literal(const RecursionLoop& loop) {
  const std::vector<Stmt>& st = loop.step.stmts;
  if (!loop.laid_out || st.size() < 3) return nullptr;
  const Stmt& lit = st[st.size() - 3];
  const Stmt& lens = st[st.size() - 2];
  const Stmt& elems = st[st.size() - 1];
  if (lit.op != Op::SeqLit || lens.op != Op::Lengths || elems.op != Op::Elements || lens.uses.at(0) != lit.dst ||
      elems.uses.at(0) != lit.dst || elems.dst != loop.step.result || lens.dst != loop.laid_out->child_counts ||
      lit.uses.size() != loop.laid_out->children())
    return nullptr;
  auto reads_lit = [&](const Stmt& s) { return std::find(s.uses.begin(), s.uses.end(), lit.dst) != s.uses.end(); };
  for (size_t i = 0; i + 2 < st.size(); ++i)
    if (reads_lit(st[i])) return nullptr;
  for (uint32_t i : loop.laid_out->early_combine)
    if (reads_lit(loop.combine.stmts.at(i))) return nullptr;
  for (VarId v : loop.saved)
    if (v == lit.dst) return nullptr;
  return &lit;
}

const Stmt* base_from_argument(const RecursionLoop& loop) {
  if (!loop.laid_out || !loop.laid_out->base_when) return nullptr;
  const LaidOut& plan = *loop.laid_out;
  const Stmt* base = nullptr;
  for (const Stmt& s : loop.prefix.stmts)
    if (s.dst == plan.base) base = &s;
  for (uint32_t i : plan.early_finish)
    if (loop.finish.stmts.at(i).dst == plan.base) base = &loop.finish.stmts.at(i);
  if (base == nullptr || base->op != Op::IfNonEmpty || !base->then_block || base->then_block->stmts.size() != 1)
    return nullptr;
  const Stmt& pack = base->then_block->stmts[0];
  if (pack.op != Op::Pack || pack.dst != base->then_block->result || pack.uses.size() != 2 || pack.uses[0] != loop.param ||
      pack.uses[1] != plan.flags)
    return nullptr;
  // Nothing but the finish's merge reads the base results (its last statement, which a
  // laid-out level never runs, as it never runs the ascent that the saved values are for).
  const std::set<VarId> results{plan.base};
  auto reads = [&](const Block& b, size_t upto) {
    for (size_t i = 0; i < upto; ++i)
      if (&b.stmts[i] != base && reads_any(b.stmts[i], results)) return true;
    return false;
  };
  if (reads(loop.prefix, loop.prefix.stmts.size()) || reads(loop.finish, loop.finish.stmts.empty() ? 0 : loop.finish.stmts.size() - 1) ||
      reads(loop.step, loop.step.stmts.size()) || reads(loop.combine, loop.combine.stmts.size()) ||
      loop.prefix.result == plan.base)
    return nullptr;
  return base;
}

Program lay_out_results(Program p) {
  for_each_loop_of_pure_functions(p, [](const Function& fn, RecursionLoop& loop) {
    loop.laid_out = fn.has_path ? std::nullopt : plan(fn, loop);
    if (loop.laid_out) mark_adjacent_packs(loop);
  });
  return p;
}

}  // namespace ndp::flatten
