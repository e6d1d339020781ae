// Vectorisation of Core IR into lifted Flat IR functions (see vectorise.h).
#include "flatten/vectorise.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>

#include "flatten/free_slots.h"
#include "flatten/inline_lambdas.h"
#include "flatten/loop_kernels.h"
#include "flatten/merge_tail_calls.h"
#include "flatten/passes/fuse_elementwise.h"
#include "lang/diagnostics.h"
#include "lang/runtime_errors.h"

namespace ndp::flatten {

namespace {

using lang::Type;
using lang::TypeKind;
namespace core = lang::core;

/// The instances processed together at one point of a lifted function, and where each Core
/// slot of the current Core function lives among them.
/// A sequence shared by the instances of a context instead of copied into each: instance j
/// holds sequence `ids[j]` of `base`, a variable of an enclosing context. Why: a free sequence
/// indexed inside an apply-to-each (`{x[c] : c in cols}`, sparse matrix-vector product) would
/// otherwise be replicated once per element, which is quadratic.
struct Shared {
  VarId base = 0;
  VarId ids = 0;  // ints, one per instance of the context
};

struct Ctx {
  VarId n = 0;                        // host: number of instances
  std::map<uint32_t, VarId> slots;    // Core slot -> vector of n instances
  std::map<uint32_t, Shared> shared;  // Core slot -> a sequence shared through instance ids
  VarId path = 0;                     // rand path hashes, when the program carries them
};

/// The value of an expression made of literals alone (a sequence literal of numbers, of
/// tuples, of sequence literals), or nothing. Such a literal becomes one Lit statement: a
/// Flat IR statement per element would make a data file of 10^6 numbers 10^6 statements.
std::optional<lang::Value> constant_value(const core::Expr* e) {
  switch (e->kind) {
    case core::Kind::Lit: return e->lit;
    case core::Kind::EmptySeq: return lang::Value::seq({});
    case core::Kind::Tuple: {
      std::optional<lang::Value> a = constant_value(e->args[0]);
      if (!a) return std::nullopt;
      std::optional<lang::Value> b = constant_value(e->args[1]);
      if (!b) return std::nullopt;
      return lang::Value::pair(std::move(*a), std::move(*b));
    }
    case core::Kind::SeqLit: {
      std::vector<lang::Value> elems;
      elems.reserve(e->args.size());
      for (const core::Expr* a : e->args) {
        std::optional<lang::Value> v = constant_value(a);
        if (!v) return std::nullopt;
        elems.push_back(std::move(*v));
      }
      return lang::Value::seq(std::move(elems));
    }
    default: return std::nullopt;
  }
}

/// A function value known while flattening (a name, or a parameter of a specialised
/// instance): calls through it become direct calls. Its type arguments are closed.
using KnownFn = lang::FnObj;

class Vectoriser {
 public:
  explicit Vectoriser(core::Program& core) : core_(core), types_(core.types) {}

  Program run(const core::Expr* body) {
    paths_ = reaches_rand(body);
    entry_body_ = body;
    prog_.entry = new_function("main", types_.int_(), nullptr);
    pending_.push_back(Pending{prog_.entry, nullptr, body, {}});
    while (!pending_.empty()) {
      Pending p = pending_.front();
      pending_.pop_front();
      translate_function(p);
    }
    for (Function& f : funcs_) prog_.functions.push_back(std::move(f));
    return std::move(prog_);
  }

 private:
  struct Pending {
    FuncId id;
    const core::Function* fn;       // nullptr: the top-level body
    const core::Expr* body;
    std::vector<const Type*> targs;  // closed instantiation of fn's scheme
    std::map<uint32_t, KnownFn> known;  // parameter slots holding a known function
    std::set<uint32_t> shared;          // parameter slots taken shared (Note [Shared arguments])
  };

  core::Program& core_;
  lang::TypeContext& types_;
  Program prog_;
  // Functions under construction live in a deque: building one may add another (a call to a
  // new instance), and the blocks being filled must not move.
  std::deque<Function> funcs_;
  std::deque<Pending> pending_;
  std::map<std::string, FuncId> instances_;  // key: global, type arguments, known parameters
  std::map<uint32_t, KnownFn> known_;        // slots of the current function holding known functions

  // Whether this program draws random numbers, so every context carries its instances' rand
  // path hashes (Note [rand] in lang/eval/rand.h) to give the interpreter's streams.
  bool paths_ = false;
  std::map<uint32_t, bool> reaches_rand_;  // memo by global function id

  bool reaches_rand(const core::Expr* e) {
    if (e->kind == core::Kind::Prim && (e->prim == core::PrimId::Rand || e->prim == core::PrimId::RandSeed)) return true;
    if (e->kind == core::Kind::FnRef || e->kind == core::Kind::Global) {
      const core::Global& g = *core_.globals.at(e->id);
      uint32_t fn = e->id;
      if (g.kind == core::Global::Kind::Variable) {  // a global holding a function value
        const lang::Value* v = g.function_value();
        if (v == nullptr || v->fn().target != lang::FnObj::Target::Global) return false;
        fn = v->fn().id;
      } else if (g.kind != core::Global::Kind::Function) {
        return false;
      }
      auto [it, fresh] = reaches_rand_.emplace(fn, false);  // false while in progress: recursion
      if (fresh && core_.globals.at(fn)->fn.body) it->second = reaches_rand(core_.globals.at(fn)->fn.body);
      return it->second;
    }
    for (const core::Expr* a : e->args)
      if (reaches_rand(a)) return true;
    return false;
  }

  // The function and block being built.
  Function* fn_ = nullptr;
  Block* block_ = nullptr;
  std::map<uint32_t, VarId> shared_base_of_;  // the function's shared bases by parameter slot
  const std::vector<const Type*>* targs_ = nullptr;

  FuncId new_function(std::string name, const Type* arg, const Type* result) {
    funcs_.emplace_back();
    Function& f = funcs_.back();
    f.name = std::move(name);
    f.arg_type = arg;
    f.result_type = result;
    return static_cast<FuncId>(funcs_.size() - 1);
  }

  const Type* close(const Type* t, lang::Span span) {
    const Type* c = targs_ ? types_.subst(t, *targs_) : t;
    if (open_outside_functions(c)) throw Unsupported{"a value of polymorphic type cannot be computed here", span};
    return c;
  }

  /// Type variables inside a function type do not matter here: a function value is stored whole
  /// (as the interpreter's value), so only variables elsewhere leave a representation open.
  static bool open_outside_functions(const Type* t) {
    switch (t->kind) {
      case TypeKind::Var: return true;
      case TypeKind::Fn: return false;
      case TypeKind::Seq: return open_outside_functions(t->a);
      case TypeKind::Pair: return open_outside_functions(t->a) || open_outside_functions(t->b);
      case TypeKind::Data:
        for (const Type* a : t->args)
          if (open_outside_functions(a)) return true;
        return false;
      default: return false;
    }
  }

  VarId new_var(std::string hint, const Type* type) {
    fn_->vars.push_back(Var{std::move(hint), type});
    return static_cast<VarId>(fn_->vars.size() - 1);
  }

  Stmt& emit(Op op, VarId dst, std::vector<VarId> uses, lang::Span span = {}) {
    block_->stmts.emplace_back();
    Stmt& s = block_->stmts.back();
    s.op = op;
    s.dst = dst;
    s.uses = std::move(uses);
    s.span = span;
    return s;
  }

  VarId emit_value(Op op, std::string hint, const Type* type, std::vector<VarId> uses, lang::Span span = {}) {
    VarId v = new_var(std::move(hint), type);
    emit(op, v, std::move(uses), span);
    return v;
  }

  VarId host(Op op, std::string hint, std::vector<VarId> uses) {
    VarId v = new_var(std::move(hint), nullptr);
    emit(op, v, std::move(uses));
    return v;
  }

  VarId prim(core::PrimId id, const Type* result, std::vector<VarId> uses, std::vector<const Type*> targs,
             lang::Span span = {}) {
    VarId v = new_var(lang::core::prim_info(id).name[0] == '#' ? "len" : "p", result);
    Stmt& s = emit(Op::Prim, v, std::move(uses), span);
    s.prim = id;
    s.type = result;
    s.type_args = std::move(targs);
    return v;
  }

  static std::string upper(std::string s) {
    for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
  }

  std::string hint_of(const core::Pattern* p) { return p && p->kind == core::PatternKind::Var ? p->name : "v"; }

  // ---- functions ----

  /// The part of an instance's key that a known function makes.
  static std::string known_key(const KnownFn& f) {
    std::string k = fmt::format("{}:{}", static_cast<int>(f.target), f.id);
    for (const Type* t : f.type_args) k += fmt::format(",{}", static_cast<const void*>(t));
    return k;
  }

  /// The lifted instance of a function for closed type arguments and known-function
  /// parameters (a specialisation per function passed, as in `map(isqrt, s)`).
  FuncId instance(uint32_t global, std::vector<const Type*> targs, std::map<uint32_t, KnownFn> known,
                  std::set<uint32_t> shared = {}) {
    std::string key = std::to_string(global);
    for (const Type* t : targs) key += fmt::format(",{}", static_cast<const void*>(t));
    for (const auto& [slot, f] : known) key += fmt::format(";{}={}", slot, known_key(f));
    for (uint32_t slot : shared) key += fmt::format(";{}=shared", slot);
    auto it = instances_.find(key);
    if (it != instances_.end()) return it->second;
    const core::Function& fn = core_.globals.at(global)->fn;
    const Type* fty = types_.subst(fn.scheme.type, targs);
    std::string name = fn.name;
    if (!targs.empty()) {
      name += "<";
      for (size_t i = 0; i < targs.size(); ++i) name += (i ? ", " : "") + lang::type_to_string(targs[i], {});
      name += ">";
    }
    for (const auto& [slot, f] : known) name += "[" + known_name(f) + "]";
    FuncId id = new_function(name, instance_arg_type(fn.param, fty->a, known, shared), fty->b);
    instances_.emplace(std::move(key), id);
    pending_.push_back(Pending{id, &fn, fn.body, std::move(targs), std::move(known), std::move(shared)});
    return id;
  }

  std::string known_name(const KnownFn& f) {
    switch (f.target) {
      case KnownFn::Target::Global: return core_.globals.at(f.id)->name;
      case KnownFn::Target::Prim: return core::prim_info(static_cast<core::PrimId>(f.id)).name;
      case KnownFn::Target::Constructor: return f.data->name;
      case KnownFn::Target::Lambda: return fmt::format("lambda#{}", f.id);
    }
    return "?";
  }

  /// The function a Core expression denotes, when it is known while flattening.
  std::optional<KnownFn> known_fn(const core::Expr* e) {
    switch (e->kind) {
      case core::Kind::FnRef: {
        const core::Global& g = *core_.globals.at(e->id);
        KnownFn f;
        f.type_args = close_all(e->type_args);
        switch (g.kind) {
          case core::Global::Kind::Function: f.target = KnownFn::Target::Global; f.id = e->id; return f;
          case core::Global::Kind::Prim: f.target = KnownFn::Target::Prim; f.id = static_cast<uint32_t>(g.prim); return f;
          case core::Global::Kind::Constructor:
            f.target = KnownFn::Target::Constructor;
            f.id = g.data->id;
            f.data = g.data;
            return f;
          case core::Global::Kind::Variable: return std::nullopt;
        }
        return std::nullopt;
      }
      case core::Kind::Local: {
        auto it = known_.find(e->slot);
        if (it == known_.end()) return std::nullopt;
        return it->second;
      }
      case core::Kind::Lambda: {
        // Its captured values are this context's variables (Note [Lambdas on the flat backends]).
        KnownFn f;
        f.target = KnownFn::Target::Lambda;
        f.id = e->id;
        f.lambda = e;
        f.type_args = targs_ ? *targs_ : std::vector<const Type*>{};
        return f;
      }
      case core::Kind::Global: {
        // A global variable bound to a function (`g = sq`) holds its value already: forms run in
        // order, and redefining g with the same type updates this same global.
        const core::Global& g = *core_.globals.at(e->id);
        const lang::Value* v = g.function_value();
        if (v == nullptr) return std::nullopt;
        // A closure with captured values is made by the interpreter only (the flat backends
        // refuse to keep one as data), so no flat program meets one.
        if (!v->fn().env.empty()) return std::nullopt;
        KnownFn f = v->fn();
        std::vector<const Type*> outer = close_all(e->type_args);
        for (const Type*& t : f.type_args) t = lang::contains_vars(t) ? types_.subst(t, outer) : t;
        return f;
      }
      default: return std::nullopt;
    }
  }

  /// Known functions among the components of a call's argument, by parameter slot.
  void known_args(const core::Pattern* p, const core::Expr* arg, std::map<uint32_t, KnownFn>& out) {
    if (p->kind == core::PatternKind::Var) {
      if (std::optional<KnownFn> f = known_fn(arg)) {
        out[p->slot] = *f;
        if (runtime_env(*f)) env_args_.insert(arg);
      }
      return;
    }
    if (p->kind == core::PatternKind::Tuple && arg->kind == core::Kind::Tuple) {
      known_args(p->left, arg->args[0], out);
      known_args(p->right, arg->args[1], out);
    }
  }

  std::map<const core::Expr*, const core::Expr*> inlined_;  // body -> as flattened
  // Lambdas (and variables bound to them) whose captured values are passed as their
  // environment: arguments for known parameters, and let-bound values.
  std::set<const core::Expr*> env_args_;

  /// Whether a known lambda captures variables: their values then travel in a variable of the
  /// flattened program, its environment.
  static bool runtime_env(const KnownFn& f) {
    return f.target == KnownFn::Target::Lambda && f.lambda && !f.lambda->captures.empty();
  }

  /// The type of a lambda's environment: its captured slots' types, as a right-nested tuple.
  const Type* env_type(const KnownFn& f) {
    std::map<uint32_t, const Type*> types;
    slot_types(f.lambda->args[0], types);
    const std::vector<uint32_t>& caps = f.lambda->captures;
    const Type* t = types_.subst(types.at(caps.back()), f.type_args);
    for (size_t i = caps.size() - 1; i-- > 0;) t = types_.pair(types_.subst(types.at(caps[i]), f.type_args), t);
    return t;
  }

  /// The argument type of an instance: `t` with each known parameter whose lambda keeps its
  /// environment in a variable replaced by the environment's type, and each shared parameter by
  /// its ids (Note [Shared arguments]).
  const Type* instance_arg_type(const core::Pattern* p, const Type* t, const std::map<uint32_t, KnownFn>& known,
                                const std::set<uint32_t>& shared) {
    if (p->kind == core::PatternKind::Var) {
      if (shared.count(p->slot)) return types_.int_();
      auto it = known.find(p->slot);
      return it != known.end() && runtime_env(it->second) ? env_type(it->second) : t;
    }
    if (p->kind == core::PatternKind::Tuple && t->kind == TypeKind::Pair)
      return types_.pair(instance_arg_type(p->left, t->a, known, shared),
                         instance_arg_type(p->right, t->b, known, shared));
    return t;
  }

  /// Whether `e` is read through ids here (a shared sequence, or a row of one): what
  /// shared_view gives a view of, decided without emitting anything.
  bool shared_here(const core::Expr* e, const Ctx& c) {
    if (e->kind == core::Kind::Local) return !c.slots.count(e->slot) && c.shared.count(e->slot);
    if (e->kind == core::Kind::Global)  // a global variable holding a sequence (not a function)
      return core_.globals.at(e->id)->kind == core::Global::Kind::Variable && close(e->type, e->span)->kind == TypeKind::Seq;
    return e->kind == core::Kind::Prim && e->prim == core::PrimId::Elt && close(e->type, e->span)->kind == TypeKind::Seq &&
           shared_here(e->args[0], c);
  }

  /// Parameter slots of pattern `p` whose argument component is read through ids here.
  void shared_args(const core::Pattern* p, const core::Expr* arg, const Ctx& c, std::set<uint32_t>& out) {
    if (p->kind == core::PatternKind::Var) {
      if (shared_here(arg, c)) out.insert(p->slot);
      return;
    }
    if (p->kind == core::PatternKind::Tuple && arg->kind == core::Kind::Tuple) {
      shared_args(p->left, arg->args[0], c, out);
      shared_args(p->right, arg->args[1], c, out);
    }
  }

  /// The argument of a call whose `shared` parameters take ids: evaluated as expr() would, with
  /// each shared component's ids in its place and its base recorded by slot.
  VarId argument(const core::Pattern* p, const core::Expr* arg, Ctx& c, const std::set<uint32_t>& shared,
                 std::map<uint32_t, VarId>& bases) {
    if (p->kind == core::PatternKind::Var && shared.count(p->slot)) {
      Shared view = *shared_view(arg, c);
      bases[p->slot] = view.base;
      return view.ids;
    }
    if (p->kind == core::PatternKind::Tuple && arg->kind == core::Kind::Tuple && !shared.empty()) {
      VarId a = argument(p->left, arg->args[0], c, shared, bases);
      VarId b = argument(p->right, arg->args[1], c, shared, bases);
      return emit_value(Op::Tuple, "tuple", types_.pair(fn_->vars[a].type, fn_->vars[b].type), {a, b});
    }
    return expr(arg, c);
  }

  /// A body after the Core rewrites the flattener wants: lambdas substituted into their calls,
  /// and one call for an if whose branches end in calls of one function.
  const core::Expr* inlined_body(const core::Expr* body) {
    auto [it, fresh] = inlined_.emplace(body, nullptr);
    if (fresh) it->second = merge_tail_calls(core_, inline_lambdas(core_, body));
    return it->second;
  }

  /// The type of the variable `slot` of pattern `p` (over the function's type variables).
  static const Type* param_slot_type(const core::Pattern* p, uint32_t slot) {
    if (!p) return nullptr;
    if (p->kind == core::PatternKind::Var) return p->slot == slot ? p->type : nullptr;
    if (const Type* t = param_slot_type(p->left, slot)) return t;
    return param_slot_type(p->right, slot);
  }

  void translate_function(const Pending& p) {
    fn_ = &funcs_[p.id];
    block_ = &fn_->body;
    shared_base_of_.clear();
    targs_ = &p.targs;
    known_ = p.known;
    fn_->param = new_var(p.fn ? hint_of(p.fn->param) : "unit", fn_->arg_type);
    Ctx c;
    c.n = host(Op::Length, "n", {fn_->param});
    if (paths_ && p.fn) {
      fn_->has_path = true;
      fn_->path = new_var("path", types_.int_());
      c.path = fn_->path;
    } else if (paths_) {  // the entry: one instance at the top level, path hash p_0 = 0
      c.path = emit_value(Op::Lit, "path", types_.int_(), {c.n});
      block_->stmts.back().lit = lang::Value::int_(0);
      block_->stmts.back().type = types_.int_();
    }
    VarId result;
    if (p.fn && !p.body) {
      // Declared, never defined: calling it is the interpreter's runtime error, raised by
      // every instance that reaches the call.
      VarId msg = emit_value(Op::Lit, "msg", types_.string(), {c.n});
      block_->stmts.back().lit = lang::Value::string(lang::message(lang::RuntimeErrorId::NoBody, upper(p.fn->name)));
      block_->stmts.back().type = types_.string();
      result = prim(core::PrimId::RuntimeErrorPrim, fn_->result_type, {msg}, {fn_->result_type}, p.fn->span);
    } else if (std::optional<LoopKernel> loop = p.fn && p.known.empty()
                                                   ? loop_kernel(core_, *p.fn, inlined_body(p.body), p.targs, p.shared)
                                                   : std::nullopt) {
      if (!loop->body.folds()) {
        result = loop_kernel_call(std::move(*loop), p);
      } else {  // Note [Loops that give up]: the flattened body beside it
        Block* outer = block_;
        auto then_block = std::make_unique<Block>(), else_block = std::make_unique<Block>();
        block_ = then_block.get();
        then_block->result = loop_kernel_call(std::move(*loop), p);
        block_ = else_block.get();
        // Its own count of instances: as a recursion loop (Note [Recursion as loops]) it is the
        // body of every level.
        Ctx flat;
        flat.n = host(Op::Length, "n", {fn_->param});
        flat.path = c.path;
        else_block->result = flattened_body(p, flat);
        block_ = outer;
        result = emit_value(Op::TryLoop, "result", fn_->result_type, {}, p.fn->span);
        Stmt& s = block_->stmts.back();
        s.then_block = std::move(then_block);
        s.else_block = std::move(else_block);
      }
    } else {
      result = flattened_body(p, c);
    }
    if (!p.fn) fn_->result_type = fn_->vars[result].type;
    fn_->body.result = result;
  }

  /// The function's body, flattened (the parameter bound in `c`).
  VarId flattened_body(const Pending& p, Ctx& c) {
    if (p.fn) bind(p.fn->param, fn_->param, c);
    for (uint32_t slot : p.shared) {  // ids in the argument, the base from the call
      VarId ids = c.slots.at(slot);
      VarId base = shared_base(p, slot, fn_->vars[ids].hint);
      c.slots.erase(slot);
      c.shared[slot] = Shared{base, ids};
    }
    return expr(inlined_body(p.body), c);
  }

  /// The base of the shared parameter `slot`, which each call binds (Note [Shared arguments]):
  /// made on first use, the same for a loop kernel and the flattened body beside it.
  VarId shared_base(const Pending& p, uint32_t slot, std::string hint) {
    if (auto it = shared_base_of_.find(slot); it != shared_base_of_.end()) return it->second;
    VarId base = new_var(std::move(hint), close(param_slot_type(p.fn->param, slot), p.fn->span));
    fn_->shared_bases.push_back(base);
    shared_base_of_[slot] = base;
    return base;
  }

  /// The body of a loop function (Note [Loop kernels]): one loop_kernel statement on the
  /// leaves of the parameter, whose outputs are the leaves of the result.
  /// Its shared sequences come in as bases, like any function's (Note [Shared arguments]), and
  /// are the statement's operands after the inputs.
  VarId loop_kernel_call(LoopKernel loop, const Pending& p) {
    KernelBody& k = loop.body;
    std::vector<VarId> ins, rows;
    leaves(fn_->param, ins, rows);
    std::map<uint32_t, VarId> base_of;
    for (uint32_t slot : p.shared) base_of[slot] = shared_base(p, slot, "rows");
    for (const LoopKernel::Source& from : loop.seqs) ins.push_back(from.shared ? base_of.at(from.which) : rows.at(from.which));
    std::vector<VarId> outs, seq_outs;
    for (uint32_t o : k.outputs) outs.push_back(new_var("r", k.nodes[o].type));
    for (uint32_t q : k.seq_outputs) seq_outs.push_back(new_var("r", fn_->vars[ins.at(k.inputs.size() + q)].type));
    std::vector<VarId> all = outs;
    all.insert(all.end(), seq_outs.begin(), seq_outs.end());
    Stmt& s = emit(Op::LoopKernel, all.at(0), std::move(ins), p.fn->span);
    s.outs = all;
    s.kernel = std::make_shared<const KernelBody>(std::move(k));
    size_t next = 0, next_seq = 0;
    return rebuild(fn_->result_type, outs, next, seq_outs, next_seq);
  }

  /// The flat scalar components of `v`, in order, and its sequences (`seqs`).
  void leaves(VarId v, std::vector<VarId>& out, std::vector<VarId>& seqs) {
    const Type* t = fn_->vars[v].type;
    if (t->kind != TypeKind::Pair) {
      (t->kind == TypeKind::Seq ? seqs : out).push_back(v);
      return;
    }
    leaves(emit_value(Op::First, fn_->vars[v].hint, t->a, {v}), out, seqs);
    leaves(emit_value(Op::Second, fn_->vars[v].hint, t->b, {v}), out, seqs);
  }

  /// A value of type `t` from its flat scalar components parts[next...] and its sequences
  /// seqs[next_seq...].
  VarId rebuild(const Type* t, const std::vector<VarId>& parts, size_t& next, const std::vector<VarId>& seqs,
                size_t& next_seq) {
    if (t->kind == TypeKind::Seq) return seqs.at(next_seq++);
    if (t->kind != TypeKind::Pair) return parts.at(next++);
    VarId a = rebuild(t->a, parts, next, seqs, next_seq);
    VarId b = rebuild(t->b, parts, next, seqs, next_seq);
    return emit_value(Op::Tuple, "tuple", t, {a, b});
  }

  // ---- patterns ----

  void bind(const core::Pattern* p, VarId v, Ctx& c) {
    switch (p->kind) {
      case core::PatternKind::Var: c.slots[p->slot] = v; return;
      case core::PatternKind::Tuple: {
        const Type* t = fn_->vars[v].type;
        bind(p->left, emit_value(Op::First, hint_of(p->left), t->a, {v}), c);
        bind(p->right, emit_value(Op::Second, hint_of(p->right), t->b, {v}), c);
        return;
      }
      case core::PatternKind::Con: {
        const Type* t = fn_->vars[v].type;
        const Type* fields = types_.subst(t->data->fields, t->args);
        bind(p->left, emit_value(Op::Retype, "fields", fields, {v}), c);
        return;
      }
    }
  }

  // ---- expressions ----

  VarId expr(const core::Expr* e, Ctx& c) {
    switch (e->kind) {
      case core::Kind::Lit: {
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Lit, "lit", t, {c.n}, e->span);
        block_->stmts.back().lit = e->lit;
        block_->stmts.back().type = t;
        return v;
      }
      case core::Kind::Local: {
        if (auto k = known_.find(e->slot); k != known_.end() && runtime_env(k->second) && !env_args_.count(e))
          throw Unsupported{captures_message(k->second.lambda), e->span};
        return slot_value(e->slot, c);
      }
      case core::Kind::Global: {
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Global, core_.globals.at(e->id)->name, t, {c.n}, e->span);
        block_->stmts.back().global = e->id;
        return v;
      }
      case core::Kind::FnRef: {
        // A function used as data: a constant boxed function value per instance.
        std::optional<KnownFn> f = known_fn(e);
        NDP_ASSERT(f.has_value(), "vectorise: FnRef to a variable");
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Lit, known_name(*f), t, {c.n}, e->span);
        block_->stmts.back().lit = lang::Value::fn(std::make_shared<const KnownFn>(*f));
        block_->stmts.back().type = t;
        return v;
      }
      case core::Kind::Prim: {
        if (std::optional<Shared> sh = shared_operand(e, c)) {
          if (e->prim == core::PrimId::Elt) {
            VarId index = expr(e->args[1], c);
            return emit_value(Op::IndexShared, "elt", close(e->type, e->span), {sh->base, sh->ids, index}, e->span);
          }
          // #a: the lengths of the shared sequences, then one per instance.
          VarId lens = prim(core::PrimId::Length, types_.int_(), {sh->base}, close_all(e->type_args), e->span);
          return emit_value(Op::Gather, "len", types_.int_(), {lens, sh->ids});
        }
        std::vector<VarId> args;
        for (const core::Expr* a : e->args) args.push_back(expr(a, c));
        // rand draws at its instances' paths; rand_seed checks that they are the top level's.
        if ((e->prim == core::PrimId::Rand || e->prim == core::PrimId::RandSeed) && paths_) args.push_back(c.path);
        const Type* result = close(e->type, e->span);
        if (e->prim == core::PrimId::Identity && plain_scalar(result)) {
          // The identity of a flat scalar type (zero(x) in `abs`) is a literal, which a fused
          // kernel holds as a constant (its argument is still computed above).
          VarId v = emit_value(Op::Lit, "zero", result, {c.n}, e->span);
          block_->stmts.back().lit = identity_of_plain(result);
          block_->stmts.back().type = result;
          return v;
        }
        return prim(e->prim, result, std::move(args), close_all(e->type_args), e->span);
      }
      case core::Kind::Call: return call(e, c);
      case core::Kind::Tuple: {
        VarId a = expr(e->args[0], c);
        VarId b = expr(e->args[1], c);
        // The components' types: a lambda passed with its environment is that environment.
        return emit_value(Op::Tuple, "tuple", types_.pair(fn_->vars[a].type, fn_->vars[b].type), {a, b});
      }
      case core::Kind::If: return if_(e, c);
      case core::Kind::Let: {
        if (e->pattern->kind == core::PatternKind::Var)
          if (std::optional<KnownFn> f = known_fn(e->args[0])) {
            known_[e->pattern->slot] = *f;
            if (runtime_env(*f)) env_args_.insert(e->args[0]);
          }
        VarId v = expr(e->args[0], c);
        bind(e->pattern, v, c);
        return expr(e->args[1], c);
      }
      case core::Kind::Map: return map(e, c);
      case core::Kind::Lambda: {
        if (!e->captures.empty()) {
          // Passed to a known parameter or let-bound: the value is its environment.
          if (!env_args_.count(e)) throw Unsupported{captures_message(e), e->span};
          VarId env = slot_value(e->captures.back(), c);
          for (size_t i = e->captures.size() - 1; i-- > 0;) {
            VarId part = slot_value(e->captures[i], c);
            env = emit_value(Op::Tuple, "env", types_.pair(fn_->vars[part].type, fn_->vars[env].type), {part, env});
          }
          return env;
        }
        KnownFn f = *known_fn(e);
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Lit, known_name(f), t, {c.n}, e->span);
        block_->stmts.back().lit = lang::Value::fn(std::make_shared<const KnownFn>(f));
        block_->stmts.back().type = t;
        return v;
      }
      case core::Kind::SeqLit: {
        if (std::optional<lang::Value> constant = constant_value(e)) {
          const Type* t = close(e->type, e->span);
          VarId v = emit_value(Op::Lit, "lit", t, {c.n}, e->span);
          block_->stmts.back().lit = std::move(*constant);
          block_->stmts.back().type = t;
          return v;
        }
        std::vector<VarId> elems;
        for (const core::Expr* a : e->args) elems.push_back(expr(a, c));
        return emit_value(Op::SeqLit, "seq", close(e->type, e->span), std::move(elems), e->span);
      }
      case core::Kind::EmptySeq: {
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Empty, "empty", t, {c.n}, e->span);
        block_->stmts.back().type = t;
        return v;
      }
      case core::Kind::Con: {
        VarId fields = expr(e->args[0], c);
        return emit_value(Op::Retype, e->data ? e->data->name : "con", close(e->type, e->span), {fields});
      }
      case core::Kind::Time: {
        auto inner = std::make_unique<Block>();
        Block* outer = block_;
        block_ = inner.get();
        inner->result = expr(e->args[0], c);
        block_ = outer;
        VarId v = emit_value(Op::Time, "timed", close(e->type, e->span), {}, e->span);
        block_->stmts.back().then_block = std::move(inner);
        return v;
      }
    }
    lang::ndp_unreachable("vectorise: Core kind");
  }

  std::vector<const Type*> close_all(const std::vector<const Type*>& ts) {
    std::vector<const Type*> out;
    for (const Type* t : ts) out.push_back(targs_ ? types_.subst(t, *targs_) : t);
    return out;
  }

  /// The shared sequence that `a[i]` or `#a` reads, if `a` is one (shared_view).
  std::optional<Shared> shared_operand(const core::Expr* e, Ctx& c) {
    if (e->prim != core::PrimId::Elt && e->prim != core::PrimId::Length) return std::nullopt;
    return shared_view(e->args[0], c);
  }

  // Note [Rows of shared sequences]
  // `m[i][j]` with m shared by the instances (a matrix read inside an apply-to-each) would copy
  // the whole row m[i] for every instance, to read one element of it. A row is itself read
  // through ids: the rows of every shared sequence, concatenated (Elements), hold row k of
  // sequence s at position offset(s) + k, so `m[i]` is the shared view (rows, offset(ids) + i).
  // The positions come from one IndexShared on the rows' own numbers (Iota nested by the
  // lengths), which also checks i against the length with elt's error; then `[j]` and `#` read
  // the row in place. The cost is one pass over the rows, not over their elements.
  // A global sequence is a view too: its one value read by every instance (id 0).
  std::optional<Shared> shared_view(const core::Expr* e, Ctx& c) {
    if (e->kind == core::Kind::Global && shared_here(e, c)) {
      // A global sequence: its one value is the base, and every instance reads it (id 0),
      // where Global would make n copies.
      const Type* t = close(e->type, e->span);
      VarId one = host(Op::Const, "one", {});
      block_->stmts.back().lit = lang::Value::int_(1);
      VarId base = emit_value(Op::Global, core_.globals.at(e->id)->name, t, {one}, e->span);
      block_->stmts.back().global = e->id;
      VarId zero = emit_value(Op::Lit, "first", types_.int_(), {c.n});
      block_->stmts.back().lit = lang::Value::int_(0);
      block_->stmts.back().type = types_.int_();
      return Shared{base, zero};
    }
    if (e->kind == core::Kind::Local) {
      if (c.slots.count(e->slot)) return std::nullopt;
      auto it = c.shared.find(e->slot);
      if (it == c.shared.end()) return std::nullopt;
      return it->second;
    }
    if (e->kind != core::Kind::Prim || e->prim != core::PrimId::Elt) return std::nullopt;
    if (close(e->type, e->span)->kind != TypeKind::Seq) return std::nullopt;
    std::optional<Shared> outer = shared_view(e->args[0], c);
    if (!outer) return std::nullopt;
    VarId index = expr(e->args[1], c);
    auto [rows, positions] = rows_of(outer->base);
    VarId ids = emit_value(Op::IndexShared, "row", types_.int_(), {positions, outer->ids, index}, e->span);
    return Shared{rows, ids};
  }

  VarId call(const core::Expr* e, Ctx& c) {
    std::optional<KnownFn> callee = known_fn(e->args[0]);
    if (!callee) return call_unknown(e, c);
    const Type* result = close(e->type, e->span);
    switch (callee->target) {
      case KnownFn::Target::Global: {
        const core::Pattern* param = core_.globals.at(callee->id)->fn.param;
        std::map<uint32_t, KnownFn> known;
        known_args(param, e->args[1], known);
        std::set<uint32_t> shared;
        shared_args(param, e->args[1], c, shared);
        std::map<uint32_t, VarId> bases;
        VarId arg = argument(param, e->args[1], c, shared, bases);
        FuncId f = instance(callee->id, callee->type_args, std::move(known), std::move(shared));
        std::vector<VarId> uses{arg};
        if (paths_) uses.push_back(c.path);
        for (const auto& [slot, base] : bases) uses.push_back(base);  // in slot order, as the callee's
        VarId v = emit_value(Op::Call, "r", result, std::move(uses), e->span);
        block_->stmts.back().func = f;
        return v;
      }
      case KnownFn::Target::Constructor: {
        VarId arg = expr(e->args[1], c);
        return emit_value(Op::Retype, callee->data->name, result, {arg});
      }
      case KnownFn::Target::Prim: {
        // A primitive called through a function value: spread the tuple argument.
        VarId arg = expr(e->args[1], c);
        auto id = static_cast<core::PrimId>(callee->id);
        int arity = core::prim_info(id).arity;
        std::vector<VarId> parts;
        VarId rest = arg;
        for (int i = 0; i + 1 < arity; ++i) {
          const Type* t = fn_->vars[rest].type;
          parts.push_back(emit_value(Op::First, "arg", t->a, {rest}));
          rest = emit_value(Op::Second, "arg", t->b, {rest});
        }
        parts.push_back(rest);
        return prim(id, result, std::move(parts), callee->type_args, e->span);
      }
      case KnownFn::Target::Lambda: {
        // A lambda whose environment is a variable: the callee's slot holds it.
        std::optional<VarId> env;
        if (runtime_env(*callee)) {
          NDP_ASSERT(e->args[0]->kind == core::Kind::Local, "vectorise: a lambda called in place was not inlined");
          env = slot_value(e->args[0]->slot, c);
        }
        return call_lambda(*callee, env, expr(e->args[1], c), c, e->span);
      }
    }
    lang::ndp_unreachable("vectorise: call target");
  }

  // Note [Calls through function values]
  // A call whose callee is known only at run time (`{g(3) : g in fs}`) dispatches over the
  // function values of its type that the program can make: the functions, primitives and
  // constructors it names other than as callees, its lambdas without captured variables, and
  // the functions held in global variables. fn_tag gives each instance the position of its
  // function among them (by target and id), and an if-chain over the positions calls each
  // candidate as a known function on the instances that hold it, so each branch is an ordinary
  // flattened call of its own instance. A function value that is none of them (a lambda whose
  // type arguments cannot be read from the call's type) raises a named runtime error.
  VarId call_unknown(const core::Expr* e, Ctx& c) {
    const Type* arg_t = close(e->args[1]->type, e->span);
    const Type* result = close(e->type, e->span);
    const Type* fn_t = types_.fn(arg_t, result);
    std::vector<KnownFn> cands = candidates(fn_t);
    VarId fns = expr(e->args[0], c);
    VarId arg = expr(e->args[1], c);
    std::vector<lang::Value> listed;
    for (const KnownFn& f : cands) listed.push_back(lang::Value::fn(std::make_shared<const KnownFn>(f)));
    VarId tag = emit_value(Op::FnTag, "fn_tag", types_.int_(), {fns}, e->span);
    block_->stmts.back().lit = lang::Value::seq(std::move(listed));
    block_->stmts.back().type = types_.seq(fn_t);
    // The chain reads the tag and the argument through slots of their own.
    uint32_t tag_slot = synthetic_slot_++, arg_slot = synthetic_slot_++;
    c.slots[tag_slot] = tag;
    c.slots[arg_slot] = arg;
    auto local = [&](uint32_t slot, const Type* t) {
      core::Expr* l = core_.new_expr(core::Kind::Local, t, e->span);
      l->slot = slot;
      return l;
    };
    core::Expr* msg = core_.new_expr(core::Kind::Lit, types_.string(), e->span);
    msg->lit = lang::Value::string("a function value that this program cannot call here (not supported by the flat "
                                   "backends yet)");
    core::Expr* chain = core_.new_expr(core::Kind::Prim, result, e->span);
    chain->prim = core::PrimId::RuntimeErrorPrim;
    chain->args = {msg};
    chain->type_args = {result};
    for (size_t i = cands.size(); i-- > 0;) {
      uint32_t fn_slot = synthetic_slot_++;
      known_[fn_slot] = cands[i];
      core::Expr* call = core_.new_expr(core::Kind::Call, result, e->span);
      call->args = {local(fn_slot, fn_t), local(arg_slot, arg_t)};
      core::Expr* pos = core_.new_expr(core::Kind::Lit, types_.int_(), e->span);
      pos->lit = lang::Value::int_(static_cast<int64_t>(i));
      core::Expr* test = core_.new_expr(core::Kind::Prim, types_.bool_(), e->span);
      test->prim = core::PrimId::Eq;
      test->args = {local(tag_slot, types_.int_()), pos};
      test->type_args = {types_.int_()};
      core::Expr* branch = core_.new_expr(core::Kind::If, result, e->span);
      branch->args = {test, call, chain};
      chain = branch;
    }
    return expr(chain, c);
  }

  // Slots for what call_unknown binds, above every frame's own.
  uint32_t synthetic_slot_ = 0x80000000u;

  /// The function values of closed type `t` that the program can make (Note [Calls through
  /// function values]), each with its type arguments.
  std::vector<KnownFn> candidates(const Type* t) {
    if (!universe_) {
      universe_.emplace();
      for (const auto& g : core_.globals) {
        if (g->kind == core::Global::Kind::Function && g->fn.body) collect_values(g->fn.body, false);
        // A global kept as a vector holds no function values (Note [Globals kept as vectors]).
        if (g->kind == core::Global::Kind::Variable && g->has_value && !g->vector) collect_values(g->variable_value());
      }
      collect_values(entry_body_, false);
    }
    std::vector<KnownFn> out;
    std::set<std::pair<int, uint32_t>> seen;
    for (const Candidate& cand : *universe_) {
      std::optional<KnownFn> f = instantiate(cand, t);
      if (f && seen.emplace(static_cast<int>(f->target), f->id).second) out.push_back(std::move(*f));
    }
    return out;
  }

  struct Candidate {
    const core::Expr* node = nullptr;  // a FnRef or a Lambda; or
    std::shared_ptr<const KnownFn> value;  // a function held by a global
  };
  std::optional<std::vector<Candidate>> universe_;
  const core::Expr* entry_body_ = nullptr;

  void collect_values(const core::Expr* e, bool callee) {
    if (e->kind == core::Kind::FnRef && !callee) universe_->push_back(Candidate{e, nullptr});
    if (e->kind == core::Kind::Lambda && e->captures.empty() && !callee) universe_->push_back(Candidate{e, nullptr});
    for (size_t i = 0; i < e->args.size(); ++i) collect_values(e->args[i], e->kind == core::Kind::Call && i == 0);
  }

  void collect_values(const lang::Value& v) {
    switch (v.kind()) {
      case lang::ValueKind::Fn:
        if (v.fn().env.empty()) universe_->push_back(Candidate{nullptr, std::make_shared<const KnownFn>(v.fn())});
        return;
      case lang::ValueKind::Seq:
        for (const lang::Value& x : v.elems()) collect_values(x);
        return;
      case lang::ValueKind::Pair:
        collect_values(v.first());
        collect_values(v.second());
        return;
      case lang::ValueKind::Data: collect_values(v.data().fields); return;
      default: return;
    }
  }

  /// The candidate at closed function type `t`, when its type matches.
  std::optional<KnownFn> instantiate(const Candidate& cand, const Type* t) {
    if (cand.value) {
      const KnownFn& f = *cand.value;
      const Type* ft = nullptr;
      if (f.target == KnownFn::Target::Lambda) ft = f.lambda ? types_.subst(f.lambda->type, f.type_args) : nullptr;
      else ft = types_.subst(scheme_of(f).type, f.type_args);
      if (ft != t) return std::nullopt;
      return f;
    }
    const core::Expr* e = cand.node;
    KnownFn f;
    const Type* pattern = nullptr;
    if (e->kind == core::Kind::Lambda) {
      f.target = KnownFn::Target::Lambda;
      f.id = e->id;
      f.lambda = e;
      pattern = e->type;
    } else {
      const core::Global& g = *core_.globals.at(e->id);
      switch (g.kind) {
        case core::Global::Kind::Function: f.target = KnownFn::Target::Global; f.id = e->id; break;
        case core::Global::Kind::Prim: f.target = KnownFn::Target::Prim; f.id = static_cast<uint32_t>(g.prim); break;
        case core::Global::Kind::Constructor:
          f.target = KnownFn::Target::Constructor;
          f.id = g.data->id;
          f.data = g.data;
          break;
        case core::Global::Kind::Variable: return std::nullopt;
      }
      pattern = g.scheme.type;
      f.type_args.assign(g.scheme.vars.size(), nullptr);
    }
    if (!match_type(pattern, t, f.type_args)) return std::nullopt;
    for (const Type* a : f.type_args)
      if (!a) return std::nullopt;  // a lambda's frame variable that its type does not show
    return f;
  }

  const lang::TypeScheme& scheme_of(const KnownFn& f) {
    switch (f.target) {
      case KnownFn::Target::Global: return core_.globals.at(f.id)->scheme;
      case KnownFn::Target::Prim: return core_.globals.at(prim_global(static_cast<core::PrimId>(f.id)))->scheme;
      default: break;
    }
    for (const auto& g : core_.globals)
      if (g->kind == core::Global::Kind::Constructor && g->data == f.data) return g->scheme;
    lang::ndp_unreachable("vectorise: a function value without a scheme");
  }

  uint32_t prim_global(core::PrimId id) {
    for (size_t i = 0; i < core_.globals.size(); ++i)
      if (core_.globals[i]->kind == core::Global::Kind::Prim && core_.globals[i]->prim == id) return static_cast<uint32_t>(i);
    lang::ndp_unreachable("vectorise: a primitive without its global");
  }

  /// Matches `pattern` (over scheme variables) against the closed `t`, binding the variables.
  static bool match_type(const Type* pattern, const Type* t, std::vector<const Type*>& binds) {
    if (pattern->kind == TypeKind::Var) {
      if (binds.size() <= pattern->index) binds.resize(pattern->index + 1, nullptr);
      const Type*& b = binds[pattern->index];
      if (!b) b = t;
      return b == t;
    }
    if (pattern->kind != t->kind) return false;
    switch (t->kind) {
      case TypeKind::Seq: return match_type(pattern->a, t->a, binds);
      case TypeKind::Pair:
      case TypeKind::Fn: return match_type(pattern->a, t->a, binds) && match_type(pattern->b, t->b, binds);
      case TypeKind::Data:
        if (pattern->data != t->data || pattern->args.size() != t->args.size()) return false;
        for (size_t i = 0; i < t->args.size(); ++i)
          if (!match_type(pattern->args[i], t->args[i], binds)) return false;
        return true;
      default: return true;
    }
  }

  // Note [Lambdas on the flat backends]
  // A lambda written in a function and called there has been substituted into its calls by
  // inline_lambdas, so its captured slots are that context's variables. One passed to a known
  // parameter (or let-bound and passed on) travels as its environment, the tuple of its
  // captured values (env_args_, instance_arg_type). Its body is flattened where it is called, in
  // a context of its own: its parameter, and the captured slots read from the environment. A
  // lambda that captures variables and is kept as data is refused by name (captures_message).
  VarId call_lambda(const KnownFn& callee, std::optional<VarId> env, VarId arg, const Ctx& c, lang::Span span) {
    const core::Expr* lam = callee.lambda;
    if (!lam) throw Unsupported{"a call of an anonymous function read back from a compiled program", span};
    NDP_ASSERT(env.has_value() == !lam->captures.empty(), "vectorise: a lambda without its environment");
    const std::vector<const Type*>* outer_targs = targs_;
    std::map<uint32_t, KnownFn> outer_known = std::move(known_);
    known_.clear();
    targs_ = &callee.type_args;
    Ctx inner;
    inner.n = c.n;
    inner.path = c.path;
    std::map<uint32_t, const Type*> capture_types;
    slot_types(lam->args[0], capture_types);
    for (size_t i = 0; i < lam->captures.size(); ++i) {
      const Type* t = close(capture_types.at(lam->captures[i]), lam->span);
      // Component i of the right-nested environment tuple.
      VarId rest = *env;
      for (size_t j = 0; j < i; ++j) rest = emit_value(Op::Second, "env", fn_->vars[rest].type->b, {rest});
      inner.slots[lam->captures[i]] =
          i + 1 < lam->captures.size() ? emit_value(Op::First, lam->capture_names[i], t, {rest}) : rest;
    }
    bind(lam->pattern, arg, inner);
    VarId r = expr(lam->args[0], inner);
    targs_ = outer_targs;
    known_ = std::move(outer_known);
    return r;
  }

  /// The value of a slot in context `c` (a shared sequence is copied out for the context).
  VarId slot_value(uint32_t slot, const Ctx& c) {
    auto it = c.slots.find(slot);
    if (it != c.slots.end()) return it->second;
    auto sh = c.shared.find(slot);
    NDP_ASSERT(sh != c.shared.end(), "vectorise: slot not in context");
    const Var& base = fn_->vars[sh->second.base];
    return emit_value(Op::Gather, base.hint, base.type, {sh->second.base, sh->second.ids});
  }

  /// The types of the slots that `e` reads.
  static void slot_types(const core::Expr* e, std::map<uint32_t, const Type*>& out) {
    if (e->kind == core::Kind::Local) out.emplace(e->slot, e->type);
    for (const core::Expr* a : e->args) slot_types(a, out);
  }

  static std::string captures_message(const core::Expr* lam) {
    std::string names;
    for (const std::string& n : lam->capture_names) names += (names.empty() ? "" : ", ") + n;
    return "an anonymous function that uses variables around it (" + names +
           ") and is passed on or kept as a value is not supported by the flat backends yet";
  }

  /// Moves the free slots of `exprs` from `c` into a new context by `transfer` (replicate or
  /// pack), so the new context sees exactly the variables it uses.
  template <class Transfer>
  void carry(const std::set<uint32_t>& needed, const Ctx& from, Ctx& to, Transfer transfer) {
    for (uint32_t slot : needed) {
      if (to.slots.count(slot) || to.shared.count(slot)) continue;
      if (auto sh = from.shared.find(slot); sh != from.shared.end()) {
        to.shared[slot] = Shared{sh->second.base, transfer(sh->second.ids)};
        continue;
      }
      auto it = from.slots.find(slot);
      if (it == from.slots.end()) continue;  // bound inside (a let in the body)
      to.slots[slot] = transfer(it->second);
    }
  }

  /// One branch of a lifted `if`: the instances where `flags` holds, packed; skipped (zero
  /// instances) when there are none.
  VarId branch(const core::Expr* e, const Ctx& c, VarId flags, VarId count, const Type* result_type) {
    Block* outer = block_;
    auto then_block = std::make_unique<Block>();
    auto else_block = std::make_unique<Block>();
    block_ = then_block.get();
    Ctx b;
    b.n = count;
    if (paths_) b.path = emit_value(Op::Pack, "path", types_.int_(), {c.path, flags});
    carry(free_slots(e), c, b, [&](VarId v) { return emit_value(Op::Pack, fn_->vars[v].hint, fn_->vars[v].type, {v, flags}); });
    then_block->result = expr(e, b);
    block_ = else_block.get();
    else_block->result = emit_value(Op::Nothing, "none", result_type, {});
    block_ = outer;
    VarId r = emit_value(Op::IfNonEmpty, "branch", result_type, {count});
    Stmt& s = block_->stmts.back();
    s.then_block = std::move(then_block);
    s.else_block = std::move(else_block);
    return r;
  }

  // Note [Conditionals as selects]
  // `if c then a else b` where both branches are small formulas that cannot fail and have no
  // effect (speculable: literals, flat scalar variables and primitives kernel_prim_ok accepts)
  // is computed as select(c, a, b): both branches on every instance, then a choice per
  // instance, with the value and the errors of the packed branches (neither branch can raise
  // one) and none of their cost (two counts, two packs per variable a branch reads, a merge),
  // and the whole conditional can join a fused kernel. A cumulative normal distribution's
  // `if d > 0.0 then 1.0 - c else c` is the typical case.
  static constexpr int kSpeculableNodes = 24;  // per branch: both run on every instance

  static bool plain_scalar(const Type* t) { return t->kind <= TypeKind::F32; }

  bool speculable(const core::Expr* e, int& budget) {
    if (--budget < 0) return false;
    const Type* t = targs_ ? types_.subst(e->type, *targs_) : e->type;
    if (open_outside_functions(t) || !plain_scalar(t)) return false;
    switch (e->kind) {
      case core::Kind::Lit: case core::Kind::Local: return true;
      case core::Kind::Prim: {
        std::vector<const Type*> args;
        for (const core::Expr* a : e->args) {
          if (!speculable(a, budget)) return false;
          args.push_back(targs_ ? types_.subst(a->type, *targs_) : a->type);
        }
        return kernel_prim_ok(e->prim, args, t);
      }
      default: return false;
    }
  }

  VarId if_(const core::Expr* e, Ctx& c) {
    const Type* result = close(e->type, e->span);
    int then_budget = kSpeculableNodes, else_budget = kSpeculableNodes;
    if (plain_scalar(result) && speculable(e->args[1], then_budget) && speculable(e->args[2], else_budget)) {
      VarId flags = expr(e->args[0], c);
      VarId t = expr(e->args[1], c);
      VarId f = expr(e->args[2], c);
      return prim(core::PrimId::Select, result, {flags, t, f}, {result}, e->span);
    }
    VarId flags = expr(e->args[0], c);
    VarId not_flags = prim(core::PrimId::Not, types_.bool_(), {flags}, {types_.bool_()});
    VarId n_then = host(Op::Count, "n_then", {flags});
    VarId n_else = host(Op::Count, "n_else", {not_flags});
    VarId t = branch(e->args[1], c, flags, n_then, result);
    VarId f = branch(e->args[2], c, not_flags, n_else, result);
    return emit_value(Op::Merge, "if", result, {flags, t, f});
  }

  /// A generator `x in s` over a shared sequence of sequences (`{c[j] : c in counts}` with
  /// counts shared): its rows are read in place (Note [Rows of shared sequences]) instead of
  /// copied for every instance. Returns the rows and, per instance, the sequence of the numbers
  /// of its rows (which has the generator's lengths, and whose elements are the row ids).
  std::optional<std::pair<VarId, VarId>> generator_rows(const core::Pattern* p, const core::Expr* source, Ctx& c) {
    if (p->kind != core::PatternKind::Var) return std::nullopt;
    if (close(source->type, source->span)->a->kind != TypeKind::Seq) return std::nullopt;
    std::optional<Shared> view = shared_view(source, c);
    if (!view) return std::nullopt;
    auto [rows, positions] = rows_of(view->base);
    return std::pair{rows, emit_value(Op::Gather, "row_ids", types_.seq(types_.int_()), {positions, view->ids})};
  }

  /// The rows of a vector of sequences of sequences, concatenated, and per sequence the
  /// numbers of its rows among them.
  std::pair<VarId, VarId> rows_of(VarId base) {
    const Type* base_t = fn_->vars[base].type;
    VarId rows = emit_value(Op::Elements, "rows", base_t->a, {base});
    VarId lens = emit_value(Op::Lengths, "row_counts", types_.int_(), {base});
    VarId count = host(Op::Length, "rows", {rows});
    VarId numbers = emit_value(Op::Iota, "row", types_.int_(), {count});
    return {rows, emit_value(Op::Nest, "rows_of", types_.seq(types_.int_()), {lens, numbers})};
  }

  /// The body of apply-to-each `e` compiled as a map kernel (Note [Map kernels]), with the
  /// variables it reads in the order of its inputs; nothing where it is not a map kernel.
  struct MapPlan {
    std::vector<MapKernelSlot> slots;
    LoopKernel kernel;
  };
  std::optional<MapPlan> plan_map_kernel(const core::Expr* e, const core::Expr* body, Ctx& inner) {
    MapPlan plan;
    std::set<uint32_t> generated;  // the generators' variables
    for (const core::Pattern* g : e->gens)
      if (g->kind == core::PatternKind::Var) generated.insert(g->slot);
    for (uint32_t slot : free_slots(body)) {
      if (auto sh = inner.shared.find(slot); sh != inner.shared.end()) {
        plan.slots.push_back(MapKernelSlot{slot, fn_->vars[sh->second.base].type, true, generated.count(slot) > 0});
      } else if (auto v = inner.slots.find(slot); v != inner.slots.end() && !known_.count(slot)) {
        plan.slots.push_back(MapKernelSlot{slot, fn_->vars[v->second].type, false});
      } else {
        return std::nullopt;
      }
    }
    static const std::vector<const Type*> no_targs;
    std::optional<LoopKernel> mk = map_kernel(core_, body, targs_ ? *targs_ : no_targs, plan.slots);
    if (!mk) return std::nullopt;
    plan.kernel = std::move(*mk);
    return plan;
  }

  /// The rows a plan reads as each instance's own: a generator's shared rows, or sequences of
  /// its own (map_lanes's operands).
  std::vector<VarId> own_row_bases(const MapPlan& plan, const Ctx& inner) const {
    std::vector<VarId> bases;
    for (const MapKernelSlot& slot : plan.slots) {
      if (slot.own_row) bases.push_back(inner.shared.at(slot.slot).base);
      else if (!slot.shared && slot.type->kind == TypeKind::Seq) bases.push_back(inner.slots.at(slot.slot));
    }
    return bases;
  }

  /// The planned map kernel as one map_kernel statement on the instances of `inner`.
  VarId map_kernel_call(const core::Expr* e, const core::Expr* body, Ctx& outer, VarId lengths, Ctx& inner, MapPlan plan) {
    KernelBody& k = plan.kernel.body;
    std::vector<VarId> ins, rows;
    std::map<uint32_t, VarId> base_of;
    if (plan.kernel.count_input) {  // the enclosing instance of each: one value, not stored, where there is one
      VarId positions = emit_value(Op::Iota, "instance", types_.int_(), {outer.n});
      ins.push_back(emit_value(Op::Replicate, "instance", types_.int_(), {positions, lengths}));
    }
    for (const MapKernelSlot& slot : plan.slots) {
      if (slot.shared) {
        ins.push_back(inner.shared.at(slot.slot).ids);
        base_of[slot.slot] = inner.shared.at(slot.slot).base;
      } else {
        leaves(inner.slots.at(slot.slot), ins, rows);
      }
    }
    for (const LoopKernel::Source& from : plan.kernel.seqs)
      ins.push_back(from.shared ? base_of.at(from.which) : rows.at(from.which));
    std::vector<VarId> outs;
    for (uint32_t o : k.outputs) outs.push_back(new_var("r", k.nodes[o].type));
    Stmt& s = emit(Op::MapKernel, outs.at(0), std::move(ins), e->span);
    s.outs = outs;
    s.level = e->level;
    s.subwarp_width = static_cast<uint8_t>(e->subwarp_width);
    s.kernel = std::make_shared<const KernelBody>(std::move(k));
    size_t next = 0, next_seq = 0;
    return rebuild(close(body->type, body->span), outs, next, {}, next_seq);
  }

  /// Note [Map kernels]: a body that folds only the rows `bases`, its own, as the planned map
  /// kernel or flattened, whichever map_lanes chooses at run time.
  VarId own_rows_either_form(const core::Expr* e, const core::Expr* body, Ctx& outer, VarId lengths, Ctx& inner,
                             MapPlan plan, const std::vector<VarId>& bases) {
    Block* around = block_;
    auto then_block = std::make_unique<Block>(), else_block = std::make_unique<Block>();
    block_ = then_block.get();
    then_block->result = map_kernel_call(e, body, outer, lengths, inner, std::move(plan));
    block_ = else_block.get();
    Ctx flat = inner;  // what the flattened body binds stays in its block
    else_block->result = expr(body, flat);
    block_ = around;
    std::vector<VarId> operands{inner.n};
    operands.insert(operands.end(), bases.begin(), bases.end());
    VarId lanes = host(Op::MapLanes, "lanes", std::move(operands));
    VarId r = emit_value(Op::IfNonEmpty, "either", fn_->vars[then_block->result].type, {lanes}, e->span);
    Stmt& s = block_->stmts.back();
    s.then_block = std::move(then_block);
    s.else_block = std::move(else_block);
    return r;
  }

  /// Whether `e` may hold parallel work, the only work a map kernel's unit shares: an
  /// apply-to-each, a call, or a primitive on a sequence (a reduction of a free sequence). A
  /// body without any is elementwise: no map kernel, and `at thread` is what it runs as.
  static bool nested_work(const core::Expr* e) {
    if (e->kind == core::Kind::Map || e->kind == core::Kind::Call) return true;
    if (e->kind == core::Kind::Prim &&
        std::any_of(e->args.begin(), e->args.end(), [](const core::Expr* a) { return a->type->kind == TypeKind::Seq; }))
      return true;
    return std::any_of(e->args.begin(), e->args.end(), [](const core::Expr* a) { return nested_work(a); });
  }

  /// The warning for an `at LEVEL` the flattener cannot honour (extensions.md §2).
  void not_honoured(const core::Expr* e) {
    const std::string level = lang::ast::level_text(e->level, e->subwarp_width);
    lang::Diagnostic d;
    d.severity = lang::Severity::Warning;
    d.span = e->span;
    d.message = e->level == lang::ast::AtLevel::Seq
                    ? "`at seq` is not honoured here: an apply-to-each is a sequential loop only inside the unit of "
                      "an enclosing one; the compiler chooses the level"
                    : fmt::format("`at {}` is not honoured here: the body of this apply-to-each cannot run within one "
                                  "unit (it recurses, filters, gives a sequence, or folds nothing); the compiler "
                                  "chooses the level",
                                  level);
    prog_.warnings.push_back(std::move(d));
  }

  VarId map(const core::Expr* e, Ctx& c) {
    size_t g = e->gens.size();
    std::vector<VarId> seqs;
    std::map<size_t, VarId> row_bases;  // generators that run over rows in place
    for (size_t i = 0; i < g; ++i) {
      if (std::optional<std::pair<VarId, VarId>> rows = generator_rows(e->gens[i], e->args[i], c)) {
        row_bases[i] = rows->first;
        seqs.push_back(rows->second);
        continue;
      }
      seqs.push_back(expr(e->args[i], c));
    }
    VarId lengths = emit_value(Op::Lengths, "lens", types_.int_(), {seqs[0]});
    for (size_t i = 1; i < g; ++i) emit(Op::CheckLengths, 0, {seqs[0], seqs[i]}, e->span);
    // The new context: one instance per element of every generator sequence.
    Ctx inner;
    std::vector<VarId> elems;
    for (size_t i = 0; i < g; ++i) {
      const Type* elem_type = fn_->vars[seqs[i]].type->a;
      elems.push_back(emit_value(Op::Elements, hint_of(e->gens[i]), elem_type, {seqs[i]}));
    }
    inner.n = host(Op::Length, "m", {elems[0]});
    if (paths_) inner.path = emit_value(Op::PathStep, "path", types_.int_(), {c.path, lengths});
    for (size_t i = 0; i < g; ++i) {
      if (auto rows = row_bases.find(i); rows != row_bases.end()) inner.shared[e->gens[i]->slot] = Shared{rows->second, elems[i]};
      else bind(e->gens[i], elems[i], inner);
    }
    const core::Expr* body = e->args[g];
    const core::Expr* filter = e->has_filter ? e->args[g + 1] : nullptr;
    std::set<uint32_t> needed = free_slots(body);
    if (filter)
      for (uint32_t s : free_slots(filter)) needed.insert(s);
    // Free sequences become shared (no copy per element); everything else is replicated.
    std::set<uint32_t> shared_seqs, copied;
    for (uint32_t slot : needed) {
      auto it = c.slots.find(slot);
      bool seq = it != c.slots.end() && fn_->vars[it->second].type->kind == TypeKind::Seq;
      (seq ? shared_seqs : copied).insert(slot);
    }
    if (!shared_seqs.empty()) {
      VarId positions = emit_value(Op::Iota, "instance", types_.int_(), {c.n});
      VarId ids = emit_value(Op::Replicate, "instance", types_.int_(), {positions, lengths});
      for (uint32_t slot : shared_seqs) inner.shared[slot] = Shared{c.slots.at(slot), ids};
    }
    carry(copied, c, inner, [&](VarId v) {
      return emit_value(Op::Replicate, fn_->vars[v].hint, fn_->vars[v].type, {v, lengths});
    });
    const Type* result = close(e->type, e->span);
    // Note [Map kernels]: `grid` is the flattened form; the other levels pin a map kernel.
    using lang::ast::AtLevel;
    const AtLevel level = e->level;
    const bool pinned = level == AtLevel::Thread || level == AtLevel::Subwarp || level == AtLevel::Warp || level == AtLevel::Block;
    const bool nested = nested_work(body);
    std::optional<VarId> folded;
    if (!filter && level != AtLevel::Grid && nested) {
      if (std::optional<MapPlan> plan = plan_map_kernel(e, body, inner)) {
        // A fold over each instance's own rows alone is a map kernel where pinned, either form
        // at auto (where map_lanes has rows to look at), and flattened otherwise.
        std::vector<VarId> bases = own_row_bases(*plan, inner);
        if (pinned || !plan->kernel.own_rows_only)
          folded = map_kernel_call(e, body, c, lengths, inner, std::move(*plan));
        else if (level == AtLevel::Auto && !bases.empty())
          folded = own_rows_either_form(e, body, c, lengths, inner, std::move(*plan), bases);
      }
    }
    if (!folded && (level == AtLevel::Seq || (pinned && (nested || level != AtLevel::Thread)))) not_honoured(e);
    if (!filter) {
      VarId b = folded ? *folded : expr(body, inner);
      return emit_value(Op::Nest, "map", result, {lengths, b});
    }
    // Filter first, then the body only on the instances that pass (language.md §4.4).
    VarId keep = expr(filter, inner);
    const Type* int_seq = types_.seq(types_.int_());
    VarId ones = prim(core::PrimId::Btoi, types_.int_(), {keep}, {});
    VarId per_seq = emit_value(Op::Nest, "kept", int_seq, {lengths, ones});
    VarId kept_lengths = prim(core::PrimId::Sum, types_.int_(), {per_seq}, {types_.int_()});
    Ctx packed;
    packed.n = host(Op::Count, "m_kept", {keep});
    if (paths_) packed.path = emit_value(Op::Pack, "path", types_.int_(), {inner.path, keep});
    carry(free_slots(body), inner, packed,
          [&](VarId v) { return emit_value(Op::Pack, fn_->vars[v].hint, fn_->vars[v].type, {v, keep}); });
    VarId b = expr(body, packed);
    return emit_value(Op::Nest, "map", result, {kept_lengths, b});
  }
};

}  // namespace

Program vectorise(core::Program& core, const core::Expr* body) { return Vectoriser(core).run(body); }

}  // namespace ndp::flatten
