// Vectorisation of Core IR into lifted Flat IR functions (see vectorise.h).
#include "flatten/vectorise.h"

#include <fmt/format.h>

#include <deque>
#include <map>

#include "flatten/free_slots.h"
#include "lang/diagnostics.h"

namespace ndp::flat {

namespace {

using lang::Type;
using lang::TypeKind;
namespace core = lang::core;

/// The instances processed together at one point of a lifted function, and where each Core
/// slot of the current Core function lives among them.
struct Ctx {
  VarId n = 0;                        // host: number of instances
  std::map<uint32_t, VarId> slots;    // Core slot -> vector of n instances
};

class Vectoriser {
 public:
  explicit Vectoriser(core::Program& core) : core_(core), types_(core.types) {}

  Program run(const core::Expr* body) {
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
  };

  core::Program& core_;
  lang::TypeContext& types_;
  Program prog_;
  // Functions under construction live in a deque: building one may add another (a call to a
  // new instance), and the blocks being filled must not move.
  std::deque<Function> funcs_;
  std::deque<Pending> pending_;
  std::map<std::pair<uint32_t, std::vector<const Type*>>, FuncId> instances_;

  // The function and block being built.
  Function* fn_ = nullptr;
  Block* block_ = nullptr;
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
    if (lang::contains_vars(c)) throw Unsupported{"a value of polymorphic type cannot be computed here", span};
    if (has_function(c)) throw Unsupported{"functions used as values are not supported by the flat backends yet", span};
    return c;
  }

  static bool has_function(const Type* t) {
    switch (t->kind) {
      case TypeKind::Fn: return true;
      case TypeKind::Seq: return has_function(t->a);
      case TypeKind::Pair: return has_function(t->a) || has_function(t->b);
      case TypeKind::Data:
        for (const Type* a : t->args)
          if (has_function(a)) return true;
        return has_function(t->data->fields);
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

  std::string hint_of(const core::Pattern* p) { return p && p->kind == core::PatternKind::Var ? p->name : "v"; }

  // ---- functions ----

  FuncId instance(uint32_t global, std::vector<const Type*> targs) {
    auto key = std::make_pair(global, targs);
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
    FuncId id = new_function(name, fty->a, fty->b);
    instances_.emplace(std::move(key), id);
    pending_.push_back(Pending{id, &fn, fn.body, std::move(targs)});
    return id;
  }

  void translate_function(const Pending& p) {
    fn_ = &funcs_[p.id];
    block_ = &fn_->body;
    targs_ = &p.targs;
    fn_->param = new_var(p.fn ? hint_of(p.fn->param) : "unit", fn_->arg_type);
    Ctx c;
    c.n = host(Op::Length, "n", {fn_->param});
    if (p.fn) {
      if (!p.body)
        throw Unsupported{fmt::format("function {} is declared but has no body", p.fn->name), p.fn->span};
      bind(p.fn->param, fn_->param, c);
    }
    VarId result = expr(p.body, c);
    if (!p.fn) fn_->result_type = fn_->vars[result].type;
    fn_->body.result = result;
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
        auto it = c.slots.find(e->slot);
        NDP_ASSERT(it != c.slots.end(), "vectorise: slot not in context");
        return it->second;
      }
      case core::Kind::Global: {
        const Type* t = close(e->type, e->span);
        VarId v = emit_value(Op::Global, core_.globals.at(e->id)->name, t, {c.n}, e->span);
        block_->stmts.back().global = e->id;
        return v;
      }
      case core::Kind::FnRef:
        throw Unsupported{"functions used as values are not supported by the flat backends yet", e->span};
      case core::Kind::Prim: {
        std::vector<VarId> args;
        for (const core::Expr* a : e->args) args.push_back(expr(a, c));
        return prim(e->prim, close(e->type, e->span), std::move(args), close_all(e->type_args, e->span), e->span);
      }
      case core::Kind::Call: return call(e, c);
      case core::Kind::Tuple: {
        VarId a = expr(e->args[0], c);
        VarId b = expr(e->args[1], c);
        return emit_value(Op::Tuple, "tuple", close(e->type, e->span), {a, b});
      }
      case core::Kind::If: return if_(e, c);
      case core::Kind::Let: {
        VarId v = expr(e->args[0], c);
        bind(e->pattern, v, c);
        return expr(e->args[1], c);
      }
      case core::Kind::Map: return map(e, c);
      case core::Kind::SeqLit: {
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

  std::vector<const Type*> close_all(const std::vector<const Type*>& ts, lang::Span span) {
    std::vector<const Type*> out;
    for (const Type* t : ts) out.push_back(targs_ ? types_.subst(t, *targs_) : t);
    (void)span;
    return out;
  }

  VarId call(const core::Expr* e, Ctx& c) {
    const core::Expr* callee = e->args[0];
    if (callee->kind != core::Kind::FnRef)
      throw Unsupported{"calls through function values are not supported by the flat backends yet", e->span};
    const core::Global& g = *core_.globals.at(callee->id);
    VarId arg = expr(e->args[1], c);
    const Type* result = close(e->type, e->span);
    switch (g.kind) {
      case core::Global::Kind::Function: {
        FuncId f = instance(callee->id, close_all(callee->type_args, e->span));
        VarId v = emit_value(Op::Call, "r", result, {arg}, e->span);
        block_->stmts.back().func = f;
        return v;
      }
      case core::Global::Kind::Constructor:
        return emit_value(Op::Retype, g.name, result, {arg});
      case core::Global::Kind::Prim: {
        // A primitive called through its name as a value: spread the tuple argument.
        int arity = core::prim_info(g.prim).arity;
        std::vector<VarId> parts;
        VarId rest = arg;
        for (int i = 0; i + 1 < arity; ++i) {
          const Type* t = fn_->vars[rest].type;
          parts.push_back(emit_value(Op::First, "arg", t->a, {rest}));
          rest = emit_value(Op::Second, "arg", t->b, {rest});
        }
        parts.push_back(rest);
        return prim(g.prim, result, std::move(parts), close_all(callee->type_args, e->span), e->span);
      }
      case core::Global::Kind::Variable:
        break;
    }
    throw Unsupported{"calls through function values are not supported by the flat backends yet", e->span};
  }

  /// Moves the free slots of `exprs` from `c` into a new context by `transfer` (replicate or
  /// pack), so the new context sees exactly the variables it uses.
  template <class Transfer>
  void carry(const std::set<uint32_t>& needed, const Ctx& from, Ctx& to, Transfer transfer) {
    for (uint32_t slot : needed) {
      if (to.slots.count(slot)) continue;
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

  VarId if_(const core::Expr* e, Ctx& c) {
    const Type* result = close(e->type, e->span);
    VarId flags = expr(e->args[0], c);
    VarId not_flags = prim(core::PrimId::Not, types_.bool_(), {flags}, {types_.bool_()});
    VarId n_then = host(Op::Count, "n_then", {flags});
    VarId n_else = host(Op::Count, "n_else", {not_flags});
    VarId t = branch(e->args[1], c, flags, n_then, result);
    VarId f = branch(e->args[2], c, not_flags, n_else, result);
    return emit_value(Op::Merge, "if", result, {flags, t, f});
  }

  VarId map(const core::Expr* e, Ctx& c) {
    size_t g = e->gens.size();
    std::vector<VarId> seqs;
    for (size_t i = 0; i < g; ++i) seqs.push_back(expr(e->args[i], c));
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
    for (size_t i = 0; i < g; ++i) bind(e->gens[i], elems[i], inner);
    const core::Expr* body = e->args[g];
    const core::Expr* filter = e->has_filter ? e->args[g + 1] : nullptr;
    std::set<uint32_t> needed = free_slots(body);
    if (filter)
      for (uint32_t s : free_slots(filter)) needed.insert(s);
    carry(needed, c, inner, [&](VarId v) {
      return emit_value(Op::Replicate, fn_->vars[v].hint, fn_->vars[v].type, {v, lengths});
    });
    const Type* result = close(e->type, e->span);
    if (!filter) {
      VarId b = expr(body, inner);
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
    carry(free_slots(body), inner, packed,
          [&](VarId v) { return emit_value(Op::Pack, fn_->vars[v].hint, fn_->vars[v].type, {v, keep}); });
    VarId b = expr(body, packed);
    return emit_value(Op::Nest, "map", result, {kept_lengths, b});
  }
};

}  // namespace

Program vectorise(core::Program& core, const core::Expr* body) { return Vectoriser(core).run(body); }

}  // namespace ndp::flat
