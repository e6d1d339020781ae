// Scalar loops as one kernel: a Core function body compiled to the nodes of one iteration
// (Note [Loop kernels] in flatten/flat_ir.h).
#include "flatten/loop_kernels.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "flatten/passes/fuse_elementwise.h"

namespace ndp::flatten {

namespace core = lang::core;
using lang::Type;
using lang::TypeKind;
using core::PrimId;

lang::Value identity_of_plain(const Type* t) {
  switch (t->kind) {
    case TypeKind::Float: return lang::Value::float_(0.0);
    case TypeKind::Bool: return lang::Value::bool_(false);
    case TypeKind::Char: return lang::Value::char_(' ');
    case TypeKind::I32: return lang::Value::i32(0);
    case TypeKind::F32: return lang::Value::f32(0.0f);
    default: return lang::Value::int_(0);
  }
}

namespace {

/// Thrown where the body leaves what a loop kernel computes.
struct NotALoop {};

/// A value while compiling: a node holding a flat scalar, a pair of values, or a sequence
/// (`seq` >= 0: KernelBody::seqs[seq], `node` the instance's row of it, and `writes` the
/// SeqWrite nodes that made this value from the state the iteration started with).
struct Sym {
  uint32_t node = 0;
  std::shared_ptr<const std::pair<Sym, Sym>> pair;
  int seq = -1;
  std::shared_ptr<const std::vector<uint32_t>> writes;  // sorted; null: none
};

size_t write_count(const Sym& v) { return v.writes ? v.writes->size() : 0; }

/// What a tail position gives: a value (the loop is done), a self-call (it goes on with `next`),
/// or, through ifs, either, as node `done` says.
struct Outcome {
  enum class Done { Always, Never, ByNode } done = Done::Always;
  uint32_t done_node = 0;
  std::optional<Sym> value;  // where it may be done
  std::optional<Sym> next;   // where it may go on
};

/// The frame of one function body being compiled: its slots and its type arguments.
struct Scope {
  const std::vector<const Type*>* targs;
  std::map<uint32_t, Sym> slots;
};

constexpr size_t kMaxNodes = 4096;  // a larger body is left to the flattened loop
constexpr int kMaxCallDepth = 16;   // calls compiled in place, nested

class LoopCompiler {
 public:
  LoopCompiler(core::Program& prog, const core::Function& fn, const std::vector<const Type*>& targs)
      : prog_(prog), types_(prog.types), fn_(fn), targs_(targs) {}

  LoopKernel compile(const core::Expr* body, const std::set<uint32_t>& shared) {
    Scope scope{&targs_, {}};
    Sym param = parameter(fn_.param, close(fn_.param->type, scope), shared);
    bind(fn_.param, param, scope);
    Outcome o = tail(body, scope, std::nullopt);
    if (!o.value || !o.next || o.done != Outcome::Done::ByNode || !same_seqs(param, *o.next)) throw NotALoop{};
    k_.loop = true;
    k_.loop_done = o.done_node;
    leaves(*o.next, k_.loop_next, nullptr);
    leaves(*o.value, k_.outputs, &k_.seq_outputs);
    if (k_.loop_next.size() != k_.inputs.size()) throw NotALoop{};
    for (size_t i = 0; i < k_.inputs.size(); ++i)
      if (k_.nodes[k_.loop_next[i]].type != k_.inputs[i]) throw NotALoop{};
    // Note [Sequence state in loop kernels]: an iteration that goes on stores every write it
    // made, so the state passed on must hold each of them.
    for (uint32_t q : k_.seq_outputs) k_.seqs[q].written = true;
    for (size_t q = 0; q < k_.seqs.size(); ++q)
      if (k_.seqs[q].written && written_by(*o.next, static_cast<int>(q)) != writes_[q]) throw NotALoop{};
    return LoopKernel{std::move(k_), std::move(sources_)};
  }

 private:
  core::Program& prog_;
  lang::TypeContext& types_;
  const core::Function& fn_;
  const std::vector<const Type*>& targs_;
  KernelBody k_;
  std::vector<LoopKernel::Source> sources_;  // where each sequence comes from
  std::map<size_t, std::vector<uint32_t>> writes_;  // by sequence: every SeqWrite node made
  std::optional<uint32_t> instance_;                // the Instance node, once made
  uint32_t per_instance_seqs_ = 0;
  int depth_ = 0;

  const Type* close(const Type* t, const Scope& s) { return s.targs->empty() ? t : types_.subst(t, *s.targs); }

  uint32_t add(KernelNode n) {
    if (k_.nodes.size() >= kMaxNodes) throw NotALoop{};
    k_.nodes.push_back(std::move(n));
    return static_cast<uint32_t>(k_.nodes.size() - 1);
  }

  uint32_t constant(lang::Value v, const Type* t) {
    if (!const_ok(v, t)) throw NotALoop{};
    KernelNode n;
    n.kind = KernelNode::Kind::Const;
    n.value = std::move(v);
    n.type = t;
    return add(std::move(n));
  }

  uint32_t prim(PrimId p, std::vector<uint32_t> args, const Type* t, lang::Span span = {}) {
    KernelNode n;
    n.kind = KernelNode::Kind::Prim;
    n.prim = p;
    n.args = std::move(args);
    n.type = t;
    n.span = span;
    return add(std::move(n));
  }

  const Type* type_of(uint32_t node) const { return k_.nodes[node].type; }

  /// The inputs of the parameter pattern `p` of type `t`: a shared sequence is read in place
  /// and its row id is an input (Note [Sequences in loop kernels]); the rest by inputs().
  Sym parameter(const core::Pattern* p, const Type* t, const std::set<uint32_t>& shared) {
    if (p->kind == core::PatternKind::Tuple && t->kind == TypeKind::Pair) {
      Sym a = parameter(p->left, t->a, shared);
      return pair(std::move(a), parameter(p->right, t->b, shared));
    }
    if (p->kind != core::PatternKind::Var || !shared.count(p->slot)) return inputs(t);
    Sym rows = inputs(types_.int_());
    rows.seq = new_seq(t, LoopKernel::Source{true, p->slot});
    return rows;
  }

  /// A sequence of type t the loop reads; its index in KernelBody::seqs.
  int new_seq(const Type* t, LoopKernel::Source from) {
    KernelBody::Seq seq;
    if (t->kind != TypeKind::Seq || !flat_components(t->a, seq.components)) throw NotALoop{};
    k_.seqs.push_back(std::move(seq));
    sources_.push_back(from);
    return static_cast<int>(k_.seqs.size() - 1);
  }

  /// The SeqWrite nodes of sequence q that `v` holds (it must hold that sequence only once).
  static std::vector<uint32_t> written_by(const Sym& v, int q) {
    if (v.pair) {
      std::vector<uint32_t> a = written_by(v.pair->first, q), b = written_by(v.pair->second, q);
      if (!a.empty() && !b.empty()) throw NotALoop{};
      return a.empty() ? b : a;
    }
    return v.seq == q && v.writes ? *v.writes : std::vector<uint32_t>{};
  }

  /// Whether `next` passes every sequence of `param` on unchanged, at its place.
  static bool same_seqs(const Sym& param, const Sym& next) {
    if (param.pair && next.pair) return same_seqs(param.pair->first, next.pair->first) && same_seqs(param.pair->second, next.pair->second);
    if (param.pair || next.pair) return false;
    return param.seq == next.seq;
  }

  /// One input per flat scalar leaf of `t`, in order; a sequence leaf is read in place, each
  /// instance its own row.
  Sym inputs(const Type* t) {
    if (t->kind == TypeKind::Pair) {
      Sym a = inputs(t->a);  // first: inputs are numbered in order
      return pair(std::move(a), inputs(t->b));
    }
    if (t->kind == TypeKind::Seq) {
      if (!instance_) {
        KernelNode n;
        n.kind = KernelNode::Kind::Instance;
        n.type = types_.int_();
        instance_ = add(std::move(n));
      }
      Sym rows{*instance_, nullptr};
      rows.seq = new_seq(t, LoopKernel::Source{false, per_instance_seqs_++});
      return rows;
    }
    if (!t->is_scalar()) throw NotALoop{};
    KernelNode n;
    n.kind = KernelNode::Kind::Input;
    n.input = static_cast<uint32_t>(k_.inputs.size());
    n.type = t;
    k_.inputs.push_back(t);
    return Sym{add(std::move(n)), nullptr};
  }

  static Sym pair(Sym a, Sym b) { return Sym{0, std::make_shared<const std::pair<Sym, Sym>>(std::move(a), std::move(b))}; }

  /// The nodes of v's flat scalar leaves and of its shared sequences' row ids (the inputs'
  /// order); its other sequences go to `seqs` (a result's), or nowhere (the next state's).
  void leaves(const Sym& v, std::vector<uint32_t>& out, std::vector<uint32_t>* seqs) const {
    if (v.pair) {
      leaves(v.pair->first, out, seqs);
      leaves(v.pair->second, out, seqs);
    } else if (v.seq < 0 || sources_[static_cast<size_t>(v.seq)].shared) {
      if (seqs && v.seq >= 0) throw NotALoop{};  // a shared sequence as the result
      out.push_back(v.node);
    } else if (seqs) {
      if (write_count(v) > 0) throw NotALoop{};  // a done iteration stores nothing
      seqs->push_back(static_cast<uint32_t>(v.seq));
    }
  }

  static uint32_t scalar(const Sym& v) {
    if (v.pair || v.seq >= 0) throw NotALoop{};
    return v.node;
  }

  void bind(const core::Pattern* p, const Sym& v, Scope& s) {
    switch (p->kind) {
      case core::PatternKind::Var: s.slots[p->slot] = v; return;
      case core::PatternKind::Tuple:
        if (!v.pair) throw NotALoop{};
        bind(p->left, v.pair->first, s);
        bind(p->right, v.pair->second, s);
        return;
      case core::PatternKind::Con: throw NotALoop{};
    }
  }

  /// Leaf by leaf: c ? a : b.
  Sym select(uint32_t c, const Sym& a, const Sym& b) {
    if (a.pair && b.pair) return pair(select(c, a.pair->first, b.pair->first), select(c, a.pair->second, b.pair->second));
    if (a.pair || b.pair || a.seq != b.seq || type_of(a.node) != type_of(b.node)) throw NotALoop{};
    if (a.seq >= 0) {
      // One sequence: the writes of both branches, each guarded by its own branch.
      if (a.node != b.node) throw NotALoop{};
      Sym both = a;
      std::vector<uint32_t> w;
      std::set_union(a.writes ? a.writes->begin() : w.end(), a.writes ? a.writes->end() : w.end(),
                     b.writes ? b.writes->begin() : w.end(), b.writes ? b.writes->end() : w.end(), std::back_inserter(w));
      both.writes = std::make_shared<const std::vector<uint32_t>>(std::move(w));
      return both;
    }
    if (a.node == b.node) return a;
    return Sym{prim(PrimId::Select, {c, a.node, b.node}, type_of(a.node)), nullptr};
  }

  /// The guard of a branch: the enclosing guard and the branch's condition.
  uint32_t guarded(std::optional<uint32_t> guard, uint32_t cond) {
    return guard ? prim(PrimId::And, {*guard, cond}, types_.bool_()) : cond;
  }

  /// Whether `e` calls fn_ itself at its own type arguments.
  bool self_call(const core::Expr* e, const Scope& s) {
    if (e->kind != core::Kind::Call || e->args[0]->kind != core::Kind::FnRef || e->args[0]->id != fn_.global) return false;
    for (size_t i = 0; i < e->args[0]->type_args.size(); ++i)
      if (i >= targs_.size() || close(e->args[0]->type_args[i], s) != targs_[i]) return false;
    return e->args[0]->type_args.size() == targs_.size();
  }

  Outcome tail(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    switch (e->kind) {
      case core::Kind::Let:
        bind(e->pattern, value(e->args[0], s, guard), s);
        return tail(e->args[1], s, guard);
      case core::Kind::If: {
        uint32_t c = scalar(value(e->args[0], s, guard));
        Outcome a = tail(e->args[1], s, guarded(guard, c));
        uint32_t not_c = prim(PrimId::Not, {c}, types_.bool_());
        Outcome b = tail(e->args[2], s, guarded(guard, not_c));
        return combine(c, a, b);
      }
      default:
        if (self_call(e, s)) {
          Outcome o;
          o.done = Outcome::Done::Never;
          o.next = value(e->args[1], s, guard);
          return o;
        }
        Outcome o;
        o.value = value(e, s, guard);
        return o;
    }
  }

  uint32_t done_node(const Outcome& o) {
    switch (o.done) {
      case Outcome::Done::Always: return constant(lang::Value::bool_(true), types_.bool_());
      case Outcome::Done::Never: return constant(lang::Value::bool_(false), types_.bool_());
      case Outcome::Done::ByNode: return o.done_node;
    }
    return 0;
  }

  Outcome combine(uint32_t c, const Outcome& a, const Outcome& b) {
    Outcome o;
    if (a.done == b.done && a.done != Outcome::Done::ByNode) {
      o.done = a.done;
    } else {
      o.done = Outcome::Done::ByNode;
      o.done_node = a.done == Outcome::Done::Always && b.done == Outcome::Done::Never ? c
                                                                                        : prim(PrimId::Select, {c, done_node(a), done_node(b)}, types_.bool_());
    }
    auto either = [&](const std::optional<Sym>& x, const std::optional<Sym>& y) -> std::optional<Sym> {
      if (x && y) return select(c, *x, *y);
      return x ? x : y;
    };
    o.value = either(a.value, b.value);
    o.next = either(a.next, b.next);
    return o;
  }

  Sym value(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    switch (e->kind) {
      case core::Kind::Lit: return Sym{constant(e->lit, close(e->type, s)), nullptr};
      case core::Kind::Local: {
        auto it = s.slots.find(e->slot);
        if (it == s.slots.end()) throw NotALoop{};
        return it->second;
      }
      case core::Kind::Tuple: {
        Sym a = value(e->args[0], s, guard);
        return pair(std::move(a), value(e->args[1], s, guard));
      }
      case core::Kind::Let: case core::Kind::If: {
        // As a tail position, whose every branch must give a value (no call of fn_ itself).
        Outcome o = tail(e, s, guard);
        if (o.done != Outcome::Done::Always) throw NotALoop{};
        return *o.value;
      }
      case core::Kind::Prim: return primitive(e, s, guard);
      case core::Kind::Call: return call(e, s, guard);
      default: throw NotALoop{};
    }
  }

  /// `#rows` or `rows[i]` of a shared sequence: the element's components, each a SeqElt node
  /// that fails out of bounds only where `guard` holds.
  std::optional<Sym> sequence_read(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->prim != PrimId::Length && e->prim != PrimId::Elt) return std::nullopt;
    Sym rows = value(e->args[0], s, guard);
    if (rows.seq < 0) return std::nullopt;
    if (write_count(rows) > 0) throw NotALoop{};  // reads see the state the iteration started with
    KernelNode n;
    n.input = static_cast<uint32_t>(rows.seq);
    n.args = {rows.node};
    if (e->prim == PrimId::Length) {
      n.kind = KernelNode::Kind::SeqLength;
      n.type = types_.int_();
      return Sym{add(std::move(n)), nullptr};
    }
    n.kind = KernelNode::Kind::SeqElt;
    n.span = e->span;
    n.args.push_back(scalar(value(e->args[1], s, guard)));
    if (type_of(n.args.back()) != types_.int_()) throw NotALoop{};
    if (guard) n.args.push_back(*guard);
    uint32_t component = 0;
    return element(n, close(e->type, s), component);
  }

  /// `rep(rows, x, i)` of a sequence in the state (Note [Sequence state in loop kernels]): a
  /// SeqWrite node per flat component of x, stored when the iteration goes on.
  std::optional<Sym> sequence_write(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->prim != PrimId::Rep) return std::nullopt;
    Sym rows = value(e->args[0], s, guard);
    if (rows.seq < 0) return std::nullopt;
    const size_t q = static_cast<size_t>(rows.seq);
    if (sources_[q].shared) throw NotALoop{};  // every instance's copy would differ
    Sym x = value(e->args[1], s, guard);
    uint32_t index = scalar(value(e->args[2], s, guard));
    if (type_of(index) != types_.int_()) throw NotALoop{};
    std::vector<uint32_t> parts;
    leaves(x, parts, nullptr);
    if (holds_seq_or_mismatch(x, parts, k_.seqs[q].components)) throw NotALoop{};
    k_.seqs[q].written = true;
    std::vector<uint32_t> w = rows.writes ? *rows.writes : std::vector<uint32_t>{};
    for (uint32_t c = 0; c < parts.size(); ++c) {
      KernelNode n;
      n.kind = KernelNode::Kind::SeqWrite;
      n.input = static_cast<uint32_t>(q);
      n.component = c;
      n.type = k_.seqs[q].components[c];
      n.span = e->span;
      n.args = {rows.node, index, parts[c]};
      if (guard) n.args.push_back(*guard);
      uint32_t node = add(std::move(n));
      w.push_back(node);
      writes_[q].push_back(node);
    }
    rows.writes = std::make_shared<const std::vector<uint32_t>>(std::move(w));
    return rows;
  }

  /// Whether x (with leaf nodes `parts`) is not a value of the flat components `types`.
  bool holds_seq_or_mismatch(const Sym& x, const std::vector<uint32_t>& parts, const std::vector<const Type*>& types) const {
    if (holds_seq(x) || parts.size() != types.size()) return true;
    for (size_t i = 0; i < parts.size(); ++i)
      if (type_of(parts[i]) != types[i]) return true;
    return false;
  }

  static bool holds_seq(const Sym& v) {
    return v.seq >= 0 || (v.pair && (holds_seq(v.pair->first) || holds_seq(v.pair->second)));
  }

  /// The element of type `t` whose first flat component is number `component`.
  Sym element(const KernelNode& read, const Type* t, uint32_t& component) {
    if (t->kind == TypeKind::Pair) {
      Sym a = element(read, t->a, component);
      return pair(std::move(a), element(read, t->b, component));
    }
    KernelNode n = read;
    n.component = component++;
    n.type = t;
    return Sym{add(std::move(n)), nullptr};
  }

  Sym primitive(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (std::optional<Sym> read = sequence_read(e, s, guard)) return *read;
    if (std::optional<Sym> written = sequence_write(e, s, guard)) return *written;
    const Type* result = close(e->type, s);
    if (!result->is_scalar()) throw NotALoop{};
    std::vector<uint32_t> args;
    std::vector<const Type*> arg_types;
    for (const core::Expr* a : e->args) {
      args.push_back(scalar(value(a, s, guard)));
      arg_types.push_back(type_of(args.back()));
    }
    if (e->prim == PrimId::Identity) return Sym{constant(identity_of_plain(result), result), nullptr};
    if (kernel_prim_ok(e->prim, arg_types, result)) return Sym{prim(e->prim, std::move(args), result, e->span), nullptr};
    if (!kernel_prim_fallible(e->prim, arg_types, result)) throw NotALoop{};
    // Both branches of an if run: where this one's guard is false, the node reads ones, which
    // no fallible primitive fails on (Note [Loop kernels]).
    if (guard)
      for (uint32_t& a : args) {
        uint32_t one = constant(one_of(type_of(a)), type_of(a));
        a = prim(PrimId::Select, {*guard, a, one}, type_of(a));
      }
    return Sym{prim(e->prim, std::move(args), result, e->span), nullptr};
  }

  static lang::Value one_of(const Type* t) {
    switch (t->kind) {
      case TypeKind::Float: return lang::Value::float_(1.0);
      case TypeKind::Bool: return lang::Value::bool_(true);
      case TypeKind::Char: return lang::Value::char_('1');
      case TypeKind::I32: return lang::Value::i32(1);
      case TypeKind::F32: return lang::Value::f32(1.0f);
      default: return lang::Value::int_(1);
    }
  }

  /// A call of another function: its body compiled in place, in a scope of its own.
  Sym call(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    const core::Expr* callee = e->args[0];
    if (callee->kind != core::Kind::FnRef || self_call(e, s) || depth_ >= kMaxCallDepth) throw NotALoop{};
    const core::Global& g = *prog_.globals.at(callee->id);
    if (g.kind != core::Global::Kind::Function || !g.fn.body) throw NotALoop{};
    Sym arg = value(e->args[1], s, guard);
    std::vector<const Type*> targs;
    for (const Type* t : callee->type_args) targs.push_back(close(t, s));
    Scope inner{&targs, {}};
    bind(g.fn.param, arg, inner);
    ++depth_;
    Sym r = value(g.fn.body, inner, guard);
    --depth_;
    return r;
  }
};

/// Whether `e` holds a call of the function with global id `self` (cheap: it decides whether
/// compiling is worth trying).
bool calls(const core::Expr* e, uint32_t self) {
  if (e->kind == core::Kind::Call && e->args[0]->kind == core::Kind::FnRef && e->args[0]->id == self) return true;
  for (const core::Expr* a : e->args)
    if (calls(a, self)) return true;
  return false;
}

}  // namespace

std::optional<LoopKernel> loop_kernel(core::Program& prog, const core::Function& fn, const core::Expr* body,
                                      const std::vector<const Type*>& targs, const std::set<uint32_t>& shared) {
  if (!calls(body, fn.global)) return std::nullopt;
  try {
    return LoopCompiler(prog, fn, targs).compile(body, shared);
  } catch (const NotALoop&) {
    return std::nullopt;
  }
}

}  // namespace ndp::flatten
