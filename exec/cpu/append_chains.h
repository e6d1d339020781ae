// Chains of `++` over sequences of scalars, copied once on the cpu backend.
//
// Note [Append chains]
// Quicksort's result `sorted[0] ++ equal ++ sorted[1]` becomes, per recursion level,
//   p56 = elt(m, 0); p57 = p56 ++ equal; p59 = elt(m, 1); p60 = p57 ++ p59
// and each statement copies its elements: the level's data moves four times. When the
// intermediate values (here p56, p57, p59) are used nowhere else, the last `++` (the root)
// builds its result straight from the sources (whole sequences, or `elt(v, i)`: sequence
// i of each instance's nested sequence), one copy per element, and the other statements
// are skipped. Only elt can fail; the root checks the elts' indices in statement order and
// raises the first failure with its statement's span, and chains are formed only where the
// statements between the first skipped one and the root cannot fail, so the error reported
// is the one the statements in order would report.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


struct AppendChain {
  /// One part of each instance's result: sequence `seqs` of the instance, or, when `elt` is
  /// set, sequence index[i] of the nested sequence `seqs` (the elt statement's operands).
  struct Source {
    flat::VarId seqs;
    const flat::Stmt* elt = nullptr;
  };
  std::vector<Source> sources;               // in result order
  std::vector<const flat::Stmt*> elts;       // the elt sources' statements, in statement order
};

/// The chains of a program and the role of each statement in them.
class AppendPlan {
 public:
  struct Role {
    const AppendChain* chain = nullptr;  // set for a chain's root
    bool skipped = false;                // a statement the root computes
  };

  explicit AppendPlan(const flat::Program& p);
  AppendPlan() = default;

  const Role* role(const flat::Stmt& s) const {
    auto it = roles_.find(&s);
    return it == roles_.end() ? nullptr : &it->second;
  }

 private:
  void plan_block(const flat::Function& fn, const flat::Block& b, const std::vector<uint32_t>& uses);
  std::vector<std::unique_ptr<AppendChain>> chains_;
  std::unordered_map<const flat::Stmt*, Role> roles_;
};

/// The root's value: `operand(v)` is the value of variable v; `result` the root's type.
/// Throws the first failing elt's error.
Vec run_append_chain(const AppendChain& c, const std::function<const Vec&(flat::VarId)>& operand,
                     const lang::Type* result);

}  // namespace ndp::exec::cpu
