// Finding the recursion loops whose levels are regular (see find_regular_levels.h, Note
// [Regular levels] in flatten/flat_ir.h).
//
// The loop's parts are read as a symbolic evaluation of one instance: each variable is what it
// is in terms of the level's argument (the argument itself, a scalar of its length, a part of
// it, the elements of a part, an output of the elementwise kernel, ...). A statement whose
// operands are not what its form needs ends the search: the loop then stays as it is.
#include "flatten/passes/find_regular_levels.h"

#include <algorithm>
#include <map>

#include "flatten/passes/ir_walk.h"
#include "flatten/passes/loop_shapes.h"

namespace ndp::flatten {

namespace {

using PrimId = lang::core::PrimId;
using LenExpr = RegularLevels::LenExpr;

struct Sym {
  enum class Kind : uint8_t {
    Param,        // the (recursing instances of the) level's argument
    Len,          // a scalar of the length alone: expr a
    Count,        // the host count of the bool expr a
    LenList,      // per instance the sequence of exprs `list`
    BaseBranch,   // the base results: the argument where expr a holds
    Parts,        // the argument cut by the exprs `list`
    Part,         // part a of it
    PartElems,    // part a's elements
    Tuple,        // the pair of variables x, y
    MapOut,       // output a of the elementwise kernel
    Child,        // output a cut by a part's length
    Children,     // the children literal of outputs `list`
    ChildCounts,  // its lengths
    NextArg,      // its elements
    Nested,       // the calls' results cut by the child counts
    Combined,     // their concatenation (or the callee's result on the pieces)
    ChildResult,  // child a's result
    Pieces,       // children's results one after another: `list` holds child·2 + reversed
  };
  Kind kind = Kind::Param;
  uint32_t a = 0;
  std::vector<uint32_t> list;
  VarId x = 0, y = 0;
};

class Finder {
 public:
  Finder(const Program& p, const Function& fn, const RecursionLoop& l) : prog_(p), fn_(fn), l_(l) {}

  std::optional<RegularLevels> find() {
    if (fn_.has_path || !fn_.shared_bases.empty() || fn_.arg_type != fn_.result_type) return std::nullopt;
    elem_ = fn_.arg_type != nullptr && fn_.arg_type->kind == lang::TypeKind::Seq ? fn_.arg_type->a : nullptr;
    if (elem_ == nullptr || !is_flat_scalar(elem_)) return std::nullopt;
    syms_[l_.param] = Sym{Sym::Kind::Param};
    if (!block(l_.prefix)) return std::nullopt;
    const Sym* rec = sym(l_.prefix.result, Sym::Kind::Count);
    if (rec == nullptr) return std::nullopt;
    plan_.recurse = rec->a;
    if (!block(l_.step) || sym(l_.step.result, Sym::Kind::NextArg) == nullptr) return std::nullopt;
    if (parts_are_children_ != map_.outputs.empty()) return std::nullopt;  // a map, or the parts themselves
    if (!parts_are_children_) plan_.map = std::make_shared<const KernelBody>(std::move(map_));
    calls_ = l_.call_result;  // (read only by the combine's nest)
    // The combine's result is its one concatenation or call, not some other value beside it.
    if (!block(l_.combine) || l_.combine.result != combined_) return std::nullopt;
    // The finish: one merge of the base results (where F) with the combine's.
    if (l_.finish.stmts.size() != 1) return std::nullopt;
    const Stmt& m = l_.finish.stmts[0];
    if (m.op != Op::Merge || m.uses.size() != 3 || m.dst != l_.finish.result || m.uses[2] != l_.branch) return std::nullopt;
    const Sym* flags = sym(m.uses[0], Sym::Kind::Len);
    const Sym* base = sym(m.uses[1], Sym::Kind::BaseBranch);
    if (flags == nullptr || base == nullptr || flags->a != base->a) return std::nullopt;
    plan_.base_flags = flags->a;
    plan_.base_when = true;
    if (parts_are_children_ && !plan_.callee) return std::nullopt;
    return std::move(plan_);
  }

 private:
  const Sym* sym(VarId v, Sym::Kind k) const {
    auto it = syms_.find(v);
    return it != syms_.end() && it->second.kind == k && v != calls_ ? &it->second : nullptr;
  }
  uint32_t add(LenExpr e) {
    plan_.exprs.push_back(std::move(e));
    return static_cast<uint32_t>(plan_.exprs.size() - 1);
  }
  void set(VarId v, Sym s) { syms_[v] = std::move(s); }
  static Sym of(Sym::Kind k, uint32_t a = 0) { return Sym{k, a, {}, 0, 0}; }

  bool block(const Block& b) {
    for (const Stmt& s : b.stmts)
      if (!stmt(s)) return false;
    return true;
  }

  /// The elementwise kernel's body: inputs, constants and primitives that cannot fail.
  bool plain_map(const KernelBody& k) const {
    if (k.instance_at_a_time() || k.can_fail() || k.outputs.empty()) return false;
    for (const KernelNode& n : k.nodes)
      if (n.kind != KernelNode::Kind::Input && n.kind != KernelNode::Kind::Prim && n.kind != KernelNode::Kind::Const) return false;
    return std::all_of(k.inputs.begin(), k.inputs.end(), [&](const lang::Type* t) { return t == elem_; });
  }

  bool kernel(const Stmt& s) {
    const KernelBody& k = *s.kernel;
    if (s.uses.size() != k.inputs.size() || s.outs.size() != k.outputs.size()) return false;
    std::vector<uint32_t> lens, parts;
    for (VarId u : s.uses) {
      if (const Sym* x = sym(u, Sym::Kind::Len)) lens.push_back(x->a);
      else if (const Sym* p = sym(u, Sym::Kind::PartElems)) parts.push_back(p->a);
      else return false;
    }
    if (parts.empty()) {  // scalars of the length
      if (k.instance_at_a_time()) return false;
      for (size_t o = 0; o < s.outs.size(); ++o)
        set(s.outs[o], of(Sym::Kind::Len, add(LenExpr{LenExpr::Kind::Kernel, 0, s.kernel, static_cast<uint32_t>(o), lens})));
      return true;
    }
    if (!lens.empty() || !plain_map(k)) return false;
    // Joined into the one map of the level: its nodes after the earlier kernels', each input
    // the map's input of its part (Note [Regular levels]).
    const auto offset = static_cast<uint32_t>(map_.nodes.size());
    for (const KernelNode& n : k.nodes) {
      KernelNode c = n;
      if (c.kind == KernelNode::Kind::Input) {
        const uint32_t part = parts.at(c.input);
        auto at = std::find(plan_.input_parts.begin(), plan_.input_parts.end(), part);
        if (at == plan_.input_parts.end()) {
          plan_.input_parts.push_back(part);
          map_.inputs.push_back(elem_);
          at = plan_.input_parts.end() - 1;
        }
        c.input = static_cast<uint32_t>(at - plan_.input_parts.begin());
      }
      for (uint32_t& a : c.args) a += offset;
      map_.nodes.push_back(std::move(c));
    }
    for (size_t o = 0; o < s.outs.size(); ++o) {
      set(s.outs[o], of(Sym::Kind::MapOut, static_cast<uint32_t>(map_.outputs.size())));
      map_.outputs.push_back(offset + k.outputs[o]);
    }
    return true;
  }

  bool prim(const Stmt& s) {
    auto use = [&](size_t i, Sym::Kind k) { return i < s.uses.size() ? sym(s.uses[i], k) : nullptr; };
    switch (s.prim) {
      case PrimId::Length:
        if (!use(0, Sym::Kind::Param)) return false;
        set(s.dst, of(Sym::Kind::Len, add(LenExpr{LenExpr::Kind::Length})));
        return true;
      case PrimId::Partition: {
        const Sym* lens = use(1, Sym::Kind::LenList);
        if (!use(0, Sym::Kind::Param) || lens == nullptr || !plan_.parts.empty() || lens->list.empty()) return false;
        plan_.parts = lens->list;
        set(s.dst, of(Sym::Kind::Parts));
        return true;
      }
      case PrimId::Elt: {
        const Sym* at = use(1, Sym::Kind::Len);
        if (use(0, Sym::Kind::Nested) && at != nullptr && plan_.exprs[at->a].kind == LenExpr::Kind::Const) {
          const int64_t c = plan_.exprs[at->a].value;  // a child's result, in the ascent
          if (c < 0 || c >= static_cast<int64_t>(plan_.parts.size())) return false;
          set(s.dst, of(Sym::Kind::ChildResult, static_cast<uint32_t>(c)));
          return true;
        }
        if (!use(0, Sym::Kind::Parts) || at == nullptr || plan_.exprs[at->a].kind != LenExpr::Kind::Const) return false;
        const int64_t c = plan_.exprs[at->a].value;
        if (c < 0 || c >= static_cast<int64_t>(plan_.parts.size())) return false;
        set(s.dst, of(Sym::Kind::Part, static_cast<uint32_t>(c)));
        return true;
      }
      case PrimId::ReversePrim: {
        const Sym* c = use(0, Sym::Kind::ChildResult);
        if (c == nullptr) return false;
        Sym p = of(Sym::Kind::Pieces);
        p.list = {c->a * 2 + 1};
        set(s.dst, std::move(p));
        return true;
      }
      case PrimId::Append: {
        Sym p = of(Sym::Kind::Pieces);
        for (size_t i = 0; i < 2; ++i) {
          if (const Sym* c = use(i, Sym::Kind::ChildResult)) p.list.push_back(c->a * 2);
          else if (const Sym* q = use(i, Sym::Kind::Pieces)) p.list.insert(p.list.end(), q->list.begin(), q->list.end());
          else return false;
        }
        set(s.dst, std::move(p));
        return true;
      }
      case PrimId::Flatten:
        if (!use(0, Sym::Kind::Nested)) return false;
        return combined(s.dst);
      default:
        return elementwise(s);
    }
  }

  /// The ascent's call of a regular function of the map form on the children's results, each
  /// child once (Note [Regular ascents]).
  bool call(const Stmt& s) {
    const Sym* p = s.uses.size() == 1 ? sym(s.uses[0], Sym::Kind::Pieces) : nullptr;
    if (p == nullptr || plan_.callee || s.func >= prog_.functions.size()) return false;
    const Function& callee = prog_.functions[s.func];
    const Stmt* loop = callee.body.stmts.size() == 1 ? &callee.body.stmts[0] : nullptr;
    if (loop == nullptr || loop->op != Op::Recurse || !loop->loop || !loop->loop->regular || !loop->loop->regular->map ||
        callee.body.result != loop->dst || loop->uses.size() != 1 || loop->uses[0] != callee.param ||
        callee.arg_type != fn_.arg_type || callee.result_type != fn_.arg_type)
      return false;
    std::vector<bool> seen(plan_.parts.size(), false);
    for (uint32_t x : p->list) {
      const uint32_t c = x / 2;
      if (c >= seen.size() || seen[c]) return false;
      seen[c] = true;
      plan_.pieces.push_back({c, (x & 1) != 0});
    }
    if (plan_.pieces.size() != plan_.parts.size()) return false;
    plan_.callee = std::make_shared<const RegularLevels>(*loop->loop->regular);
    return combined(s.dst);
  }

  /// `v` is the combine's one result: the children's results concatenated, or the call on them.
  bool combined(VarId v) {
    if (combined_ != kNoVar) return false;
    combined_ = v;
    set(v, of(Sym::Kind::Combined));
    return true;
  }

  /// A lone elementwise primitive (one that fusion left alone): a scalar of the length, or the
  /// elementwise map as a kernel of one node.
  bool elementwise(const Stmt& s) {
    std::optional<Stmt> k = as_one_node_kernel(fn_, s);
    return k && kernel(*k);
  }

  bool stmt(const Stmt& s) {
    auto use = [&](size_t i, Sym::Kind k) { return i < s.uses.size() ? sym(s.uses[i], k) : nullptr; };
    switch (s.op) {
      case Op::Prim: return prim(s);
      case Op::Kernel: return s.kernel != nullptr && kernel(s);
      case Op::Call: return call(s);
      case Op::Lit:
        if (s.lit.kind() != lang::ValueKind::Int) return false;
        set(s.dst, of(Sym::Kind::Len, add(LenExpr{LenExpr::Kind::Const, s.lit.as_int()})));
        return true;
      case Op::Count: {
        const Sym* f = use(0, Sym::Kind::Len);
        if (f == nullptr) return false;
        set(s.dst, of(Sym::Kind::Count, f->a));
        return true;
      }
      case Op::IfNonEmpty: {  // the base branch: if_nonempty(count(F)) { pack(param, F) } else { nothing }
        const Sym* n = use(0, Sym::Kind::Count);
        const std::optional<std::pair<VarId, VarId>> pack = base_branch_pack(s);
        if (n == nullptr || !pack || !sym(pack->first, Sym::Kind::Param)) return false;
        const Sym* f = sym(pack->second, Sym::Kind::Len);
        if (f == nullptr || f->a != n->a) return false;
        set(s.dst, of(Sym::Kind::BaseBranch, f->a));
        return true;
      }
      case Op::Pack: {  // the recursing instances: all of them, where a level recurses
        const Sym* f = use(1, Sym::Kind::Len);
        if (!use(0, Sym::Kind::Param) || f == nullptr || f->a != plan_.recurse) return false;
        set(s.dst, of(Sym::Kind::Param));
        return true;
      }
      case Op::SeqLit: {
        Sym lit;
        for (VarId u : s.uses) {
          if (const Sym* e = sym(u, Sym::Kind::Len)) {
            lit.kind = Sym::Kind::LenList;
            lit.list.push_back(e->a);
          } else if (const Sym* c = sym(u, Sym::Kind::Child)) {
            lit.kind = Sym::Kind::Children;
            lit.list.push_back(c->a);
          } else {
            return false;
          }
        }
        const bool children = lit.kind == Sym::Kind::Children;
        if (s.uses.empty() || lit.list.size() != s.uses.size() ||
            std::any_of(s.uses.begin(), s.uses.end(), [&](VarId u) { return (sym(u, Sym::Kind::Child) != nullptr) != children; }))
          return false;
        if (children) {
          if (!plan_.child_outputs.empty()) return false;
          plan_.child_outputs = lit.list;
        }
        set(s.dst, std::move(lit));
        return true;
      }
      case Op::Lengths:
        if (use(0, Sym::Kind::Parts) && map_.outputs.empty()) {  // the parts are the children
          parts_are_children_ = true;
          set(s.dst, of(Sym::Kind::ChildCounts));
          return true;
        }
        if (const Sym* p = use(0, Sym::Kind::Part)) {
          set(s.dst, of(Sym::Kind::Len, plan_.parts.at(p->a)));
          return true;
        }
        if (!use(0, Sym::Kind::Children)) return false;
        set(s.dst, of(Sym::Kind::ChildCounts));
        return true;
      case Op::Elements:
        if (use(0, Sym::Kind::Parts) && map_.outputs.empty()) {
          parts_are_children_ = true;
          set(s.dst, of(Sym::Kind::NextArg));
          return true;
        }
        if (const Sym* p = use(0, Sym::Kind::Part)) {
          set(s.dst, of(Sym::Kind::PartElems, p->a));
          return true;
        }
        if (!use(0, Sym::Kind::Children)) return false;
        set(s.dst, of(Sym::Kind::NextArg));
        return true;
      case Op::CheckLengths:  // (the parts' lengths are checked equal on the host, level by level)
        return use(0, Sym::Kind::Part) && use(1, Sym::Kind::Part);
      case Op::Tuple: {
        if (s.uses.size() != 2 || !syms_.count(s.uses[0]) || !syms_.count(s.uses[1])) return false;
        Sym t = of(Sym::Kind::Tuple);
        t.x = s.uses[0];
        t.y = s.uses[1];
        set(s.dst, std::move(t));
        return true;
      }
      case Op::First:
      case Op::Second: {
        const Sym* t = use(0, Sym::Kind::Tuple);
        if (t == nullptr) return false;
        set(s.dst, syms_.at(s.op == Op::First ? t->x : t->y));
        return true;
      }
      case Op::Nest: {
        if (s.uses.size() == 2 && s.uses[1] == calls_) {  // the combine's cut of the calls' results
          if (!use(0, Sym::Kind::ChildCounts)) return false;
          set(s.dst, of(Sym::Kind::Nested));
          return true;
        }
        const Sym* len = use(0, Sym::Kind::Len);
        const Sym* out = use(1, Sym::Kind::MapOut);
        if (len == nullptr || out == nullptr || std::find(plan_.parts.begin(), plan_.parts.end(), len->a) == plan_.parts.end())
          return false;
        set(s.dst, of(Sym::Kind::Child, out->a));
        return true;
      }
      default:
        return false;
    }
  }

  const Program& prog_;
  const Function& fn_;
  const RecursionLoop& l_;
  const lang::Type* elem_ = nullptr;
  std::map<VarId, Sym> syms_;
  static constexpr VarId kNoVar = ~VarId{0};
  VarId calls_ = kNoVar;
  VarId combined_ = kNoVar;
  RegularLevels plan_;
  KernelBody map_;  // the step's elementwise kernels, joined
  bool parts_are_children_ = false;
};

/// The plan's children are the map's outputs of the argument's element type, one per part; or
/// the parts themselves, with a callee.
bool consistent(const RegularLevels& r, const lang::Type* elem) {
  if (!r.map) return r.callee != nullptr && r.child_outputs.empty() && r.pieces.size() == r.parts.size();
  if (r.child_outputs.size() != r.parts.size() || !r.pieces.empty()) return false;
  for (uint32_t o : r.child_outputs)
    if (o >= r.map->outputs.size() || r.map->nodes.at(r.map->outputs[o]).type != elem) return false;
  return true;
}

}  // namespace

Program find_regular_levels(Program p) {
  // Two sweeps: the second finds the ascents, whose callees' plans the first found.
  for (bool ascents : {false, true})
    for_each_loop_of_pure_functions(p, [&](const Function& fn, RecursionLoop& loop) {
      if (loop.regular) return;
      std::optional<RegularLevels> r = Finder(p, fn, loop).find();
      if (r && consistent(*r, fn.arg_type->a) && (r->callee != nullptr) == ascents) loop.regular = std::move(r);
    });
  return p;
}

}  // namespace ndp::flatten
