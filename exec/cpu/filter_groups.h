// Filters that share their predicates' inputs, run together on the cpu backend.
//
// Note [Filter groups]
// A filter `{e in a | p(e)}` in a lifted context becomes two consumers of the predicate: the
// segment lengths of the result, `reduce_kernel sum(lens; ins) btoi(p)`, and the kept values,
// `pack_kernel(values; ins) p` (or `pack(values, flags)` when the flags are a variable).
// Flat IR keeps them apart (each computes p on demand, which suits the GPU), and quicksort's
// three filters on one (e, pivot) pair compute three predicates six times, two of those
// passes for each pack. On the CPU the statements of one block whose predicates read the same
// input variables form a group that runs when its first statement is reached:
//   1. one kernel computes every distinct predicate of the group into a byte per element
//      (one pass over the inputs; a predicate that is an input variable is used as it is);
//   2. each count is a segmented count of its predicate's flags, each pack packs by them.
// The other statements of the group are then skipped. They cannot fail (Note [Consumer
// kernels]), so running them early changes no error; a statement joins the group only if
// its other operand (the lengths or the packed values) is defined before the group's first
// statement. Groups need two statements or more; a lone consumer stays as it is.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "exec/host/vec.h"
#include "flatten/flat_ir.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


struct FilterGroup {
  enum class Kind : uint8_t { Count, Pack };
  struct Member {
    const flat::Stmt* stmt;
    Kind kind;
    /// The predicate it uses: an output of `predicates`, or, when negative, the kernel input
    /// -1 - predicate (a flags variable used directly).
    int32_t predicate;
  };
  std::vector<flat::VarId> inputs;                 // the shared kernel inputs
  std::shared_ptr<const flat::KernelBody> predicates;  // one bool output per distinct predicate; may be null
  std::vector<Member> members;                     // in statement order; members[0] leads

  /// The flags member m filters by: predicate output `flags[m.predicate]`, or the kernel input
  /// it names (`ins`: the values of `inputs`). V is either backend's vector.
  template <class V>
  static const V& flags_of(const Member& m, const std::vector<V>& flags, const std::vector<V>& ins) {
    return m.predicate >= 0 ? flags[static_cast<size_t>(m.predicate)] : ins[static_cast<size_t>(-1 - m.predicate)];
  }

  /// The types of the predicates' outputs (all bool), for running `predicates`.
  std::vector<const lang::Type*> predicate_types() const {
    std::vector<const lang::Type*> types;
    for (uint32_t o : predicates->outputs) types.push_back(predicates->nodes[o].type);
    return types;
  }
};

/// For every statement of a program that belongs to a filter group: the group, and whether it
/// leads it (runs it) or is skipped.
class FilterPlan {
 public:
  struct Role {
    const FilterGroup* group = nullptr;
    bool leads = false;
  };

  /// Finds the groups of every block of `p` (Note [Filter groups]).
  explicit FilterPlan(const flat::Program& p);
  FilterPlan() = default;

  /// The role of `s`, or null when it belongs to no group.
  const Role* role(const flat::Stmt& s) const {
    auto it = roles_.find(&s);
    return it == roles_.end() ? nullptr : &it->second;
  }
  size_t group_count() const { return groups_.size(); }

 private:
  void plan_block(const flat::Block& b);
  std::vector<std::unique_ptr<FilterGroup>> groups_;
  std::unordered_map<const flat::Stmt*, Role> roles_;
};

/// Runs a group: `operand(v)` is the value of variable v, `result_type(v)` its element type.
/// Returns the value of each member's dst, in the order of `g.members`.
std::vector<Vec> run_filter_group(const FilterGroup& g, const std::function<const Vec&(flat::VarId)>& operand,
                                  const std::function<const lang::Type*(flat::VarId)>& result_type);

}  // namespace ndp::exec::cpu
