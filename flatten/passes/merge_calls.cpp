// Merging of independent calls to the same function (see merge_calls.h).
#include "flatten/passes/merge_calls.h"

#include <algorithm>
#include <optional>
#include <set>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

struct Merger {
  Function& fn;
  const std::vector<bool>& effectful;
  const std::vector<Function>& functions;

  VarId new_var(std::string hint, const lang::Type* type) {
    fn.vars.push_back(Var{std::move(hint), type});
    return static_cast<VarId>(fn.vars.size() - 1);
  }

  static Stmt make(Op op, VarId dst, std::vector<VarId> uses, lang::Span span = {}) {
    Stmt s;
    s.op = op;
    s.dst = dst;
    s.uses = std::move(uses);
    s.span = span;
    return s;
  }

  /// A later call of the same function that can absorb the call at index i.
  std::optional<size_t> partner(const Block& b, size_t i) {
    const Stmt& first = b.stmts[i];
    for (size_t j = i + 1; j < b.stmts.size(); ++j) {
      std::set<VarId> used;
      collect_uses(b.stmts[j], used);
      if (used.count(first.dst)) return std::nullopt;  // r1 is needed before any later call
      // Calls with other shared bases read other sequences through their ids: not mergeable
      // (Note [Shared arguments]).
      if (b.stmts[j].op == Op::Call && b.stmts[j].func == first.func) {
        size_t from = first_base_operand(functions[first.func]);
        if (!std::equal(first.uses.begin() + static_cast<long>(from), first.uses.end(),
                        b.stmts[j].uses.begin() + static_cast<long>(from), b.stmts[j].uses.end()))
          return std::nullopt;
        return j;
      }
    }
    return std::nullopt;
  }

  void block(Block& b) {
    for (Stmt& s : b.stmts) for_each_sub_block(s, [&](Block& sub) { block(sub); });
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      if (b.stmts[i].op != Op::Call || effectful[b.stmts[i].func]) continue;
      std::optional<size_t> j = partner(b, i);
      if (!j) continue;
      Stmt first = std::move(b.stmts[i]);
      Stmt second = std::move(b.stmts[*j]);
      VarId a1 = first.uses[0], a2 = second.uses[0];
      VarId args = new_var("args", fn.vars[a1].type);
      VarId results = new_var("results", fn.vars[first.dst].type);
      VarId n1 = new_var("n1", nullptr), n2 = new_var("n2", nullptr), zero = new_var("zero", nullptr);
      std::vector<Stmt> merged;
      merged.push_back(make(Op::Concat, args, {a1, a2}));
      std::vector<VarId> call_uses{args};
      if (functions[first.func].has_path) {  // the callee carries rand paths: concatenate them too
        VarId paths = new_var("paths", fn.vars[first.uses[1]].type);
        merged.push_back(make(Op::Concat, paths, {first.uses[1], second.uses[1]}));
        call_uses.push_back(paths);
      }
      call_uses.insert(call_uses.end(), first.uses.begin() + static_cast<long>(first_base_operand(functions[first.func])),
                       first.uses.end());
      Stmt call = make(Op::Call, results, std::move(call_uses), first.span);
      call.func = first.func;
      merged.push_back(std::move(call));
      merged.push_back(make(Op::Length, n1, {a1}));
      merged.push_back(make(Op::Length, n2, {a2}));
      Stmt c0 = make(Op::Const, zero, {});
      c0.lit = lang::Value::int_(0);
      merged.push_back(std::move(c0));
      merged.push_back(make(Op::Slice, first.dst, {results, zero, n1}));
      merged.push_back(make(Op::Slice, second.dst, {results, n1, n2}));
      // Replace the second call by the merged one and drop the first.
      b.stmts.erase(b.stmts.begin() + static_cast<long>(*j));
      b.stmts.insert(b.stmts.begin() + static_cast<long>(*j), std::make_move_iterator(merged.begin()),
                     std::make_move_iterator(merged.end()));
      b.stmts.erase(b.stmts.begin() + static_cast<long>(i));
      --i;  // the merged call may absorb a third one
    }
  }
};

}  // namespace

Program merge_calls(Program p) {
  std::vector<bool> effectful = effectful_functions(p);
  for (Function& f : p.functions) Merger{f, effectful, p.functions}.block(f.body);
  return p;
}

}  // namespace ndp::flatten
