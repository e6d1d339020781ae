// Inlining of small leaf functions (see inline_calls.h).
#include "flatten/passes/inline_calls.h"

#include <functional>
#include <map>
#include <memory>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

/// Statements in `b`, nested blocks included; `calls` is set when one is a call or a loop.
size_t measure(const Block& b, bool& calls) {
  size_t n = 0;
  for (const Stmt& s : b.stmts) {
    ++n;
    calls = calls || s.op == Op::Call || s.op == Op::Recurse;
    for_each_sub_block(s, [&](const Block& sub) { n += measure(sub, calls); });
  }
  return n;
}

bool inlinable(const Function& f) {
  bool calls = false;
  size_t n = measure(f.body, calls);
  return !calls && n <= kInlineStatements;
}

using Renaming = std::map<VarId, VarId>;

VarId renamed(const Renaming& r, VarId v) {
  auto it = r.find(v);
  return it == r.end() ? v : it->second;
}

/// Renames every variable `b` defines or reads (a leaf has no recursion loop to rename).
void rename_block(Block& b, const Renaming& r);

void rename_stmt(Stmt& s, const Renaming& r) {
  s.dst = renamed(r, s.dst);
  for (VarId& u : s.uses) u = renamed(r, u);
  for (VarId& o : s.outs) o = renamed(r, o);
  for_each_sub_block(s, [&](Block& sub) { rename_block(sub, r); });
  if (s.loop) {
    RecursionLoop& l = *s.loop;
    for (VarId* v : {&l.param, &l.path, &l.next_path, &l.call_result, &l.branch}) *v = renamed(r, *v);
    for (VarId& v : l.saved) v = renamed(r, v);
  }
}

void rename_block(Block& b, const Renaming& r) {
  for (Stmt& s : b.stmts) rename_stmt(s, r);
  b.result = renamed(r, b.result);
}

/// A deep copy of a statement of a leaf (its nested blocks are branches and timed blocks).
Stmt copy_stmt(const Stmt& s);

Block copy_block(const Block& b) {
  Block c;
  c.result = b.result;
  for (const Stmt& s : b.stmts) c.stmts.push_back(copy_stmt(s));
  return c;
}

Stmt copy_stmt(const Stmt& s) {
  Stmt c;
  c.op = s.op;
  c.dst = s.dst;
  c.uses = s.uses;
  c.span = s.span;
  c.lit = s.lit;
  c.type = s.type;
  c.global = s.global;
  c.prim = s.prim;
  c.type_args = s.type_args;
  c.func = s.func;
  if (s.then_block) c.then_block = std::make_unique<Block>(copy_block(*s.then_block));
  if (s.else_block) c.else_block = std::make_unique<Block>(copy_block(*s.else_block));
  c.kernel = s.kernel;
  c.outs = s.outs;
  c.filters = s.filters;
  c.chain = s.chain;
  c.level = s.level;
  c.subwarp_width = s.subwarp_width;
  return c;
}

struct Inliner {
  Program& p;
  std::vector<bool> leaf;  // per function: inlinable
  bool changed = false;

  /// The statements of callee `f`'s body for the call `call` in `caller`, with fresh
  /// variables; `result` is set to the variable holding the call's value.
  std::vector<Stmt> body_for(Function& caller, const Function& f, const Stmt& call, VarId& result) {
    Renaming r;
    r[f.param] = call.uses.at(0);
    if (f.has_path) r[f.path] = call.uses.at(1);
    for (size_t i = 0; i < f.shared_bases.size(); ++i) r[f.shared_bases[i]] = call.uses.at(first_base_operand(f) + i);
    for (VarId v = 0; v < f.vars.size(); ++v) {
      if (r.count(v)) continue;
      r[v] = static_cast<VarId>(caller.vars.size());
      caller.vars.push_back(f.vars[v]);
    }
    Block copy = copy_block(f.body);
    rename_block(copy, r);
    result = copy.result;
    return std::move(copy.stmts);
  }

  void block(Function& fn, Block& b, Renaming& results) {
    std::vector<Stmt> out;
    out.reserve(b.stmts.size());
    for (Stmt& s : b.stmts) {
      for_each_sub_block(s, [&](Block& sub) { block(fn, sub, results); });
      if (s.op == Op::Call && leaf[s.func] && &p.functions[s.func] != &fn) {
        VarId result = 0;
        std::vector<Stmt> body = body_for(fn, p.functions[s.func], s, result);
        results[s.dst] = result;
        for (Stmt& t : body) out.push_back(std::move(t));
        changed = true;
        continue;
      }
      out.push_back(std::move(s));
    }
    b.stmts = std::move(out);
  }

  void function(Function& fn) {
    Renaming results;  // the inlined calls' variables -> the copies' results
    block(fn, fn.body, results);
    if (results.empty()) return;
    // A call's result may itself be another inlined call's (a leaf returning a callee's value).
    for (auto& [from, to] : results)
      while (results.count(to)) to = results.at(to);
    rename_block(fn.body, results);
  }
};

}  // namespace

Program inline_calls(Program p) {
  for (;;) {
    Inliner in{p, {}, false};
    for (const Function& f : p.functions) in.leaf.push_back(inlinable(f));
    for (Function& f : p.functions) in.function(f);
    if (!in.changed) break;
  }
  drop_unreachable(p);
  return p;
}

}  // namespace ndp::flatten
