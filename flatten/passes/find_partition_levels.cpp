// Finding the laid-out loops whose levels partition their instances (see
// find_partition_levels.h, Note [Partition levels] in flatten/flat_ir.h).
//
// As find_regular_levels does, the prefix and the step are read as a symbolic evaluation of one
// instance: each variable is what it is in terms of the level's argument (the argument, one of
// its scalars, its elements, a scalar spread over them, a part's count or elements, a part, the
// children literal, ...). A statement whose operands are not what its form needs ends the search.
#include "flatten/passes/find_partition_levels.h"

#include <algorithm>
#include <map>

#include "flatten/passes/ir_walk.h"
#include "flatten/passes/loop_shapes.h"

namespace ndp::flatten {

namespace {

using PrimId = lang::core::PrimId;
using Scalar = PartitionLevels::Scalar;

struct Sym {
  enum class Kind : uint8_t {
    Param,        // the (recursing instances of the) level's argument
    Scalar,       // scalar a of each instance
    Count,        // the host count of the bool scalar a
    BaseBranch,   // the base results: the argument where scalar a holds
    Elems,        // the argument's elements
    Spread,       // scalar a repeated over the instance's elements
    PartCount,    // the count of the elements where predicate a holds
    PartElems,    // those elements
    Part,         // the part of predicate a
    Children,     // the children literal of the parts of predicates `list`
    ChildCounts,  // its lengths
    NextArg,      // its elements
  };
  Kind kind = Kind::Param;
  uint32_t a = 0;
  std::vector<uint32_t> list;
};

class Finder {
 public:
  Finder(const Function& fn, const RecursionLoop& l) : fn_(fn), l_(l) {}

  std::optional<PartitionLevels> find() {
    if (!l_.laid_out || l_.regular || fn_.has_path || !fn_.shared_bases.empty() || fn_.arg_type != fn_.result_type ||
        fn_.arg_type == nullptr || fn_.arg_type->kind != lang::TypeKind::Seq)
      return std::nullopt;
    elem_ = fn_.arg_type->a;
    if (elem_->kind != lang::TypeKind::Int && elem_->kind != lang::TypeKind::Float) return std::nullopt;
    syms_[l_.param] = Sym{Sym::Kind::Param};
    if (!block(l_.prefix)) return std::nullopt;
    const Sym* rec = sym(l_.prefix.result, Sym::Kind::Count);
    if (rec == nullptr || !of_length(rec->a)) return std::nullopt;
    plan_.recurse = rec->a;
    if (!block(l_.step) || sym(l_.step.result, Sym::Kind::NextArg) == nullptr || !predicates_) return std::nullopt;
    if (!laid_out_parts() || !base_is_not_recursing() || !recurse_cannot_fail(plan_.recurse)) return std::nullopt;
    if (plan_.parts.size() > PartitionLevels::kMostParts || plan_.predicate_scalars.size() > PartitionLevels::kMostPredicateScalars)
      return std::nullopt;
    plan_.predicates = std::make_shared<const KernelBody>(std::move(*predicates_));
    return std::move(plan_);
  }

 private:
  const Sym* sym(VarId v, Sym::Kind k) const {
    auto it = syms_.find(v);
    return it != syms_.end() && it->second.kind == k ? &it->second : nullptr;
  }
  void set(VarId v, Sym::Kind k, uint32_t a = 0) { syms_[v] = Sym{k, a, {}}; }
  uint32_t add(Scalar s) {
    plan_.scalars.push_back(std::move(s));
    return static_cast<uint32_t>(plan_.scalars.size() - 1);
  }

  /// Scalar i is computed by kernels that cannot fail: whether an instance recurses is asked of
  /// instances whose scalars are never computed (those that do not recurse), so its failure
  /// would go unnoticed.
  bool recurse_cannot_fail(uint32_t i) const {
    const Scalar& s = plan_.scalars.at(i);
    if (s.kind == Scalar::Kind::Kernel && s.kernel->can_fail()) return false;
    return std::all_of(s.args.begin(), s.args.end(), [&](uint32_t a) { return recurse_cannot_fail(a); });
  }

  /// Scalar i reads the length alone (no element).
  bool of_length(uint32_t i) const {
    const Scalar& s = plan_.scalars.at(i);
    if (s.kind == Scalar::Kind::Element) return false;
    return std::all_of(s.args.begin(), s.args.end(), [&](uint32_t a) { return of_length(a); });
  }

  bool block(const Block& b) {
    for (const Stmt& s : b.stmts)
      if (!stmt(s)) return false;
    return true;
  }

  /// A kernel over scalars: its outputs are scalars.
  bool kernel(const Stmt& s) {
    const KernelBody& k = *s.kernel;
    if (k.instance_at_a_time() || s.uses.size() != k.inputs.size() || s.outs.size() != k.outputs.size()) return false;
    std::vector<uint32_t> args;
    for (VarId u : s.uses) {
      const Sym* x = sym(u, Sym::Kind::Scalar);
      if (x == nullptr) return false;
      args.push_back(x->a);
    }
    for (size_t o = 0; o < s.outs.size(); ++o) {
      Scalar e{Scalar::Kind::Kernel, k.nodes.at(k.outputs[o]).type, 0, s.kernel, static_cast<uint32_t>(o), args};
      set(s.outs[o], Sym::Kind::Scalar, add(std::move(e)));
    }
    return true;
  }

  /// A lone elementwise primitive over scalars, as a kernel of one node.
  bool elementwise(const Stmt& s) {
    std::optional<Stmt> k = as_one_node_kernel(fn_, s);
    return k && kernel(*k);
  }

  bool prim(const Stmt& s) {
    auto use = [&](size_t i, Sym::Kind k) { return i < s.uses.size() ? sym(s.uses[i], k) : nullptr; };
    if (s.prim == PrimId::Length) {
      if (!use(0, Sym::Kind::Param)) return false;
      set(s.dst, Sym::Kind::Scalar, add(Scalar{Scalar::Kind::Length, fn_.vars.at(s.dst).type}));
      return true;
    }
    if (s.prim == PrimId::Elt) {  // a[i]: the element at a scalar, checked as it is read
      const Sym* at = use(1, Sym::Kind::Scalar);
      if (!use(0, Sym::Kind::Param) || at == nullptr || plan_.scalars[at->a].type->kind != lang::TypeKind::Int) return false;
      set(s.dst, Sym::Kind::Scalar, add(Scalar{Scalar::Kind::Element, elem_, 0, nullptr, 0, {at->a}}));
      return true;
    }
    return elementwise(s);
  }

  /// The filter group over the elements and spread scalars: its kernel becomes the predicates
  /// (input 0 the element, input q + 1 scalar predicate_scalars[q]); its members the parts' counts
  /// and elements.
  bool filter_group(const Stmt& s) {
    const FilterGroup& g = *s.filters;
    if (predicates_ || !s.kernel || s.kernel->instance_at_a_time() || s.kernel->can_fail() || g.inputs != s.kernel->inputs.size() ||
        s.uses.size() != g.inputs + g.members.size() || s.outs.size() != g.members.size())
      return false;
    std::vector<uint32_t> input_at;  // the predicates' input of each of the group's
    for (uint32_t i = 0; i < g.inputs; ++i) {
      if (sym(s.uses[i], Sym::Kind::Elems)) {
        input_at.push_back(0);
      } else if (const Sym* x = sym(s.uses[i], Sym::Kind::Spread)) {
        auto at = std::find(plan_.predicate_scalars.begin(), plan_.predicate_scalars.end(), x->a);
        if (at == plan_.predicate_scalars.end()) {
          plan_.predicate_scalars.push_back(x->a);
          at = plan_.predicate_scalars.end() - 1;
        }
        input_at.push_back(static_cast<uint32_t>(at - plan_.predicate_scalars.begin()) + 1);
      } else {
        return false;
      }
    }
    KernelBody k = *s.kernel;
    k.inputs.assign(1, elem_);
    for (uint32_t q : plan_.predicate_scalars) k.inputs.push_back(plan_.scalars[q].type);
    for (KernelNode& n : k.nodes)
      if (n.kind == KernelNode::Kind::Input) n.input = input_at.at(n.input);
    predicates_ = std::move(k);
    for (size_t m = 0; m < g.members.size(); ++m) {
      const FilterGroup::Member& member = g.members[m];
      if (member.predicate < 0) return false;
      const auto pred = static_cast<uint32_t>(member.predicate);
      const VarId operand = s.uses[g.inputs + m];
      if (member.kind == FilterGroup::Kind::Count) {
        const Sym* lens = sym(operand, Sym::Kind::Scalar);
        if (lens == nullptr || plan_.scalars[lens->a].kind != Scalar::Kind::Length) return false;
        set(s.outs[m], Sym::Kind::PartCount, pred);
      } else {
        if (!sym(operand, Sym::Kind::Elems)) return false;
        set(s.outs[m], Sym::Kind::PartElems, pred);
      }
    }
    return true;
  }

  bool stmt(const Stmt& s) {
    auto use = [&](size_t i, Sym::Kind k) { return i < s.uses.size() ? sym(s.uses[i], k) : nullptr; };
    switch (s.op) {
      case Op::Prim: return prim(s);
      case Op::Kernel: return s.kernel != nullptr && kernel(s);
      case Op::FilterGroup: return s.filters != nullptr && filter_group(s);
      case Op::Lit:
        if (s.lit.kind() != lang::ValueKind::Int) return false;
        set(s.dst, Sym::Kind::Scalar, add(Scalar{Scalar::Kind::Const, fn_.vars.at(s.dst).type, s.lit.as_int()}));
        return true;
      case Op::Count: {
        const Sym* f = use(0, Sym::Kind::Scalar);
        if (f == nullptr) return false;
        set(s.dst, Sym::Kind::Count, f->a);
        return true;
      }
      case Op::IfNonEmpty: {  // the base branch: if_nonempty(count(F)) { pack(param, F) } else { nothing }
        const Sym* n = use(0, Sym::Kind::Count);
        const std::optional<std::pair<VarId, VarId>> pack = base_branch_pack(s);
        if (n == nullptr || !pack || !sym(pack->first, Sym::Kind::Param)) return false;
        const Sym* f = sym(pack->second, Sym::Kind::Scalar);
        if (f == nullptr || f->a != n->a) return false;
        set(s.dst, Sym::Kind::BaseBranch, f->a);
        return true;
      }
      case Op::Pack: {  // the recursing instances
        const Sym* f = use(1, Sym::Kind::Scalar);
        if (!use(0, Sym::Kind::Param) || f == nullptr || f->a != plan_.recurse) return false;
        set(s.dst, Sym::Kind::Param);
        return true;
      }
      case Op::Lengths:
        if (use(0, Sym::Kind::Param)) {
          set(s.dst, Sym::Kind::Scalar, add(Scalar{Scalar::Kind::Length, fn_.vars.at(s.dst).type}));
          return true;
        }
        if (!use(0, Sym::Kind::Children)) return false;
        set(s.dst, Sym::Kind::ChildCounts);
        return true;
      case Op::Elements:
        if (use(0, Sym::Kind::Param)) {
          set(s.dst, Sym::Kind::Elems);
          return true;
        }
        if (!use(0, Sym::Kind::Children)) return false;
        set(s.dst, Sym::Kind::NextArg);
        return true;
      case Op::Replicate: {  // a scalar spread over the instance's elements
        const Sym* x = use(0, Sym::Kind::Scalar);
        const Sym* lens = use(1, Sym::Kind::Scalar);
        if (x == nullptr || lens == nullptr || plan_.scalars[lens->a].kind != Scalar::Kind::Length) return false;
        set(s.dst, Sym::Kind::Spread, x->a);
        return true;
      }
      case Op::Nest: {
        const Sym* count = use(0, Sym::Kind::PartCount);
        const Sym* elems = use(1, Sym::Kind::PartElems);
        if (count == nullptr || elems == nullptr || count->a != elems->a) return false;
        set(s.dst, Sym::Kind::Part, count->a);
        return true;
      }
      case Op::SeqLit: {
        Sym lit{Sym::Kind::Children, 0, {}};
        for (VarId u : s.uses) {
          const Sym* p = sym(u, Sym::Kind::Part);
          if (p == nullptr) return false;
          lit.list.push_back(p->a);
        }
        if (lit.list.empty() || children_ != kNoVar) return false;
        children_ = s.dst;
        syms_[s.dst] = std::move(lit);
        return true;
      }
      default:
        return false;
    }
  }

  /// The layout's pieces as parts, each part once: a child is its predicate in the children
  /// literal, a rows piece a part of the step.
  bool laid_out_parts() {
    const LaidOut& lo = *l_.laid_out;
    if (!sym(lo.child_counts, Sym::Kind::ChildCounts)) return false;
    const Sym* children = sym(children_, Sym::Kind::Children);
    if (children == nullptr || lo.children() != children->list.size()) return false;
    std::vector<uint32_t> seen;
    for (const LaidOut::Piece& piece : lo.pieces) {
      PartitionLevels::Part part;
      if (piece.kind == LaidOut::Piece::Kind::Child) {
        if (piece.child >= children->list.size()) return false;
        part = {children->list[piece.child], true};
      } else {
        const Sym* p = sym(piece.rows, Sym::Kind::Part);
        if (p == nullptr) return false;
        part = {p->a, false};
      }
      if (std::find(seen.begin(), seen.end(), part.output) != seen.end()) return false;
      seen.push_back(part.output);
      if (part.output >= predicates_->outputs.size() || predicates_->nodes.at(predicates_->outputs[part.output]).type->kind != lang::TypeKind::Bool)
        return false;
      plan_.parts.push_back(part);
    }
    return !plan_.parts.empty();
  }

  /// The finish's base results are the argument exactly where an instance does not recurse:
  /// the layout's flags are the recurse scalar (base_when false), or its `not` from the same
  /// kernel (base_when true), and the base is `pack(param, flags)`.
  bool base_is_not_recursing() const {
    const LaidOut& lo = *l_.laid_out;
    const Sym* flags = sym(lo.flags, Sym::Kind::Scalar);
    const Sym* base = sym(lo.base, Sym::Kind::BaseBranch);
    if (flags == nullptr || base == nullptr || base->a != flags->a) return false;
    if (!lo.base_when) return flags->a == plan_.recurse;
    const Scalar& f = plan_.scalars[flags->a];
    const Scalar& r = plan_.scalars[plan_.recurse];
    if (f.kind != Scalar::Kind::Kernel || r.kind != Scalar::Kind::Kernel || f.kernel != r.kernel || f.args != r.args) return false;
    auto is_not = [&](const Scalar& x, const Scalar& y) {
      const KernelNode& n = x.kernel->nodes.at(x.kernel->outputs.at(x.output));
      return n.kind == KernelNode::Kind::Prim && n.prim == PrimId::Not && n.args.size() == 1 &&
             n.args[0] == y.kernel->outputs.at(y.output);
    };
    return is_not(f, r) || is_not(r, f);
  }

  const Function& fn_;
  const RecursionLoop& l_;
  const lang::Type* elem_ = nullptr;
  std::map<VarId, Sym> syms_;
  PartitionLevels plan_;
  std::optional<KernelBody> predicates_;
  static constexpr VarId kNoVar = ~VarId{0};
  VarId children_ = kNoVar;  // the children literal
};

}  // namespace

Program find_partition_levels(Program p) {
  for_each_loop_of_pure_functions(p, [](const Function& fn, RecursionLoop& loop) {
    if (!loop.partition) loop.partition = Finder(fn, loop).find();
  });
  return p;
}

}  // namespace ndp::flatten
