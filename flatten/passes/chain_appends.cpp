// Chains of `++` over sequences of scalars (see chain_appends.h, Note [Append chains] in
// flatten/flat_ir.h).
#include "flatten/passes/chain_appends.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

using lang::core::PrimId;

bool is_prim(const Stmt& s, PrimId p) { return s.op == Op::Prim && s.prim == p; }

/// What a statement of the block becomes.
enum class Role : uint8_t { Kept, TakenIn, Root };

void chain_block(const Function& fn, Block& b, const std::vector<uint32_t>& uses) {
  for (Stmt& s : b.stmts) for_each_sub_block(s, [&](Block& inner) { chain_block(fn, inner, uses); });
  std::map<VarId, size_t> defined_at;
  for (size_t i = 0; i < b.stmts.size(); ++i)
    if (b.stmts[i].op != Op::CheckLengths) defined_at[b.stmts[i].dst] = i;
  std::vector<Role> role(b.stmts.size(), Role::Kept);
  std::map<size_t, Stmt> chains;  // by the root's index
  // The last `++` of a chain first, so that it takes in the `++`s before it.
  for (size_t r = b.stmts.size(); r-- > 0;) {
    const Stmt& root = b.stmts[r];
    const lang::Type* t = fn.vars.at(root.dst).type;
    if (!is_prim(root, PrimId::Append) || role[r] != Role::Kept || t == nullptr || t->kind != lang::TypeKind::Seq ||
        !is_flat_scalar(t->a))
      continue;
    auto chain = std::make_shared<AppendChain>();
    Stmt s;
    std::vector<size_t> taken;                      // statement indices
    std::vector<std::pair<size_t, uint32_t>> elts;  // (statement index, source index)
    // Expands operand v of the chain: a single-use `++` or elt of this block before the root
    // is taken apart, anything else is a whole-sequence source.
    std::function<void(VarId)> expand = [&](VarId v) {
      auto d = defined_at.find(v);
      if (d != defined_at.end() && d->second < r && uses[v] == 1 && role[d->second] == Role::Kept) {
        const Stmt& def = b.stmts[d->second];
        if (is_prim(def, PrimId::Append)) {
          taken.push_back(d->second);
          expand(def.uses[0]);
          expand(def.uses[1]);
          return;
        }
        if (is_prim(def, PrimId::Elt)) {
          taken.push_back(d->second);
          elts.emplace_back(d->second, static_cast<uint32_t>(chain->sources.size()));
          AppendChain::Source src{static_cast<uint32_t>(s.uses.size()), static_cast<int32_t>(s.uses.size() + 1),
                                  def.span};
          chain->sources.push_back(src);
          s.uses.push_back(def.uses[0]);
          s.uses.push_back(def.uses[1]);
          return;
        }
      }
      chain->sources.push_back(AppendChain::Source{static_cast<uint32_t>(s.uses.size())});
      s.uses.push_back(v);
    };
    expand(root.uses[0]);
    expand(root.uses[1]);
    if (taken.empty()) continue;
    size_t first = *std::min_element(taken.begin(), taken.end());
    bool safe = true;
    for (size_t i = first; i < r && safe; ++i)
      safe = pure_and_total(fn, b.stmts[i]) || std::find(taken.begin(), taken.end(), i) != taken.end();
    if (!safe) continue;
    std::sort(elts.begin(), elts.end());
    for (const auto& [stmt, source] : elts) chain->checks.push_back(source);
    for (size_t i : taken) role[i] = Role::TakenIn;
    role[r] = Role::Root;
    s.op = Op::AppendChain;
    s.dst = root.dst;
    s.span = root.span;
    s.chain = std::move(chain);
    chains.emplace(r, std::move(s));
  }
  if (chains.empty()) return;
  std::vector<Stmt> stmts;
  stmts.reserve(b.stmts.size());
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    if (role[i] == Role::Root)
      stmts.push_back(std::move(chains.at(i)));
    else if (role[i] == Role::Kept)
      stmts.push_back(std::move(b.stmts[i]));
  }
  b.stmts = std::move(stmts);
}

}  // namespace

Program chain_appends(Program p) {
  for (Function& fn : p.functions) {
    // Counted once, before any chain is formed: a chain reads what its statements read, less
    // the values it no longer stores, so the counts of what remains do not change.
    std::vector<uint32_t> uses = use_counts(fn);
    chain_block(fn, fn.body, uses);
  }
  return p;
}

}  // namespace ndp::flatten
