// Note [Levels in a block] (runtime/gpu/block_levels.h): the descent of a laid-out loop as the
// engine's program. The statements are those of the level in the order the executor runs them
// (exec/common/flat_walk.h, lay_out_from): the prefix, the finish's early statements, the
// placing of the finished instances, the step, the combine's early statements, the placing of
// the pieces and the move to the next level.
#include "exec/cuda/block_levels_program.h"

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>

#include "flatten/passes/fuse_elementwise.h"

namespace ndp::exec::cuda {

namespace bl = runtime::gpu::block_levels;
using flatten::Op;
using flatten::Stmt;
using flatten::VarId;
using lang::core::PrimId;

bl::Program BlockLevelsProgram::at(const void* ops_at, const void* nodes_at, const void* lists_at, const void* vars_at,
                                   int64_t cap) const {
  bl::Program p = shape;
  p.ops = static_cast<const bl::Op*>(ops_at);
  p.nodes = static_cast<const bl::Node*>(nodes_at);
  p.lists = static_cast<const int32_t*>(lists_at);
  p.vars = static_cast<const bl::Var*>(vars_at);
  p.cap = cap;
  return p;
}

namespace {

/// Why a loop is not one the engine runs.
struct Refused {
  std::string why;
};

std::optional<bl::Scalar> scalar_of(const lang::Type* t) {
  switch (t->kind) {
    case lang::TypeKind::Int: return bl::kInt;
    case lang::TypeKind::Float: return bl::kFloat;
    case lang::TypeKind::Bool: return bl::kBool;
    case lang::TypeKind::Char: return bl::kChar;
    default: return std::nullopt;
  }
}

/// The engine's primitive for p on arguments of scalar `arg`, where it has one.
std::optional<bl::Prim> prim_of(PrimId p, bl::Scalar arg) {
  const bool number = arg == bl::kInt || arg == bl::kFloat;
  const bool logical = arg == bl::kInt || arg == bl::kBool;
  switch (p) {
    case PrimId::Add: return number ? std::optional(bl::kAdd) : std::nullopt;
    case PrimId::Sub: return number ? std::optional(bl::kSub) : std::nullopt;
    case PrimId::Mul: return number ? std::optional(bl::kMul) : std::nullopt;
    case PrimId::Div: return number ? std::optional(bl::kDiv) : std::nullopt;
    case PrimId::Negate: return number ? std::optional(bl::kNeg) : std::nullopt;
    case PrimId::Rem: return arg == bl::kInt ? std::optional(bl::kRem) : std::nullopt;
    case PrimId::Lshift: return arg == bl::kInt ? std::optional(bl::kLshift) : std::nullopt;
    case PrimId::Rshift: return arg == bl::kInt ? std::optional(bl::kRshift) : std::nullopt;
    case PrimId::Eq: return bl::kEq;
    case PrimId::Ne: return bl::kNe;
    case PrimId::Lt: return bl::kLt;
    case PrimId::Gt: return bl::kGt;
    case PrimId::Le: return bl::kLe;
    case PrimId::Ge: return bl::kGe;
    case PrimId::Not: return logical ? std::optional(bl::kNot) : std::nullopt;
    case PrimId::And: return logical ? std::optional(bl::kAnd) : std::nullopt;
    case PrimId::Or: return logical ? std::optional(bl::kOr) : std::nullopt;
    case PrimId::Xor: return logical ? std::optional(bl::kXor) : std::nullopt;
    case PrimId::Select: return bl::kSelect;
    case PrimId::Btoi: return bl::kBtoi;
    case PrimId::ToFloat: return arg == bl::kInt ? std::optional(bl::kToFloat) : std::nullopt;
    default: return std::nullopt;
  }
}

class Translator {
 public:
  Translator(const flatten::Function& fn, const flatten::RecursionLoop& loop) : fn_(fn), loop_(loop) {}

  BlockLevelsProgram run() {
    const flatten::LaidOut& plan = *loop_.laid_out;
    // Reserved slots: the argument's offsets and elements, the places, the recursing
    // instances and the scratch.
    out_.shape.n_slots = kReserved;
    out_.shape.at = 2;
    out_.shape.next_at = 3;
    out_.shape.rec_ids = 4;
    out_.shape.tmp0 = 5;
    out_.shape.tmp1 = 6;
    out_.shape.tmp2 = 7;
    const int param = define(loop_.param);
    bl::Var& pv = out_.vars[static_cast<size_t>(param)];
    if (pv.shape != bl::kSeq) throw Refused{"the argument is not a sequence of scalars"};
    pv.off = 0;
    pv.data = 1;
    out_.shape.param = param;
    out_.shape.in_bytes = bytes_of(element_of(loop_.param));
    out_.shape.out_bytes = bytes_of(element_of(plan.base));

    block(loop_.prefix);
    for (uint32_t i : plan.early_finish) stmt(loop_.finish.stmts.at(i));
    bl::Op base;
    base.kind = bl::kPlaceBase;
    base.flag = plan.base_when;
    base.a = use(plan.flags);
    base.b = use(plan.base);
    base.c = use(loop_.prefix.result);
    if (shape_of(plan.base) != bl::kSeq || bytes_of(element_of(plan.base)) != out_.shape.out_bytes)
      throw Refused{"the base results are not sequences of the result's scalars"};
    emit(base);
    block(loop_.step);
    for (uint32_t i : plan.early_combine) stmt(loop_.combine.stmts.at(i));
    bl::Op place;
    place.kind = bl::kPlaceChildren;
    place.a = use(plan.child_counts);
    place.b = use(loop_.step.result);
    place.imm = plan.children();
    place.list = static_cast<int32_t>(out_.lists.size());
    int rows = 0;
    for (const flatten::LaidOut::Piece& piece : plan.pieces) {
      if (piece.kind == flatten::LaidOut::Piece::Kind::Child) {
        out_.lists.push_back(bl::kPieceChild);
        out_.lists.push_back(static_cast<int32_t>(piece.child));
      } else {
        if (++rows > 3) throw Refused{"more than three pieces of rows"};
        if (shape_of(piece.rows) != bl::kSeq || bytes_of(element_of(piece.rows)) != out_.shape.out_bytes)
          throw Refused{"a piece is not a sequence of the result's scalars"};
        out_.lists.push_back(bl::kPieceRows);
        out_.lists.push_back(use(piece.rows));
      }
    }
    place.list_n = static_cast<int32_t>(out_.lists.size()) - place.list;
    if (shape_of(loop_.step.result) != bl::kSeq) throw Refused{"the next argument is not a sequence of scalars"};
    emit(place);
    out_.shape.n_ops = static_cast<int32_t>(out_.ops.size());
    out_.shape.n_vars = static_cast<int32_t>(out_.vars.size());
    assign_slots();
    return std::move(out_);
  }

 private:
  static constexpr int kReserved = 8;
  const flatten::Function& fn_;
  const flatten::RecursionLoop& loop_;
  BlockLevelsProgram out_;
  std::map<VarId, int> ids_;  // Flat IR variable → engine variable
  /// Each engine variable's columns as storage units (views share their source's), and each
  /// unit's first definition and last use (op positions).
  std::vector<std::array<int, 3>> units_;  // data, off, off2 (-1: none)
  std::vector<int> unit_first_, unit_last_;

  const lang::Type* type_of(VarId v) const { return fn_.vars.at(v).type; }
  const lang::Type* element_of(VarId v) const {
    const lang::Type* t = type_of(v);
    return t != nullptr && t->kind == lang::TypeKind::Seq ? t->a : t;
  }
  static int bytes_of(const lang::Type* t) {
    return t != nullptr && (t->kind == lang::TypeKind::Bool || t->kind == lang::TypeKind::Char) ? 1 : 8;
  }
  bl::Shape shape_of(VarId v) const { return static_cast<bl::Shape>(out_.vars.at(static_cast<size_t>(ids_.at(v))).shape); }
  int pos() const { return static_cast<int>(out_.ops.size()); }

  int new_unit() {
    unit_first_.push_back(pos());
    unit_last_.push_back(pos());
    return static_cast<int>(unit_first_.size()) - 1;
  }
  void touch(int unit) {
    if (unit >= 0) unit_last_[static_cast<size_t>(unit)] = std::max(unit_last_[static_cast<size_t>(unit)], pos());
  }

  /// The engine variable of Flat IR v, defined here: its own columns, or `view`'s.
  int define(VarId v, const std::array<int, 3>* view = nullptr) {
    if (ids_.count(v) != 0) {
      // A second definition (the other branch of an if_nonempty): the same columns.
      const int id = ids_[v];
      for (int u : units_[static_cast<size_t>(id)]) touch(u);
      return id;
    }
    bl::Var var;
    const lang::Type* t = type_of(v);
    std::array<int, 3> units{-1, -1, -1};
    if (t != nullptr) {
      int depth = 0;
      while (t->kind == lang::TypeKind::Seq) {
        t = t->a;
        ++depth;
      }
      std::optional<bl::Scalar> sc = scalar_of(t);
      if (!sc || depth > 2) throw Refused{"a variable of a type other than scalars and their sequences"};
      var.scalar = *sc;
      var.shape = static_cast<uint8_t>(depth);
      if (view != nullptr) units = *view;
      for (int k = 0; k <= depth; ++k)
        if (units[static_cast<size_t>(k)] < 0) units[static_cast<size_t>(k)] = new_unit();
    }
    const int id = static_cast<int>(out_.vars.size());
    out_.vars.push_back(var);
    units_.push_back(units);
    ids_[v] = id;
    return id;
  }
  /// The engine variable of Flat IR v, read here.
  int use(VarId v) {
    auto it = ids_.find(v);
    if (it == ids_.end()) throw Refused{"a statement reads a variable from outside the level"};
    for (int u : units_[static_cast<size_t>(it->second)]) touch(u);
    return it->second;
  }
  int16_t use16(VarId v) { return static_cast<int16_t>(use(v)); }
  void emit(const bl::Op& op) { out_.ops.push_back(op); }

  void block(const flatten::Block& b) {
    for (const Stmt& s : b.stmts) stmt(s);
  }

  bl::Scalar scalar_at(VarId v) const {
    const lang::Type* t = element_of(v);
    std::optional<bl::Scalar> s = t != nullptr ? scalar_of(t) : std::nullopt;
    if (!s) throw Refused{"a value of another type"};
    return *s;
  }

  void stmt(const Stmt& s) {
    bl::Op op;
    switch (s.op) {
      case Op::Prim: return prim(s);
      case Op::Kernel: return kernel(s);
      case Op::Count:
      case Op::Length:
        op.kind = s.op == Op::Count ? bl::kCount : bl::kLength;
        op.a = use16(s.uses.at(0));
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Const:
        op.kind = bl::kConst;
        op.imm = s.lit.as_int();
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Lit:
        if (type_of(s.dst) == nullptr || !scalar_of(type_of(s.dst)) || !flatten::const_ok(s.lit, type_of(s.dst)))
          throw Refused{"a literal that is not a scalar"};
        op.kind = bl::kLit;
        op.a = use16(s.uses.at(0));
        op.imm = static_cast<int64_t>(flatten::const_bits(s.lit));
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Nothing:
        op.kind = bl::kNothing;
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Pack:
        op.kind = bl::kPack;
        op.a = use16(s.uses.at(0));
        op.b = use16(s.uses.at(1));
        if (shape_of(s.uses[0]) == bl::kSeq2) throw Refused{"a pack of sequences of sequences"};
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Lengths:
        op.kind = bl::kLen;
        op.a = use16(s.uses.at(0));
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::Elements: {
        op.kind = bl::kElements;
        op.a = use16(s.uses.at(0));
        const std::array<int, 3>& src = units_[static_cast<size_t>(op.a)];
        const std::array<int, 3> view = shape_of(s.uses[0]) == bl::kSeq2 ? std::array<int, 3>{src[0], src[1], -1}
                                                                          : std::array<int, 3>{src[0], -1, -1};
        op.dst = static_cast<int16_t>(define(s.dst, &view));
        return emit(op);
      }
      case Op::Nest: {
        op.kind = bl::kNest;
        op.a = use16(s.uses.at(0));
        op.b = use16(s.uses.at(1));
        if (shape_of(s.uses[1]) != bl::kFlat) throw Refused{"a nest of sequences"};
        const std::array<int, 3> view{units_[static_cast<size_t>(op.b)][0], -1, -1};
        op.dst = static_cast<int16_t>(define(s.dst, &view));
        return emit(op);
      }
      case Op::Replicate:
        op.kind = bl::kReplicate;
        op.a = use16(s.uses.at(0));
        op.b = use16(s.uses.at(1));
        if (shape_of(s.uses[0]) != bl::kFlat) throw Refused{"a replicate of sequences"};
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      case Op::SeqLit: {
        op.kind = bl::kSeqLit;
        op.list = static_cast<int32_t>(out_.lists.size());
        const bl::Shape first = shape_of(s.uses.at(0));
        for (VarId u : s.uses) {
          if (shape_of(u) != first || first == bl::kSeq2) throw Refused{"a sequence literal of nested sequences"};
          out_.lists.push_back(use(u));
        }
        op.list_n = static_cast<int32_t>(s.uses.size());
        op.dst = static_cast<int16_t>(define(s.dst));
        return emit(op);
      }
      case Op::FilterGroup: return filter_group(s);
      case Op::IfNonEmpty: return if_nonempty(s);
      default: throw Refused{std::string("a statement `") + flatten::op_name(s.op) + "`"};
    }
  }

  void prim(const Stmt& s) {
    bl::Op op;
    if (s.prim == PrimId::Length) {
      op.kind = bl::kLen;
      op.a = use16(s.uses.at(0));
      op.dst = static_cast<int16_t>(define(s.dst));
      return emit(op);
    }
    if (s.prim == PrimId::Elt) {
      op.kind = bl::kElt;
      op.a = use16(s.uses.at(0));
      op.b = use16(s.uses.at(1));
      if (shape_of(s.uses[0]) != bl::kSeq) throw Refused{"an elt of nested sequences"};
      op.dst = static_cast<int16_t>(define(s.dst));
      return emit(op);
    }
    // An elementwise primitive: a kernel of one node.
    op.kind = bl::kKernel;
    op.nodes = static_cast<int32_t>(out_.nodes.size());
    op.list = static_cast<int32_t>(out_.lists.size());
    for (size_t k = 0; k < s.uses.size(); ++k) {
      if (type_of(s.uses[k]) == nullptr || shape_of(s.uses[k]) != bl::kFlat) throw Refused{"a primitive over sequences"};
      bl::Node in;
      in.kind = bl::kNodeInput;
      in.a = static_cast<int16_t>(k);
      in.scalar = scalar_at(s.uses[k]);
      out_.nodes.push_back(in);
      out_.lists.push_back(use(s.uses[k]));
    }
    bl::Node nd;
    nd.kind = bl::kNodePrim;
    nd.scalar = scalar_at(s.dst);
    nd.arg_scalar = s.uses.empty() ? bl::kInt : scalar_at(s.uses[0]);
    if (s.prim == PrimId::Select && s.uses.size() == 3) nd.arg_scalar = scalar_at(s.uses[1]);
    std::optional<bl::Prim> p = prim_of(s.prim, static_cast<bl::Scalar>(nd.arg_scalar));
    if (!p || s.uses.empty() || s.uses.size() > 3) throw Refused{std::string("the primitive `") + std::string(lang::core::prim_info(s.prim).name) + "`"};
    nd.prim = *p;
    nd.a = 0;
    nd.b = static_cast<int16_t>(s.uses.size() > 1 ? 1 : 0);
    nd.c = static_cast<int16_t>(s.uses.size() > 2 ? 2 : 0);
    out_.nodes.push_back(nd);
    op.nodes_n = static_cast<int32_t>(s.uses.size()) + 1;
    op.imm = static_cast<int64_t>(s.uses.size());
    out_.lists.push_back(static_cast<int32_t>(s.uses.size()));  // the output's node
    op.dst = static_cast<int16_t>(define(s.dst));
    out_.lists.push_back(op.dst);
    op.list_n = static_cast<int32_t>(s.uses.size()) + 2;
    emit(op);
  }

  /// The nodes of kernel body k, appended; false where one is not the engine's.
  void nodes(const flatten::KernelBody& k) {
    if (k.loop || k.nodes.size() > static_cast<size_t>(bl::kMaxNodes)) throw Refused{"a kernel too large or looping"};
    for (const flatten::KernelNode& kn : k.nodes) {
      bl::Node nd;
      std::optional<bl::Scalar> sc = scalar_of(kn.type);
      if (!sc) throw Refused{"a kernel node of another type"};
      nd.scalar = *sc;
      switch (kn.kind) {
        case flatten::KernelNode::Kind::Input: nd.kind = bl::kNodeInput; nd.a = static_cast<int16_t>(kn.input); break;
        case flatten::KernelNode::Kind::Const:
          nd.kind = bl::kNodeConst;
          nd.imm = static_cast<int64_t>(flatten::const_bits(kn.value));
          break;
        case flatten::KernelNode::Kind::Prim: {
          if (kn.args.empty() || kn.args.size() > 3) throw Refused{"a kernel primitive of another arity"};
          nd.kind = bl::kNodePrim;
          const size_t typed = kn.prim == PrimId::Select && kn.args.size() == 3 ? 1 : 0;
          std::optional<bl::Scalar> arg = scalar_of(k.nodes.at(kn.args[typed]).type);
          std::optional<bl::Prim> p = arg ? prim_of(kn.prim, *arg) : std::nullopt;
          if (!p) throw Refused{std::string("the primitive `") + std::string(lang::core::prim_info(kn.prim).name) + "` in a kernel"};
          nd.prim = *p;
          nd.arg_scalar = *arg;
          nd.a = static_cast<int16_t>(kn.args[0]);
          nd.b = static_cast<int16_t>(kn.args.size() > 1 ? kn.args[1] : 0);
          nd.c = static_cast<int16_t>(kn.args.size() > 2 ? kn.args[2] : 0);
          break;
        }
        default: throw Refused{"a kernel that reads sequences or folds"};
      }
      out_.nodes.push_back(nd);
    }
  }

  void kernel(const Stmt& s) {
    bl::Op op;
    op.kind = bl::kKernel;
    op.nodes = static_cast<int32_t>(out_.nodes.size());
    nodes(*s.kernel);
    op.nodes_n = static_cast<int32_t>(s.kernel->nodes.size());
    op.list = static_cast<int32_t>(out_.lists.size());
    if (s.uses.size() > static_cast<size_t>(bl::kMaxInputs)) throw Refused{"a kernel of too many inputs"};
    for (VarId u : s.uses) {
      if (shape_of(u) != bl::kFlat) throw Refused{"a kernel over sequences"};
      out_.lists.push_back(use(u));
    }
    op.imm = static_cast<int64_t>(s.uses.size());
    for (size_t o = 0; o < s.outs.size(); ++o) {
      out_.lists.push_back(static_cast<int32_t>(s.kernel->outputs.at(o)));
      out_.lists.push_back(define(s.outs[o]));
    }
    op.dst = static_cast<int16_t>(ids_.at(s.outs.at(0)));
    op.list_n = static_cast<int32_t>(out_.lists.size()) - op.list;
    emit(op);
  }

  void filter_group(const Stmt& s) {
    const flatten::FilterGroup& g = *s.filters;
    bl::Op op;
    op.kind = bl::kFilterGroup;
    op.nodes = static_cast<int32_t>(out_.nodes.size());
    if (s.kernel) {
      nodes(*s.kernel);
      op.nodes_n = static_cast<int32_t>(s.kernel->nodes.size());
    }
    op.list = static_cast<int32_t>(out_.lists.size());
    if (g.inputs > static_cast<uint32_t>(bl::kMaxInputs)) throw Refused{"a filter group of too many inputs"};
    for (uint32_t k = 0; k < g.inputs; ++k) {
      if (shape_of(s.uses.at(k)) != bl::kFlat) throw Refused{"a filter over sequences"};
      out_.lists.push_back(use(s.uses[k]));
    }
    op.imm = g.inputs;
    if (g.members.size() > 63) throw Refused{"a filter group of more than 63 members"};
    std::vector<int32_t> operands;
    for (size_t m = 0; m < g.members.size(); ++m) {
      const VarId operand = s.uses.at(g.inputs + m);
      if (shape_of(operand) != bl::kFlat) throw Refused{"a filter of sequences"};
      operands.push_back(use(operand));
    }
    for (size_t m = 0; m < g.members.size(); ++m) {
      const flatten::FilterGroup::Member& mem = g.members[m];
      out_.lists.push_back(mem.kind == flatten::FilterGroup::Kind::Count ? bl::kMemberCount : bl::kMemberPack);
      out_.lists.push_back(mem.predicate >= 0 ? static_cast<int32_t>(s.kernel->outputs.at(static_cast<size_t>(mem.predicate)))
                                              : mem.predicate);
      out_.lists.push_back(operands[m]);
      out_.lists.push_back(define(s.outs.at(m)));
    }
    op.dst = static_cast<int16_t>(ids_.at(s.outs.at(0)));
    op.list_n = static_cast<int32_t>(out_.lists.size()) - op.list;
    emit(op);
  }

  void if_nonempty(const Stmt& s) {
    if (type_of(s.dst) == nullptr) throw Refused{"an if_nonempty of a host value"};
    bl::Op test;
    test.kind = bl::kJumpIfZero;
    test.a = use16(s.uses.at(0));
    const size_t test_at = out_.ops.size();
    emit(test);
    branch(*s.then_block, s.dst);
    bl::Op jump;
    jump.kind = bl::kJump;
    const size_t jump_at = out_.ops.size();
    emit(jump);
    out_.ops[test_at].imm = pos();
    branch(*s.else_block, s.dst);
    out_.ops[jump_at].imm = pos();
  }

  /// The block's statements, then its result copied to `dst`.
  void branch(const flatten::Block& b, VarId dst) {
    block(b);
    bl::Op copy;
    copy.kind = bl::kCopy;
    copy.a = use16(b.result);
    copy.dst = static_cast<int16_t>(define(dst));
    emit(copy);
  }

  /// Slots for the units: in op order, each unit takes a slot no live unit holds; a unit's
  /// slot is free again after the op of its last use (never at that op: an op's outputs do
  /// not overwrite its operands).
  void assign_slots() {
    std::vector<size_t> order(unit_first_.size());
    for (size_t u = 0; u < order.size(); ++u) order[u] = u;
    // The argument's two units hold the reserved slots 0 and 1.
    const std::array<int, 3>& param_units = units_[static_cast<size_t>(out_.shape.param)];
    std::vector<int> slot_of(unit_first_.size(), -1);
    slot_of[static_cast<size_t>(param_units[0])] = 1;  // its elements
    slot_of[static_cast<size_t>(param_units[1])] = 0;  // its offsets
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return unit_first_[a] < unit_first_[b]; });
    std::vector<int> busy_until;  // per slot past the reserved: the last use of its unit
    for (size_t u : order) {
      if (slot_of[u] >= 0) continue;
      int chosen = -1;
      for (size_t k = 0; k < busy_until.size(); ++k)
        if (busy_until[k] < unit_first_[u]) {
          chosen = static_cast<int>(k);
          break;
        }
      if (chosen < 0) {
        chosen = static_cast<int>(busy_until.size());
        busy_until.push_back(0);
      }
      busy_until[static_cast<size_t>(chosen)] = unit_last_[u];
      slot_of[u] = kReserved + chosen;
    }
    out_.shape.n_slots = kReserved + static_cast<int32_t>(busy_until.size());
    for (size_t v = 0; v < out_.vars.size(); ++v) {
      const std::array<int, 3>& units = units_[v];
      bl::Var& var = out_.vars[v];
      auto at = [&](int u) { return static_cast<int16_t>(u >= 0 ? slot_of[static_cast<size_t>(u)] : -1); };
      switch (var.shape) {
        case bl::kFlat: var.data = at(units[0]); break;
        case bl::kSeq: var.data = at(units[0]); var.off = at(units[1]); break;
        default: var.data = at(units[0]); var.off = at(units[1]); var.off2 = at(units[2]); break;
      }
    }
  }
};

}  // namespace

std::optional<BlockLevelsProgram> block_levels_program(const flatten::Function& fn, const Stmt& s, std::string* why) {
  if (s.op != Op::Recurse || !s.loop || !s.loop->laid_out) {
    if (why) *why = "not a laid-out recursion";
    return std::nullopt;
  }
  try {
    return Translator(fn, *s.loop).run();
  } catch (const Refused& r) {
    if (why) *why = r.why;
    return std::nullopt;
  } catch (const std::out_of_range&) {
    if (why) *why = "a statement of another form";
    return std::nullopt;
  }
}

}  // namespace ndp::exec::cuda
