// Calls of a partition loop's shared variant turned into calls of the loop's function on the
// gathered rows (see unshare_partition_calls.h, Note [Partition calls unshared]).
#include "flatten/passes/unshare_partition_calls.h"

#include <functional>
#include <optional>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

/// Whether `g`'s body is one recursion loop over its parameter, run as partition levels.
bool is_partition_loop(const Function& g) {
  const Block& b = g.body;
  if (b.stmts.size() != 1) return false;
  const Stmt& s = b.stmts[0];
  return s.op == Op::Recurse && s.loop && s.loop->partition && s.dst == b.result && !s.uses.empty() && s.uses[0] == g.param;
}

/// The callee of a Call in `b` (nested blocks included) that `is_loop` accepts.
std::optional<FuncId> called_in(const Block& b, const std::function<bool(FuncId)>& is_loop) {
  for (const Stmt& s : b.stmts) {
    if (s.op == Op::Call && is_loop(s.func)) return s.func;
    std::optional<FuncId> found;
    for_each_sub_block(s, [&](const Block& sub) {
      if (!found) found = called_in(sub, is_loop);
    });
    if (found) return found;
  }
  return std::nullopt;
}

/// The function a call of `f` should call on the gathered rows instead: where `f`'s whole
/// argument is one shared sequence, its instantiation without shared arguments, if that is a
/// partition loop. That is the callee of `f`'s own recursive call (its children are fresh
/// sequences), found in `f`'s body: a name alone could be another global's of the same name.
std::optional<FuncId> unshared_partition_loop(const Program& p, const Function& f) {
  if (f.shared_bases.size() != 1 || f.vars[f.param].type == nullptr || f.vars[f.param].type->kind != lang::TypeKind::Int)
    return std::nullopt;
  const lang::Type* rows = f.vars[f.shared_bases[0]].type;
  return called_in(f.body, [&](FuncId g) {
    const Function& c = p.functions[g];
    return c.name == f.name && c.shared_bases.empty() && c.has_path == f.has_path && c.vars[c.param].type == rows &&
           c.result_type == f.result_type && is_partition_loop(c);
  });
}

void unshare(const Program& p, Function& fn, Block& b, const std::vector<std::optional<FuncId>>& instead) {
  for (size_t i = 0; i < b.stmts.size(); ++i) {
    for_each_sub_block(b.stmts[i], [&](Block& sub) { unshare(p, fn, sub, instead); });
    Stmt& call = b.stmts[i];
    if (call.op != Op::Call || !instead.at(call.func)) continue;
    const Function& loop_fn = p.functions[*instead[call.func]];
    const size_t base_at = first_base_operand(p.functions[call.func]);
    const VarId ids = call.uses.at(0), base = call.uses.at(base_at);
    const VarId rows = static_cast<VarId>(fn.vars.size());
    fn.vars.push_back(Var{fn.vars[base].hint, loop_fn.vars[loop_fn.param].type});
    call.func = *instead[call.func];
    call.uses.erase(call.uses.begin() + static_cast<std::ptrdiff_t>(base_at));
    call.uses[0] = rows;
    Stmt gather;
    gather.op = Op::Gather;
    gather.dst = rows;
    gather.uses = {base, ids};
    gather.span = call.span;
    b.stmts.insert(b.stmts.begin() + static_cast<std::ptrdiff_t>(i), std::move(gather));
    ++i;
  }
}

}  // namespace

Program unshare_partition_calls(Program p) {
  std::vector<std::optional<FuncId>> instead(p.functions.size());
  for (FuncId f = 0; f < p.functions.size(); ++f) instead[f] = unshared_partition_loop(p, p.functions[f]);
  for (Function& fn : p.functions) unshare(p, fn, fn.body, instead);
  drop_unreachable(p);  // (the shared variants no call reaches now)
  return p;
}

}  // namespace ndp::flatten
