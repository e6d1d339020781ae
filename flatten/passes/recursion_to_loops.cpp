// Turning single-site self-recursion into descend/ascend loops (see recursion_to_loops.h).
#include "flatten/passes/recursion_to_loops.h"

#include <set>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

size_t count_self_calls(const Block& b, FuncId self) {
  size_t n = 0;
  for (const Stmt& s : b.stmts) {
    if (s.op == Op::Call && s.func == self) ++n;
    for_each_sub_block(s, [&](const Block& sub) { n += count_self_calls(sub, self); });
  }
  return n;
}

void move_stmts(std::vector<Stmt>& from, size_t begin, size_t end, Block& to) {
  for (size_t i = begin; i < end; ++i) to.stmts.push_back(std::move(from[i]));
}

/// The transformation of `body`: the function's body, or the flattened body beside a loop
/// kernel (Note [Loops that give up] in flat_ir.h).
void transform(Function& f, Block& body, FuncId self) {
  if (count_self_calls(body, self) != 1) return;
  // Find `b = if_nonempty(c) { T1; r = call self(a); T2 } else { nothing }` at the top level.
  std::vector<Stmt>& top = body.stmts;
  size_t k = 0, m = 0;
  bool found = false;
  for (k = 0; k < top.size() && !found; ++k) {
    const Stmt& s = top[k];
    if (s.op != Op::IfNonEmpty) continue;
    const std::vector<Stmt>& then_stmts = s.then_block->stmts;
    for (m = 0; m < then_stmts.size(); ++m)
      if (then_stmts[m].op == Op::Call && then_stmts[m].func == self) {
        found = true;
        break;
      }
    // The loop keeps the bases its function was called with (Note [Shared arguments]).
    if (found) {
      const Stmt& call = then_stmts[m];
      std::vector<VarId> bases(call.uses.begin() + static_cast<long>(first_base_operand(f)), call.uses.end());
      if (bases != f.shared_bases) return;
    }
    const std::vector<Stmt>& else_stmts = s.else_block->stmts;
    if (found && !(else_stmts.size() == 1 && else_stmts[0].op == Op::Nothing)) return;
  }
  if (!found) return;
  --k;
  Stmt branch = std::move(top[k]);
  auto loop = std::make_unique<RecursionLoop>();
  loop->param = f.param;
  loop->branch = branch.dst;
  std::vector<Stmt>& then_stmts = branch.then_block->stmts;
  loop->call_result = then_stmts[m].dst;
  if (f.has_path) {
    loop->path = f.path;
    loop->next_path = then_stmts[m].uses.at(1);
  }
  move_stmts(top, 0, k, loop->prefix);
  loop->prefix.result = branch.uses[0];
  move_stmts(then_stmts, 0, m, loop->step);
  loop->step.result = then_stmts[m].uses[0];
  move_stmts(then_stmts, m + 1, then_stmts.size(), loop->combine);
  loop->combine.result = branch.then_block->result;
  move_stmts(top, k + 1, top.size(), loop->finish);
  loop->finish.result = body.result;
  // Values of a level that its ascent still needs: defined before the call, used after it.
  std::set<VarId> defined{f.param}, used;
  if (f.has_path) defined.insert(f.path);
  collect_defs(loop->prefix, defined);
  collect_defs(loop->step, defined);
  collect_uses(loop->combine, used);
  collect_uses(loop->finish, used);
  for (VarId v : used)
    if (defined.count(v) && v != loop->call_result && v != loop->branch) loop->saved.push_back(v);

  f.vars.push_back(Var{"result", f.result_type});
  VarId result = static_cast<VarId>(f.vars.size() - 1);
  Stmt rec;
  rec.op = Op::Recurse;
  rec.dst = result;
  rec.uses = {f.param};
  rec.span = then_stmts[m].span;
  rec.func = self;
  rec.loop = std::move(loop);
  body.stmts.clear();
  body.stmts.push_back(std::move(rec));
  body.result = result;
}

}  // namespace

Program recursion_to_loops(Program p) {
  for (size_t i = 0; i < p.functions.size(); ++i) {
    Function& f = p.functions[i];
    Block* body = &f.body;
    for (Stmt& s : f.body.stmts)
      if (s.op == Op::TryLoop) body = s.else_block.get();
    transform(f, *body, static_cast<FuncId>(i));
  }
  return p;
}

}  // namespace ndp::flatten
