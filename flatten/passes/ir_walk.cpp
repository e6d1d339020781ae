// Traversals of Flat IR statements and blocks.
#include "flatten/passes/ir_walk.h"

#include "flatten/passes/fuse_elementwise.h"

namespace ndp::flatten {

void for_each_sub_block(Stmt& s, const std::function<void(Block&)>& f) {
  if (s.then_block) f(*s.then_block);
  if (s.else_block) f(*s.else_block);
  if (s.loop) {
    f(s.loop->prefix);
    f(s.loop->step);
    f(s.loop->combine);
    f(s.loop->finish);
  }
}

void for_each_sub_block(const Stmt& s, const std::function<void(const Block&)>& f) {
  for_each_sub_block(const_cast<Stmt&>(s), [&](Block& b) { f(b); });
}

bool pure_and_total(const Function& f, const Stmt& s) {
  switch (s.op) {
    case Op::Lit: case Op::Global: case Op::Empty: case Op::Nothing: case Op::Length: case Op::Count:
    case Op::MapLanes:
    case Op::Const: case Op::Tuple: case Op::First: case Op::Second: case Op::Lengths: case Op::Elements:
    case Op::Retype: case Op::Nest: case Op::Replicate: case Op::PathStep: case Op::Iota: case Op::FnTag: case Op::Gather:
    case Op::Pack: case Op::Merge: case Op::Concat: case Op::Slice: case Op::SeqLit:
    case Op::ReduceKernel: case Op::ScanKernel: case Op::PackKernel: case Op::FilterGroup:
      return true;
    case Op::Kernel: return !s.kernel->can_fail();
    case Op::Prim: {
      std::vector<const lang::Type*> args;
      for (VarId u : s.uses) args.push_back(f.vars[u].type);
      return kernel_prim_ok(s.prim, args, f.vars[s.dst].type);
    }
    default: return false;  // IndexShared, CheckLengths, AppendChain, Call, Time, IfNonEmpty, Recurse
  }
}

void collect_uses(const Stmt& s, std::set<VarId>& out) {
  out.insert(s.uses.begin(), s.uses.end());
  for_each_sub_block(s, [&](const Block& b) { collect_uses(b, out); });
}

void collect_uses(const Block& b, std::set<VarId>& out) {
  for (const Stmt& s : b.stmts) collect_uses(s, out);
  out.insert(b.result);
}

void collect_defs(const Stmt& s, std::set<VarId>& out) {
  if (defines_outs(s.op)) out.insert(s.outs.begin(), s.outs.end());
  else if (s.op != Op::CheckLengths) out.insert(s.dst);
  for_each_sub_block(s, [&](const Block& sub) { collect_defs(sub, out); });
}

void collect_defs(const Block& b, std::set<VarId>& out) {
  for (const Stmt& s : b.stmts) collect_defs(s, out);
}

void for_each_read(const Stmt& s, bool has_path, const std::function<void(VarId)>& read) {
  for (VarId u : s.uses) read(u);
  for_each_sub_block(s, [&](const Block& sub) { for_each_read(sub, has_path, read); });
  if (s.loop) {
    for (VarId v : s.loop->saved) read(v);
    if (has_path) read(s.loop->next_path);  // unset (0) in a function without paths
  }
}

void for_each_read(const Block& b, bool has_path, const std::function<void(VarId)>& read) {
  for (const Stmt& s : b.stmts) for_each_read(s, has_path, read);
  read(b.result);
}

std::vector<uint32_t> use_counts(const Function& f) {
  std::vector<uint32_t> count(f.vars.size(), 0);
  for_each_read(f.body, f.has_path, [&](VarId v) { ++count[v]; });
  return count;
}

bool block_has_effect(const Block& b, const std::vector<bool>& effectful) {
  for (const Stmt& s : b.stmts) {
    if (s.op == Op::Prim && lang::core::prim_has_effect(s.prim)) return true;
    if (s.op == Op::Time) return true;
    if ((s.op == Op::Call || s.op == Op::Recurse) && effectful[s.func]) return true;
    bool inner = false;
    for_each_sub_block(s, [&](const Block& sub) { inner = inner || block_has_effect(sub, effectful); });
    if (inner) return true;
  }
  return false;
}

std::vector<bool> effectful_functions(const Program& p) {
  std::vector<bool> effectful(p.functions.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < p.functions.size(); ++i)
      if (!effectful[i] && block_has_effect(p.functions[i].body, effectful)) effectful[i] = changed = true;
  }
  return effectful;
}

void for_each_loop_of_pure_functions(Program& p, const std::function<void(const Function&, RecursionLoop&)>& f) {
  const std::vector<bool> effectful = effectful_functions(p);
  for (size_t i = 0; i < p.functions.size(); ++i) {
    if (effectful[i]) continue;
    const Function& fn = p.functions[i];
    std::function<void(Block&)> walk = [&](Block& b) {
      for (Stmt& s : b.stmts) {
        if (s.loop) f(fn, *s.loop);
        for_each_sub_block(s, walk);
      }
    };
    walk(p.functions[i].body);
  }
}

/// Every function `b` names (calls and recursion loops), through `f`.
void for_each_callee(Block& b, const std::function<void(FuncId&)>& f) {
  for (Stmt& s : b.stmts) {
    if (s.op == Op::Call || s.op == Op::Recurse) f(s.func);
    for_each_sub_block(s, [&](Block& sub) { for_each_callee(sub, f); });
  }
}

void drop_unreachable(Program& p) {
  std::vector<bool> reached(p.functions.size(), false);
  std::vector<FuncId> todo{p.entry};
  reached[p.entry] = true;
  while (!todo.empty()) {
    FuncId f = todo.back();
    todo.pop_back();
    for_each_callee(p.functions[f].body, [&](FuncId& g) {
      if (!reached[g]) {
        reached[g] = true;
        todo.push_back(g);
      }
    });
  }
  std::vector<FuncId> renumbered(p.functions.size(), 0);
  std::vector<Function> kept;
  for (FuncId f = 0; f < p.functions.size(); ++f) {
    if (!reached[f]) continue;
    renumbered[f] = static_cast<FuncId>(kept.size());
    kept.push_back(std::move(p.functions[f]));
  }
  p.entry = renumbered[p.entry];
  for (Function& f : kept) for_each_callee(f.body, [&](FuncId& g) { g = renumbered[g]; });
  p.functions = std::move(kept);
}

}  // namespace ndp::flatten
