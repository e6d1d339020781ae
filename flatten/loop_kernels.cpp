// Scalar loops as one kernel: a Core function body compiled to the nodes of one iteration
// (Note [Loop kernels] in flatten/flat_ir.h).
#include "flatten/loop_kernels.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <set>

#include "flatten/passes/fuse_elementwise.h"
#include "lang/runtime_errors.h"

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

/// A value while compiling: a node holding a flat scalar, a pair of values, a sequence
/// (`seq` >= 0: KernelBody::seqs[seq], `node` the instance's row of it, and `writes` the
/// SeqWrite or SeqAppend nodes that made this value from the state the iteration started
/// with), or a sequence never stored (`virt`).
struct Virtual;
struct Sym {
  uint32_t node = 0;
  std::shared_ptr<const std::pair<Sym, Sym>> pair;
  int seq = -1;
  std::shared_ptr<const std::vector<uint32_t>> writes;  // SeqWrite or SeqAppend nodes, sorted; null: none
  std::shared_ptr<const Virtual> virt;                  // a sequence never stored (Note [Folds in kernels])
};

/// A sequence by its length (a node) and a function that emits the nodes of its element at an
/// index node (Note [Folds in kernels]): an apply-to-each, a range, or the elements of a
/// sequence the loop reads.
struct Virtual {
  uint32_t length = 0;
  std::function<Sym(uint32_t)> element;
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
  /// `fn`: the loop function, or null for a map kernel (Note [Map kernels]).
  LoopCompiler(core::Program& prog, const core::Function* fn, const std::vector<const Type*>& targs)
      : prog_(prog), types_(prog.types), fn_(fn), targs_(targs) {}

  LoopKernel compile(const core::Expr* body, const std::set<uint32_t>& shared) {
    Scope scope{&targs_, {}};
    Sym param = parameter(fn_->param, close(fn_->param->type, scope), shared);
    bind(fn_->param, param, scope);
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
    for (uint32_t q : k_.seq_outputs)
      if (!k_.seqs[q].appended) k_.seqs[q].written = true;
    for (size_t q = 0; q < k_.seqs.size(); ++q)
      if (k_.seqs[q].written && written_by(*o.next, static_cast<int>(q)) != writes_[q]) throw NotALoop{};
    // Note [Appended sequences in loop kernels]: every iteration, done or not, makes the appends
    // whose guards hold, so a tail holds each of them but one whose guard says it is the other
    // tail (the appends of a branch that goes on); and nothing reads the sequence.
    for (size_t q = 0; q < k_.seqs.size(); ++q) {
      if (!k_.seqs[q].appended) continue;
      const int sq = static_cast<int>(q);
      const std::vector<uint32_t> next = written_by(*o.next, sq), result = written_by(*o.value, sq);
      for (uint32_t w : writes_[q]) {
        const KernelNode& n = k_.nodes[w];
        const bool guarded = n.args.size() > 2;
        const bool in_next = std::binary_search(next.begin(), next.end(), w);
        const bool in_result = std::binary_search(result.begin(), result.end(), w);
        if (!in_next && !(guarded && implies(n.args[2], o.done_node))) throw NotALoop{};
        if (!in_result && !(guarded && implies_not(n.args[2], o.done_node))) throw NotALoop{};
      }
      for (const KernelNode& n : k_.nodes)
        if (n.input == q && (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt ||
                             n.kind == KernelNode::Kind::SeqWrite))
          throw NotALoop{};
    }
    return LoopKernel{std::move(k_), std::move(sources_)};
  }

  /// Note [Map kernels]: the body of an apply-to-each, its free variables and generator
  /// elements `slots` bound to inputs in order (a shared sequence to its row id, the rest by
  /// inputs()); its value is the output.
  LoopKernel compile_map(const core::Expr* body, const std::vector<MapKernelSlot>& slots) {
    Scope scope{&targs_, {}};
    for (const MapKernelSlot& slot : slots) {
      if (!slot.shared) {
        scope.slots[slot.slot] = inputs(slot.type);
        continue;
      }
      Sym rows = inputs(types_.int_());
      rows.seq = new_seq(slot.type, LoopKernel::Source{true, slot.slot});
      if (slot.own_row) own_rows_.insert(static_cast<uint32_t>(rows.seq));
      scope.slots[slot.slot] = rows;
    }
    Sym v = value(body, scope, std::nullopt);
    std::vector<uint32_t> seq_outputs;
    leaves(v, k_.outputs, &seq_outputs);
    if (!seq_outputs.empty() || !k_.folds()) throw NotALoop{};
    const bool own_rows_only = !folds_beyond_rows();
    // Without an input the kernel would not know its instances' number.
    const bool count_input = k_.inputs.empty();
    if (count_input) inputs(types_.int_());
    LoopKernel r{std::move(k_), std::move(sources_)};
    r.count_input = count_input;
    r.own_rows_only = own_rows_only;
    return r;
  }

 private:
  /// Whether some fold runs over more than the instance's own row: a range, a free sequence
  /// or an apply-to-each over one, which flattening would have to store (Note [Map kernels]).
  bool folds_beyond_rows() const {
    for (const KernelNode& n : k_.nodes) {
      if (n.kind != KernelNode::Kind::Fold) continue;
      const KernelNode& count = k_.nodes[n.args[0]];
      if (count.kind != KernelNode::Kind::SeqLength || (sources_[count.input].shared && !own_rows_.count(count.input)))
        return true;
    }
    return false;
  }
  std::set<uint32_t> own_rows_;  // map kernel: the shared sequences that are each instance's own row

  core::Program& prog_;
  lang::TypeContext& types_;
  const core::Function* fn_;  // null: a map kernel
  const std::vector<const Type*>& targs_;
  KernelBody k_;
  std::vector<LoopKernel::Source> sources_;  // where each sequence comes from
  std::map<size_t, std::vector<uint32_t>> writes_;  // by sequence: every SeqWrite node made
  std::optional<uint32_t> instance_;                // the Instance node, once made
  std::vector<const Type*> seq_elems_;              // the element type of each sequence
  std::deque<std::vector<const Type*>> targs_kept_;  // the type arguments of calls compiled in place
  uint32_t per_instance_seqs_ = 0;
  int depth_ = 0;

  const Type* close(const Type* t, const Scope& s) { return s.targs->empty() ? t : types_.subst(t, *s.targs); }

  uint32_t add(KernelNode n) {
    const bool read = n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt;
    if (read)  // Note [Reads made once]
      if (auto it = reads_.find(ReadKey{n.kind, n.input, n.component, n.args}); it != reads_.end()) return it->second;
    if (k_.nodes.size() >= kMaxNodes) throw NotALoop{};
    k_.nodes.push_back(std::move(n));
    const uint32_t j = static_cast<uint32_t>(k_.nodes.size() - 1);
    if (read) {
      const KernelNode& made = k_.nodes.back();
      reads_.emplace(ReadKey{made.kind, made.input, made.component, made.args}, j);
    }
    return j;
  }

  // Note [Reads made once]
  // A body reads the state its iteration started with (Note [Sequence state in loop kernels]),
  // so two reads of the same element (`rep(counts, counts[ds[i]] + 1, ds[i])` reads ds[i]
  // twice) are one node: each read is a guarded load and a failure check in every iteration,
  // which a loop of a few instructions a step feels. A read made inside a fold's region is
  // forgotten when the region closes, since no node after a Fold reads its region.
  struct ReadKey {
    KernelNode::Kind kind;
    uint32_t input, component;
    std::vector<uint32_t> args;
    auto operator<=>(const ReadKey&) const = default;
  };
  std::map<ReadKey, uint32_t> reads_;

  void forget_reads_after(uint32_t node) {
    std::erase_if(reads_, [&](const auto& r) { return r.second > node; });
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
    seq_elems_.push_back(t->a);
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
    if (v.virt) throw NotALoop{};  // a sequence never stored is no state and no result
    if (v.pair) {
      leaves(v.pair->first, out, seqs);
      leaves(v.pair->second, out, seqs);
    } else if (v.seq < 0 || sources_[static_cast<size_t>(v.seq)].shared) {
      if (seqs && v.seq >= 0) throw NotALoop{};  // a shared sequence as the result
      out.push_back(v.node);
    } else if (seqs) {
      // A done iteration stores no writes (its appends it makes).
      if (write_count(v) > 0 && !k_.seqs[static_cast<size_t>(v.seq)].appended) throw NotALoop{};
      seqs->push_back(static_cast<uint32_t>(v.seq));
    }
  }

  static uint32_t scalar(const Sym& v) {
    if (v.pair || v.seq >= 0 || v.virt) throw NotALoop{};
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

  /// Leaf by leaf: c ? a : b, where not_c is the node of not(c).
  Sym select(uint32_t c, uint32_t not_c, const Sym& a, const Sym& b) {
    if (a.pair && b.pair)
      return pair(select(c, not_c, a.pair->first, b.pair->first), select(c, not_c, a.pair->second, b.pair->second));
    if (a.pair || b.pair || a.virt || b.virt || a.seq != b.seq || type_of(a.node) != type_of(b.node)) throw NotALoop{};
    if (a.seq >= 0) {
      // One sequence: the writes of both branches. A write that one branch alone holds must be
      // guarded by that branch, or the other branch would store it too.
      if (a.node != b.node || !branch_only(a, b, c) || !branch_only(b, a, not_c)) throw NotALoop{};
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

  /// Whether every write of `a` that `b` lacks is guarded by `cond` (its guard is cond, or a
  /// conjunction that holds it: guarded()).
  bool branch_only(const Sym& a, const Sym& b, uint32_t cond) const {
    if (!a.writes) return true;
    for (uint32_t w : *a.writes) {
      if (b.writes && std::binary_search(b.writes->begin(), b.writes->end(), w)) continue;
      const KernelNode& n = k_.nodes[w];
      const size_t guard_arg = n.kind == KernelNode::Kind::SeqWrite ? 3 : 2;
      if (n.args.size() <= guard_arg || !implies(n.args[guard_arg], cond)) return false;
    }
    return true;
  }

  bool implies(uint32_t g, uint32_t cond) const {
    if (g == cond) return true;
    const KernelNode& n = k_.nodes[g];
    return n.kind == KernelNode::Kind::Prim && n.prim == PrimId::And && n.args.size() == 2 &&
           (implies(n.args[0], cond) || implies(n.args[1], cond));
  }

  /// Whether g holds only where node d does not (its conjunction holds not(d)).
  bool implies_not(uint32_t g, uint32_t d) const {
    const KernelNode& n = k_.nodes[g];
    if (n.kind != KernelNode::Kind::Prim) return false;
    if (n.prim == PrimId::Not) return n.args[0] == d;
    return n.prim == PrimId::And && n.args.size() == 2 && (implies_not(n.args[0], d) || implies_not(n.args[1], d));
  }

  /// The guard of a branch: the enclosing guard and the branch's condition.
  uint32_t guarded(std::optional<uint32_t> guard, uint32_t cond) {
    return guard ? prim(PrimId::And, {*guard, cond}, types_.bool_()) : cond;
  }

  /// Whether `e` calls fn_ itself at its own type arguments.
  bool self_call(const core::Expr* e, const Scope& s) {
    if (!fn_ || e->kind != core::Kind::Call || e->args[0]->kind != core::Kind::FnRef || e->args[0]->id != fn_->global)
      return false;
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
        return combine(c, not_c, a, b);
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

  Outcome combine(uint32_t c, uint32_t not_c, const Outcome& a, const Outcome& b) {
    Outcome o;
    if (a.done == b.done && a.done != Outcome::Done::ByNode) {
      o.done = a.done;
    } else {
      o.done = Outcome::Done::ByNode;
      o.done_node = a.done == Outcome::Done::Always && b.done == Outcome::Done::Never ? c
                                                                                        : prim(PrimId::Select, {c, done_node(a), done_node(b)}, types_.bool_());
    }
    auto either = [&](const std::optional<Sym>& x, const std::optional<Sym>& y) -> std::optional<Sym> {
      if (x && y) return select(c, not_c, *x, *y);
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
      case core::Kind::Map: return apply_to_each(e, s, guard);
      default: throw NotALoop{};
    }
  }

  /// `#rows` or `rows[i]` of a shared sequence: the element's components, each a SeqElt node
  /// that fails out of bounds only where `guard` holds.
  std::optional<Sym> sequence_read(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->prim != PrimId::Length && e->prim != PrimId::Elt) return std::nullopt;
    Sym rows = value(e->args[0], s, guard);
    if (rows.virt) {  // Note [Folds in kernels]
      if (e->prim == PrimId::Length) return Sym{rows.virt->length, nullptr};
      uint32_t i = int_scalar(value(e->args[1], s, guard));
      uint32_t outside = prim(PrimId::Or, {prim(PrimId::Lt, {i, int_const(0)}, types_.bool_()),
                                           prim(PrimId::Ge, {i, rows.virt->length}, types_.bool_())}, types_.bool_());
      fail(outside, guard, static_cast<uint32_t>(lang::RuntimeErrorId::SeqRefBounds), {i, rows.virt->length}, e->span);
      return rows.virt->element(i);
    }
    if (rows.seq < 0) return std::nullopt;
    if (e->prim == PrimId::Length) return Sym{seq_length(rows), nullptr};
    return seq_element(rows, int_scalar(value(e->args[1], s, guard)), guard, e->span);
  }

  /// `#rows` of a sequence the loop reads.
  uint32_t seq_length(const Sym& rows) {
    if (write_count(rows) > 0) throw NotALoop{};  // reads see the state the iteration started with
    KernelNode n;
    n.input = static_cast<uint32_t>(rows.seq);
    n.args = {rows.node};
    n.kind = KernelNode::Kind::SeqLength;
    n.type = types_.int_();
    return add(std::move(n));
  }

  /// `rows[i]` of a sequence the loop reads: the element's components, each a SeqElt node that
  /// fails out of bounds only where `guard` holds.
  Sym seq_element(const Sym& rows, uint32_t i, std::optional<uint32_t> guard, lang::Span span) {
    if (write_count(rows) > 0) throw NotALoop{};
    KernelNode n;
    n.input = static_cast<uint32_t>(rows.seq);
    n.args = {rows.node, i};
    n.kind = KernelNode::Kind::SeqElt;
    n.span = span;
    if (guard) n.args.push_back(*guard);
    uint32_t component = 0;
    return element(n, seq_elems_.at(static_cast<size_t>(rows.seq)), component);
  }

  uint32_t int_scalar(const Sym& v) {
    uint32_t x = scalar(v);
    if (type_of(x) != types_.int_()) throw NotALoop{};
    return x;
  }

  uint32_t int_const(int64_t x) { return constant(lang::Value::int_(x), types_.int_()); }

  /// A Fail node: the error `id` (formatted with `operands`) where `cond` and the guard hold.
  uint32_t fail(uint32_t cond, std::optional<uint32_t> guard, uint32_t id, std::vector<uint32_t> operands,
                lang::Span span, const Type* t = nullptr, lang::Value message = {}) {
    KernelNode n;
    n.kind = KernelNode::Kind::Fail;
    n.args = {guard ? prim(PrimId::And, {*guard, cond}, types_.bool_()) : cond};
    n.args.insert(n.args.end(), operands.begin(), operands.end());
    n.component = id;
    n.type = t ? t : types_.int_();
    n.value = std::move(message);
    n.span = span;
    return add(std::move(n));
  }

  /// The sequence `v` as a Virtual: itself, or the elements of a sequence the loop reads.
  std::optional<Virtual> as_virtual(const Sym& v, std::optional<uint32_t> guard, lang::Span span) {
    if (v.virt) return *v.virt;
    if (v.pair || v.seq < 0) return std::nullopt;
    if (k_.seqs[static_cast<size_t>(v.seq)].appended) throw NotALoop{};
    Virtual r;
    r.length = seq_length(v);
    r.element = [this, v, guard, span](uint32_t k) { return seq_element(v, k, guard, span); };
    return r;
  }

  static Sym virtual_seq(Virtual v) {
    Sym r;
    r.virt = std::make_shared<const Virtual>(std::move(v));
    return r;
  }

  /// `{body : p1 in s1; ...}` without a filter, over ranges and sequences the loop reads: a
  /// Virtual whose element compiles the body (Note [Folds in kernels]).
  Sym apply_to_each(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->has_filter || e->gens.empty()) throw NotALoop{};
    std::vector<Virtual> sources;
    for (size_t i = 0; i < e->gens.size(); ++i) {
      std::optional<Virtual> v = as_virtual(value(e->args[i], s, guard), guard, e->span);
      if (!v) throw NotALoop{};
      if (i > 0) {  // the interpreter's check and message
        uint32_t differ = prim(PrimId::Ne, {sources[0].length, v->length}, types_.bool_());
        fail(differ, guard, static_cast<uint32_t>(lang::RuntimeErrorId::ApplyToEachLengthMismatch),
             {sources[0].length, v->length}, e->span);
      }
      sources.push_back(std::move(*v));
    }
    Virtual r;
    r.length = sources[0].length;
    const core::Expr* body = e->args[e->gens.size()];
    r.element = [this, e, body, sources, scope = s, guard](uint32_t k) {
      Scope inner = scope;
      for (size_t i = 0; i < sources.size(); ++i) bind(e->gens[i], sources[i].element(k), inner);
      return value(body, inner, guard);
    };
    return virtual_seq(std::move(r));
  }

  /// index(n), [s:e] (a stride of 1) and dist(x, n) as Virtuals, failing as the interpreter
  /// does on a negative length or a bad range.
  std::optional<Sym> generator(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    using Id = lang::RuntimeErrorId;
    Virtual r;
    if (e->prim == PrimId::Index) {
      uint32_t n = int_scalar(value(e->args[0], s, guard));
      fail(prim(PrimId::Lt, {n, int_const(0)}, types_.bool_()), guard, static_cast<uint32_t>(Id::IndexNegativeLength), {}, e->span);
      r.length = n;
      r.element = [](uint32_t k) { return Sym{k, nullptr}; };
    } else if (e->prim == PrimId::Iseq) {
      uint32_t from = int_scalar(value(e->args[0], s, guard));
      uint32_t stride = int_scalar(value(e->args[1], s, guard));
      uint32_t to = int_scalar(value(e->args[2], s, guard));
      const KernelNode& d = k_.nodes[stride];
      if (d.kind != KernelNode::Kind::Const || d.value.as_int() != 1) throw NotALoop{};
      fail(prim(PrimId::Lt, {to, from}, types_.bool_()), guard, static_cast<uint32_t>(Id::IseqBadRange), {}, e->span);
      r.length = prim(PrimId::Sub, {to, from}, types_.int_());
      r.element = [this, from](uint32_t k) { return Sym{prim(PrimId::Add, {from, k}, types_.int_()), nullptr}; };
    } else if (e->prim == PrimId::Dist) {
      Sym x = value(e->args[0], s, guard);
      if (holds_seq(x)) throw NotALoop{};
      uint32_t n = int_scalar(value(e->args[1], s, guard));
      fail(prim(PrimId::Lt, {n, int_const(0)}, types_.bool_()), guard, static_cast<uint32_t>(Id::DistNegativeLength), {}, e->span);
      r.length = n;
      r.element = [x](uint32_t) { return x; };
    } else {
      return std::nullopt;
    }
    return virtual_seq(std::move(r));
  }

  /// A reduction of a Virtual: a Fold (Note [Folds in kernels]). max_index and min_index are
  /// two: the extreme, then the least index holding it, as stdlib/sequence.ndp defines them.
  std::optional<Sym> reduction(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    const std::optional<PrimId> extreme = core::index_of_extreme(e->prim);
    const bool index_of = extreme.has_value();
    if (!core::is_reduction(e->prim) && !index_of) return std::nullopt;
    const Type* t = index_of ? close(e->args[0]->type, s)->a : close(e->type, s);
    if (!t->is_scalar() || t->kind == TypeKind::Pair) throw NotALoop{};
    std::optional<Virtual> v = as_virtual(value(e->args[0], s, guard), guard, e->span);
    if (!v) throw NotALoop{};
    // Past kMostFoldSteps the fold fails, and folds nothing (a stored row is never that long).
    // So does a count below zero that no generator's check caught: [s:e] whose e - s wrapped
    // past 2^63, which the interpreter cannot store either.
    uint32_t count = v->length;
    if (k_.nodes[count].kind != KernelNode::Kind::SeqLength) {
      uint32_t too_long = prim(PrimId::Or,
                               {prim(PrimId::Gt, {count, int_const(kMostFoldSteps)}, types_.bool_()),
                                prim(PrimId::Lt, {count, int_const(0)}, types_.bool_())},
                               types_.bool_());
      fail(too_long, guard, static_cast<uint32_t>(lang::RuntimeErrorId::OutOfMemory), {}, e->span);
      count = prim(PrimId::Select, {too_long, int_const(0), count}, types_.int_());
    }
    auto element = [&](uint32_t k) {
      uint32_t x = scalar(v->element(k));
      if (type_of(x) != t) throw NotALoop{};
      return x;
    };
    if (!index_of) return fold(e->prim, t, count, element);
    const uint32_t m = fold(*extreme, t, count, element).node;
    if (!kernel_prim_ok(PrimId::Eq, {t, t}, types_.bool_())) throw NotALoop{};
    return fold(PrimId::MinVal, types_.int_(), count, [&](uint32_t k) {
      uint32_t at_extreme = prim(PrimId::Eq, {element(k), m}, types_.bool_());
      return prim(PrimId::Select, {at_extreme, k, int_const(std::numeric_limits<int64_t>::max())}, types_.int_());
    });
  }

  /// The Fold of reduction `p` over `count` elements of type t, element(k) emitting the k-th.
  template <class Element>
  Sym fold(PrimId p, const Type* t, uint32_t count, const Element& element) {
    uint32_t init = constant(fold_identity(p, t), t);
    KernelNode at;
    at.kind = KernelNode::Kind::FoldIndex;
    at.type = types_.int_();
    uint32_t index = add(std::move(at));
    KernelNode acc_node;
    acc_node.kind = KernelNode::Kind::FoldAcc;
    acc_node.type = t;
    uint32_t acc = add(std::move(acc_node));
    uint32_t x = element(index);
    uint32_t next = fold_step(core::prim_operator(p), acc, x, t);
    KernelNode f;
    f.kind = KernelNode::Kind::Fold;
    f.prim = p;
    f.type = t;
    f.input = index;
    f.args = {count, init, next};
    uint32_t fold = add(std::move(f));
    forget_reads_after(index);
    k_.nodes[index].input = fold;
    k_.nodes[acc].input = fold;
    return Sym{fold, nullptr};
  }

  /// acc ⊕ x, as the interpreter's reduce combines (lang/eval/prims_seq.cpp).
  uint32_t fold_step(core::PrimOperator op, uint32_t acc, uint32_t x, const Type* t) {
    auto binary = [&](PrimId p) {
      if (!kernel_prim_ok(p, {t, t}, t)) throw NotALoop{};
      return prim(p, {acc, x}, t);
    };
    auto pick = [&](PrimId better) {  // x replaces acc only when strictly better
      if (!kernel_prim_ok(better, {t, t}, types_.bool_())) throw NotALoop{};
      return prim(PrimId::Select, {prim(better, {x, acc}, types_.bool_()), x, acc}, t);
    };
    switch (op) {
      case core::PrimOperator::Plus: return binary(PrimId::Add);
      case core::PrimOperator::Mult: return binary(PrimId::Mul);
      case core::PrimOperator::Max: return pick(PrimId::Gt);
      case core::PrimOperator::Min: return pick(PrimId::Lt);
      case core::PrimOperator::And: return binary(PrimId::And);
      case core::PrimOperator::Or: return binary(PrimId::Or);
      case core::PrimOperator::Xor: return binary(PrimId::Xor);
      case core::PrimOperator::None: break;
    }
    throw NotALoop{};
  }

  /// The value a reduction of nothing gives (lang/eval/prims_seq.cpp's identity).
  static lang::Value fold_identity(PrimId p, const Type* t) {
    const bool is_i32 = t->kind == TypeKind::I32;
    switch (core::prim_identity(p)) {
      case core::PrimIdentity::Zero: return identity_of_plain(t);
      case core::PrimIdentity::One: return one_of(t);
      case core::PrimIdentity::AllOnes:
        if (t->kind == TypeKind::Bool) return lang::Value::bool_(true);
        return is_i32 ? lang::Value::i32(-1) : lang::Value::int_(-1);
      case core::PrimIdentity::Lowest:
        switch (t->kind) {
          case TypeKind::Float: return lang::Value::float_(-std::numeric_limits<double>::infinity());
          case TypeKind::F32: return lang::Value::f32(-std::numeric_limits<float>::infinity());
          case TypeKind::Char: return lang::Value::char_(0);
          case TypeKind::I32: return lang::Value::i32(std::numeric_limits<int32_t>::min());
          case TypeKind::Int: return lang::Value::int_(std::numeric_limits<int64_t>::min());
          default: break;
        }
        break;
      case core::PrimIdentity::Highest:
        switch (t->kind) {
          case TypeKind::Float: return lang::Value::float_(std::numeric_limits<double>::infinity());
          case TypeKind::F32: return lang::Value::f32(std::numeric_limits<float>::infinity());
          case TypeKind::Char: return lang::Value::char_(static_cast<char>(255));
          case TypeKind::I32: return lang::Value::i32(std::numeric_limits<int32_t>::max());
          case TypeKind::Int: return lang::Value::int_(std::numeric_limits<int64_t>::max());
          default: break;
        }
        break;
      case core::PrimIdentity::None: break;
    }
    throw NotALoop{};
  }

  /// `rows ++ [x, ...]` of a sequence in the state (Note [Appended sequences in loop kernels]):
  /// a SeqAppend node per flat component of each x.
  std::optional<Sym> sequence_append(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->prim != PrimId::Append) return std::nullopt;
    Sym rows = value(e->args[0], s, guard);
    if (rows.seq < 0) return std::nullopt;
    const size_t q = static_cast<size_t>(rows.seq);
    if (sources_[q].shared || k_.seqs[q].written) throw NotALoop{};
    const core::Expr* more = e->args[1];
    if (more->kind == core::Kind::EmptySeq) return rows;
    if (more->kind != core::Kind::SeqLit) throw NotALoop{};
    k_.seqs[q].appended = true;
    std::vector<uint32_t> w = rows.writes ? *rows.writes : std::vector<uint32_t>{};
    for (const core::Expr* item : more->args) {
      Sym x = value(item, s, guard);
      std::vector<uint32_t> parts;
      leaves(x, parts, nullptr);
      if (holds_seq_or_mismatch(x, parts, k_.seqs[q].components)) throw NotALoop{};
      state_change(KernelNode::Kind::SeqAppend, q, {rows.node}, parts, guard, e->span, w);
    }
    rows.writes = std::make_shared<const std::vector<uint32_t>>(std::move(w));
    return rows;
  }

  /// A SeqWrite or SeqAppend node per flat component of an element of sequence q (its values
  /// `parts`): operands `args`, the component's value, and the guard. Each joins `w` and
  /// writes_[q].
  void state_change(KernelNode::Kind kind, size_t q, const std::vector<uint32_t>& args, const std::vector<uint32_t>& parts,
                    std::optional<uint32_t> guard, lang::Span span, std::vector<uint32_t>& w) {
    for (uint32_t c = 0; c < parts.size(); ++c) {
      KernelNode n;
      n.kind = kind;
      n.input = static_cast<uint32_t>(q);
      n.component = c;
      n.type = k_.seqs[q].components[c];
      n.span = span;
      n.args = args;
      n.args.push_back(parts[c]);
      if (guard) n.args.push_back(*guard);
      uint32_t node = add(std::move(n));
      w.push_back(node);
      writes_[q].push_back(node);
    }
  }

  /// `rep(rows, x, i)` of a sequence in the state (Note [Sequence state in loop kernels]): a
  /// SeqWrite node per flat component of x, stored when the iteration goes on.
  std::optional<Sym> sequence_write(const core::Expr* e, Scope& s, std::optional<uint32_t> guard) {
    if (e->prim != PrimId::Rep) return std::nullopt;
    Sym rows = value(e->args[0], s, guard);
    if (rows.seq < 0) return std::nullopt;
    const size_t q = static_cast<size_t>(rows.seq);
    if (sources_[q].shared || k_.seqs[q].appended) throw NotALoop{};  // every instance's copy would differ
    Sym x = value(e->args[1], s, guard);
    uint32_t index = scalar(value(e->args[2], s, guard));
    if (type_of(index) != types_.int_()) throw NotALoop{};
    std::vector<uint32_t> parts;
    leaves(x, parts, nullptr);
    if (holds_seq_or_mismatch(x, parts, k_.seqs[q].components)) throw NotALoop{};
    k_.seqs[q].written = true;
    std::vector<uint32_t> w = rows.writes ? *rows.writes : std::vector<uint32_t>{};
    state_change(KernelNode::Kind::SeqWrite, q, {rows.node, index}, parts, guard, e->span, w);
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
    return v.seq >= 0 || v.virt || (v.pair && (holds_seq(v.pair->first) || holds_seq(v.pair->second)));
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
    if (std::optional<Sym> appended = sequence_append(e, s, guard)) return *appended;
    if (std::optional<Sym> range = generator(e, s, guard)) return *range;
    if (std::optional<Sym> folded = reduction(e, s, guard)) return *folded;
    const Type* result = close(e->type, s);
    if (e->prim == PrimId::RuntimeErrorPrim) {  // fails where its branch is taken
      const core::Expr* msg = e->args[0];
      if (msg->kind != core::Kind::Lit || !result->is_scalar() || result->kind == TypeKind::Pair) throw NotALoop{};
      return Sym{fail(constant(lang::Value::bool_(true), types_.bool_()), guard, kFailRaises, {}, e->span, result, msg->lit),
                 nullptr};
    }
    if (e->prim == PrimId::Select && result->kind == TypeKind::Pair) {  // leaf by leaf
      uint32_t c = scalar(value(e->args[0], s, guard));
      Sym a = value(e->args[1], s, guard);
      Sym b = value(e->args[2], s, guard);
      if (holds_seq(a) || holds_seq(b)) throw NotALoop{};
      return select(c, prim(PrimId::Not, {c}, types_.bool_()), a, b);
    }
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
    // Kept while the compiler lives: an apply-to-each the callee returns compiles its body later.
    std::vector<const Type*>& targs = targs_kept_.emplace_back();
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
    return LoopCompiler(prog, &fn, targs).compile(body, shared);
  } catch (const NotALoop&) {
    return std::nullopt;
  }
}

std::optional<LoopKernel> map_kernel(core::Program& prog, const core::Expr* body, const std::vector<const Type*>& targs,
                                     const std::vector<MapKernelSlot>& slots) {
  try {
    return LoopCompiler(prog, nullptr, targs).compile_map(body, slots);
  } catch (const NotALoop&) {
    return std::nullopt;
  }
}

std::vector<KernelBody::StagedSeq> KernelBody::compute_staged_seqs() const {
  std::vector<StagedSeq> staged;
  if (!loop) return staged;
  // A row the loop never changes: the instance's own, or an int input that is no state or that
  // every iteration passes on as it is.
  auto fixed_row = [&](uint32_t r) {
    const KernelNode& n = nodes[r];
    if (n.kind == KernelNode::Kind::Instance) return true;
    if (n.kind != KernelNode::Kind::Input || n.type->kind != lang::TypeKind::Int) return false;
    if (n.input >= loop_next.size()) return true;
    const KernelNode& next = nodes[loop_next[n.input]];
    return next.kind == KernelNode::Kind::Input && next.input == n.input;
  };
  auto same_row = [&](uint32_t a, uint32_t b) {
    return a == b || (nodes[a].kind == KernelNode::Kind::Input && nodes[b].kind == KernelNode::Kind::Input &&
                      nodes[a].input == nodes[b].input);
  };
  for (uint32_t q = 0; q < seqs.size(); ++q) {
    if (seqs[q].appended) continue;
    std::optional<uint32_t> row;
    bool one_row = true;
    for (const KernelNode& n : nodes) {
      const bool reads_q = (n.kind == KernelNode::Kind::SeqLength || n.kind == KernelNode::Kind::SeqElt ||
                            n.kind == KernelNode::Kind::SeqWrite) && n.input == q;
      if (!reads_q) continue;
      const uint32_t r = n.args.at(0);
      one_row = one_row && (!row || same_row(*row, r)) && fixed_row(r);
      if (!row) row = r;
    }
    if (row && one_row) staged.push_back({q, *row});
  }
  return staged;
}

std::vector<KernelBody::StagedSeq> KernelBody::compute_warp_staged_seqs() const {
  std::vector<StagedSeq> staged = staged_seqs();
  const std::optional<MultiprefixLoop>& m = multiprefix();
  if (!m) return staged;
  std::erase_if(staged, [&](const StagedSeq& s) { return seqs[s.seq].written && m->histogram_of(s.seq) == nullptr; });
  return staged;
}

std::vector<KernelBody::StagedSeq> KernelBody::compute_block_rows() const {
  std::vector<StagedSeq> rows;
  if (loop) return rows;
  auto row_id = [&](uint32_t r) {
    const KernelNode& n = nodes[r];
    return n.kind == KernelNode::Kind::Instance || (n.kind == KernelNode::Kind::Input && n.type->kind == lang::TypeKind::Int);
  };
  for (uint32_t q = 0; q < seqs.size(); ++q) {
    if (seqs[q].written || seqs[q].appended) continue;
    std::optional<uint32_t> row;
    bool one_row_whole = true, read = false;
    for (const KernelNode& n : nodes) {
      if (n.input != q || (n.kind != KernelNode::Kind::SeqLength && n.kind != KernelNode::Kind::SeqElt &&
                           n.kind != KernelNode::Kind::SeqWrite && n.kind != KernelNode::Kind::SeqAppend))
        continue;
      const uint32_t r = n.args.at(0);
      one_row_whole = one_row_whole && (!row || *row == r) && row_id(r) &&
                      (n.kind == KernelNode::Kind::SeqLength || indexed_by_its_fold(n));
      if (!row) row = r;
      read = read || n.kind == KernelNode::Kind::SeqElt;
    }
    if (one_row_whole && read) rows.push_back({q, *row});
  }
  // Only beside gathers from other sequences (Note [Block rows] in codegen/block_rows.h).
  const bool gathers = std::any_of(nodes.begin(), nodes.end(), [&](const KernelNode& n) {
    return n.kind == KernelNode::Kind::SeqElt &&
           std::none_of(rows.begin(), rows.end(), [&](const StagedSeq& r) { return r.seq == n.input; });
  });
  if (!gathers) rows.clear();
  return rows;
}

}  // namespace ndp::flatten
