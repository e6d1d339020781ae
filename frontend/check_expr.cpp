// Inference and desugaring of expressions and patterns into Core IR (language.md §3.8, §4.4,
// §4.5): operators become primitive nodes, calls are resolved, locals get frame slots.
#include <fmt/format.h>

#include <climits>
#include <string_view>

#include "frontend/check_form.h"
#include "frontend/check_print.h"

namespace ndp::frontend {

namespace ast = lang::ast;
namespace core = lang::core;
using core::Kind;
using core::PrimId;
using lang::TypeKind;

static bool is_special_symbol(const std::string& s) { return s == "t" || s == "f" || s == "time"; }

core::Expr* FormChecker::mk(Kind k, IType* t, lang::Span s) {
  core::Expr* e = prog_.new_expr(k, nullptr, s);
  expr_types_.emplace_back(e, t);
  return e;
}

core::Pattern* FormChecker::mk_pattern(core::PatternKind k, IType* t, lang::Span s) {
  core::Pattern* p = prog_.new_pattern(k, nullptr, s);
  pattern_types_.emplace_back(p, t);
  pattern_itype_.emplace(p, t);
  return p;
}

void FormChecker::set_type_args(core::Expr* e, std::vector<IType*> args) {
  if (!args.empty()) expr_targs_.emplace_back(e, std::move(args));
}

void FormChecker::error(lang::Span span, std::string msg, std::vector<std::string> extra) {
  diags_.error(span, std::move(msg), std::move(extra));
}

bool FormChecker::check_arg(IType* arg, IType* param, const std::string& fname, const ast::Expr* whole) {
  size_t m = u_.mark();
  if (u_.unify(arg, param)) return true;
  u_.rollback(m);
  error(whole->span,
        fmt::format("for function {} in expression {}: inferred argument types don't match function specification",
                    fname, expr_to_string(whole)),
        {"  Argument types: " + show(arg), "  Function types: " + show(param)});
  return false;
}

// ---- Names ----

FormChecker::Node FormChecker::name(const std::string& n, lang::Span span) {
  for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
    if (it->name != n) continue;
    core::Expr* e = mk(Kind::Local, it->type, span);
    e->slot = it->slot;
    return {e, it->type};
  }
  if (self_name_ && *self_name_ == n) {
    core::Expr* e = mk(Kind::FnRef, self_type_, span);
    self_refs_.push_back(e);
    return {e, self_type_};
  }
  auto found = env_.names.find(n);
  if (found == env_.names.end()) {
    error(span, fmt::format("{} is undefined.", n));
    return {mk(Kind::Lit, u_.error(), span), u_.error()};
  }
  const core::Global* g = prog_.globals[found->second].get();
  std::vector<IType*> vars = u_.fresh_vars(g->scheme.vars);
  IType* t = u_.from_type(g->scheme.type, vars);
  core::Expr* e = mk(g->kind == core::Global::Kind::Variable ? Kind::Global : Kind::FnRef, t, span);
  e->id = found->second;
  set_type_args(e, std::move(vars));
  return {e, t};
}

// ---- Expressions ----

FormChecker::Node FormChecker::infer(const ast::Expr* e) {
  using EK = ast::ExprKind;
  switch (e->kind) {
    case EK::Int: {
      if (e->sized == ast::Sized::I32) {
        if (e->int_value < INT32_MIN || e->int_value > INT32_MAX)
          error(e->span, fmt::format("The literal {}i32 does not fit in 32 bits.", e->int_value));
        core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::I32), e->span);
        n->lit = lang::Value::i32(static_cast<int32_t>(e->int_value));
        return {n, u_.base(TypeKind::I32)};
      }
      core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::Int), e->span);
      n->lit = lang::Value::int_(e->int_value);
      return {n, u_.base(TypeKind::Int)};
    }
    case EK::Float: {
      if (e->sized == ast::Sized::F32) {
        core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::F32), e->span);
        n->lit = lang::Value::f32(static_cast<float>(e->float_value));
        return {n, u_.base(TypeKind::F32)};
      }
      core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::Float), e->span);
      n->lit = lang::Value::float_(e->float_value);
      return {n, u_.base(TypeKind::Float)};
    }
    case EK::Bool: {
      core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::Bool), e->span);
      n->lit = lang::Value::bool_(e->bool_value);
      return {n, u_.base(TypeKind::Bool)};
    }
    case EK::Char: {
      core::Expr* n = mk(Kind::Lit, u_.base(TypeKind::Char), e->span);
      n->lit = lang::Value::char_(e->char_value);
      return {n, u_.base(TypeKind::Char)};
    }
    case EK::String: {
      IType* t = u_.seq(u_.base(TypeKind::Char));
      core::Expr* n = mk(Kind::Lit, t, e->span);
      n->lit = lang::Value::string(e->text);
      return {n, t};
    }
    case EK::Name: return name(e->text, e->span);
    case EK::Tuple: {
      Node a = infer(e->kids[0]);
      Node b = infer(e->kids[1]);
      IType* t = u_.pair(a.t, b.t);
      core::Expr* n = mk(Kind::Tuple, t, e->span);
      n->args = {a.e, b.e};
      return {n, t};
    }
    case EK::Binary: {
      auto op = env_.prims_by_name.find(e->text);
      NDP_ASSERT(op != env_.prims_by_name.end(), "binary operator without a primitive");
      Node a = infer(e->kids[0]);
      Node b = infer(e->kids[1]);
      return prim_apply(op->second, {a, b}, e, e->text);
    }
    case EK::Unary: {
      PrimId id = e->text == "#" ? PrimId::Length : e->text == "@" ? PrimId::ToString : PrimId::Negate;
      Node a = infer(e->kids[0]);
      return prim_apply(id, {a}, e, e->text);
    }
    case EK::Call: return call(e, e->kids[0], e->kids[1]);
    case EK::Index: {
      Node a = infer(e->kids[0]);
      Node i = infer(e->kids[1]);
      return prim_apply(PrimId::Elt, {a, i}, e, "elt");
    }
    case EK::SeqLit: {
      std::vector<Node> elems;
      for (const ast::Expr* k : e->kids) elems.push_back(infer(k));
      for (size_t i = 1; i < elems.size(); ++i) {
        size_t m = u_.mark();
        if (u_.unify(elems[0].t, elems[i].t)) continue;
        u_.rollback(m);
        error(e->kids[i]->span,
              fmt::format("In the sequence {} the elements must all be of the same type.", expr_to_string(e)),
              {"  First element type: " + show(elems[0].t), "  This element type: " + show(elems[i].t)});
      }
      IType* t = u_.seq(elems[0].t);
      core::Expr* n = mk(Kind::SeqLit, t, e->span);
      for (const Node& x : elems) n->args.push_back(x.e);
      return {n, t};
    }
    case EK::EmptySeq: {
      IType* t = u_.seq(type_expr(e->type, {}));
      return {mk(Kind::EmptySeq, t, e->span), t};
    }
    case EK::Range: {
      Node s = infer(e->kids[0]);
      Node end = infer(e->kids[1]);
      Node stride;
      if (e->kids.size() > 2) {
        stride = infer(e->kids[2]);
      } else {
        stride.t = u_.base(TypeKind::Int);
        stride.e = mk(Kind::Lit, stride.t, e->span);
        stride.e->lit = lang::Value::int_(1);
      }
      // iseq takes (start, stride, end).
      return prim_apply(PrimId::Iseq, {s, stride, end}, e, "iseq");
    }
    case EK::ApplyToEach: return apply_to_each(e);
    case EK::If: return if_(e);
    case EK::Let: return let(e);
    case EK::Lambda: return lambda(e);
    case EK::Time: {
      Node a = infer(e->kids[0]);
      IType* t = u_.pair(a.t, u_.base(TypeKind::Float));
      core::Expr* n = mk(Kind::Time, t, e->span);
      n->args = {a.e};
      return {n, t};
    }
  }
  lang::ndp_unreachable("expression kind");
}

// ---- Calls ----

FormChecker::Node FormChecker::call(const ast::Expr* whole, const ast::Expr* callee, const ast::Expr* arg) {
  if (callee->kind == ast::ExprKind::Name) {
    const std::string& n = callee->text;
    bool shadowed = (self_name_ && *self_name_ == n);
    for (const Local& l : scope_) shadowed |= l.name == n;
    const core::Global* g = shadowed ? nullptr : env_.lookup(n);
    if (g && g->kind == core::Global::Kind::Prim) {
      Node a = infer(arg);
      return prim_call(g->prim, a, whole, n);
    }
    if (g && g->kind == core::Global::Kind::Constructor) {
      Node a = infer(arg);
      std::vector<IType*> vars = u_.fresh_vars(g->scheme.vars);
      IType* ft = u_.from_type(g->scheme.type, vars);
      check_arg(a.t, ft->a, n, whole);
      core::Expr* c = mk(Kind::Con, ft->b, whole->span);
      c->data = g->data;
      c->args = {a.e};
      return {c, ft->b};
    }
  }
  Node f = infer(callee);
  Node a = infer(arg);
  std::string fname = callee->kind == ast::ExprKind::Name ? callee->text : expr_to_string(callee);
  return apply_value(whole, fname, f, a);
}

FormChecker::Node FormChecker::apply_value(const ast::Expr* whole, const std::string& fname, Node f, Node a) {
  IType* ft = u_.find(f.t);
  IType* res = u_.error();
  if (ft->kind == IKind::Fn) {
    check_arg(a.t, ft->a, fname, whole);
    res = ft->b;
  } else if (ft->kind == IKind::Var && u_.unify(ft, u_.fn(a.t, res = u_.fresh()))) {
    // A callee of unknown type (a parameter) becomes a function (language.md §3.5).
  } else if (ft->kind != IKind::Error) {
    res = u_.error();
    error(whole->span, fmt::format("In expression {}: {} is not a function type.", expr_to_string(whole), fname),
          {"  Its type: " + show(f.t)});
  }
  core::Expr* n = mk(Kind::Call, res, whole->span);
  n->args = {f.e, a.e};
  return {n, res};
}

FormChecker::Node FormChecker::prim_apply(PrimId id, std::vector<Node> comps, const ast::Expr* whole,
                                          const std::string& fname) {
  const core::Global* g = prog_.globals[env_.prim_global(id)].get();
  NDP_ASSERT(comps.size() == static_cast<size_t>(core::prim_info(id).arity), "primitive arity");
  std::vector<IType*> vars = u_.fresh_vars(g->scheme.vars);
  IType* ft = u_.from_type(g->scheme.type, vars);
  IType* arg = comps.back().t;
  for (size_t i = comps.size() - 1; i-- > 0;) arg = u_.pair(comps[i].t, arg);
  check_arg(arg, ft->a, fname, whole);
  core::Expr* n = mk(Kind::Prim, ft->b, whole->span);
  n->prim = id;
  for (const Node& c : comps) n->args.push_back(c.e);
  set_type_args(n, std::move(vars));
  return {n, ft->b};
}

// A call `rem(p)` passes one value that the primitive spreads into `arity` arguments: a tuple
// written out in the call is taken apart directly, anything else goes through a Let.
FormChecker::Node FormChecker::prim_call(PrimId id, Node arg, const ast::Expr* whole, const std::string& fname) {
  size_t arity = static_cast<size_t>(core::prim_info(id).arity);
  std::vector<Node> comps;
  Node rest = arg;
  while (comps.size() + 1 < arity && rest.e->kind == Kind::Tuple) {
    // A tuple's type is a pair (made so, or unified with one): its halves type the parts.
    const IType* pair = u_.find(rest.t);
    if (pair->kind != IKind::Pair) break;
    comps.push_back({const_cast<core::Expr*>(rest.e->args[0]), pair->a});
    rest = {const_cast<core::Expr*>(rest.e->args[1]), pair->b};
  }
  if (comps.size() + 1 == arity) {
    comps.push_back(rest);
    return prim_apply(id, std::move(comps), whole, fname);
  }
  const core::Global* g = prog_.globals[env_.prim_global(id)].get();
  std::vector<IType*> vars = u_.fresh_vars(g->scheme.vars);
  IType* ft = u_.from_type(g->scheme.type, vars);
  core::Expr* p = mk(Kind::Prim, ft->b, whole->span);
  p->prim = id;
  set_type_args(p, std::move(vars));
  if (!check_arg(arg.t, ft->a, fname, whole)) return {p, ft->b};
  // Component types follow the signature's tuple structure: (t0, (t1, ... t_{n-1})).
  std::vector<IType*> types;
  IType* cur = ft->a;
  for (size_t i = 0; i + 1 < arity; ++i) {
    types.push_back(cur->a);
    cur = cur->b;
  }
  types.push_back(cur);
  std::vector<core::Pattern*> vars_p;
  for (size_t i = 0; i < arity; ++i) {
    core::Pattern* v = mk_pattern(core::PatternKind::Var, types[i], arg.e->span);
    v->slot = slots_++;
    v->name = fmt::format("{}_arg{}", fname, i);
    vars_p.push_back(v);
    core::Expr* local = mk(Kind::Local, types[i], arg.e->span);
    local->slot = v->slot;
    p->args.push_back(local);
  }
  core::Pattern* pat = vars_p.back();
  IType* pat_t = types.back();
  for (size_t i = arity - 1; i-- > 0;) {
    pat_t = u_.pair(types[i], pat_t);
    core::Pattern* t = mk_pattern(core::PatternKind::Tuple, pat_t, arg.e->span);
    t->left = vars_p[i];
    t->right = pat;
    pat = t;
  }
  core::Expr* let = mk(Kind::Let, ft->b, whole->span);
  let->pattern = pat;
  let->args = {arg.e, p};
  return {let, ft->b};
}

// ---- Binding forms ----

core::Pattern* FormChecker::pattern(const ast::Pattern* p, IType*& type, std::set<std::string>& seen,
                                    std::vector<Local>& vars) {
  switch (p->kind) {
    case ast::PatternKind::Var: {
      if (is_special_symbol(p->name))
        error(p->span, fmt::format("The symbol {} is a special symbol, it cannot be used as a variable.", p->name));
      else if (!seen.insert(p->name).second)
        error(p->span, fmt::format("The variable: {} is repeated in the pattern of a let binding, or an apply-to-each.",
                                   p->name));
      type = u_.fresh();
      core::Pattern* out = mk_pattern(core::PatternKind::Var, type, p->span);
      out->slot = slots_++;
      out->name = p->name;
      vars.push_back({p->name, out->slot, type});
      return out;
    }
    case ast::PatternKind::Tuple: {
      IType *lt, *rt;
      core::Pattern* l = pattern(p->left, lt, seen, vars);
      core::Pattern* r = pattern(p->right, rt, seen, vars);
      type = u_.pair(lt, rt);
      core::Pattern* out = mk_pattern(core::PatternKind::Tuple, type, p->span);
      out->left = l;
      out->right = r;
      return out;
    }
    case ast::PatternKind::Con: {
      IType* st;
      const core::Global* g = env_.lookup(p->name);
      if (!g || g->kind != core::Global::Kind::Constructor) {
        error(p->span, fmt::format("{} is not a datatype constructor.", p->name));
        core::Pattern* sub = pattern(p->left, st, seen, vars);
        type = u_.error();
        core::Pattern* out = mk_pattern(core::PatternKind::Con, type, p->span);
        out->left = sub;
        return out;
      }
      std::vector<IType*> tv = u_.fresh_vars(g->scheme.vars);
      IType* ft = u_.from_type(g->scheme.type, tv);
      core::Pattern* sub = pattern(p->left, st, seen, vars);
      size_t m = u_.mark();
      if (!u_.unify(st, ft->a)) {
        u_.rollback(m);
        error(p->span, fmt::format("The pattern {} does not match the fields of datatype {}.", pattern_to_string(p), p->name),
              {"  Pattern type: " + show(st), "  Field types: " + show(ft->a)});
      }
      type = ft->b;
      core::Pattern* out = mk_pattern(core::PatternKind::Con, type, p->span);
      out->data = g->data;
      out->left = sub;
      return out;
    }
  }
  lang::ndp_unreachable("pattern kind");
}

static std::string binding_text(const ast::Pattern* p, const ast::Expr* value, const char* construct) {
  bool generator = std::string_view(construct).find("APPLY") != std::string_view::npos;
  return pattern_to_string(p) + (generator ? " in " : " = ") + (value ? expr_to_string(value) : p->name);
}

core::Pattern* FormChecker::bind(const ast::Pattern* p, IType* value, const char* construct,
                                 const ast::Expr* value_exp, std::set<std::string>& seen, std::vector<Local>& vars) {
  IType* pt;
  size_t first = vars.size();
  core::Pattern* out = pattern(p, pt, seen, vars);
  size_t m = u_.mark();
  if (!u_.unify(pt, value)) {
    u_.rollback(m);
    std::string binding = binding_text(p, value_exp, construct);
    error(p->span,
          fmt::format("In the binding of {} {} the value does not match the pattern on the left.", construct, binding),
          {"  Pattern type: " + show(pt), "  Value type: " + show(value)});
  }
  for (size_t i = first; i < vars.size(); ++i) scope_.push_back(vars[i]);
  return out;
}

FormChecker::Node FormChecker::pattern_value(const core::Pattern* p) {
  IType* t = pattern_itype_.at(p);
  switch (p->kind) {
    case core::PatternKind::Var: {
      core::Expr* e = mk(Kind::Local, t, p->span);
      e->slot = p->slot;
      return {e, t};
    }
    case core::PatternKind::Tuple: {
      Node l = pattern_value(p->left);
      Node r = pattern_value(p->right);
      core::Expr* e = mk(Kind::Tuple, t, p->span);
      e->args = {l.e, r.e};
      return {e, t};
    }
    case core::PatternKind::Con: {
      Node sub = pattern_value(p->left);
      core::Expr* e = mk(Kind::Con, t, p->span);
      e->data = p->data;
      e->args = {sub.e};
      return {e, t};
    }
  }
  lang::ndp_unreachable("pattern kind");
}

FormChecker::Node FormChecker::apply_to_each(const ast::Expr* e) {
  // Generator expressions are evaluated in the enclosing scope, before any pattern binds.
  std::vector<Node> sources;
  for (const ast::Generator& g : e->gens)
    sources.push_back(g.exp ? infer(g.exp) : name(g.pattern->name, g.pattern->span));
  size_t scope_mark = scope_.size();
  std::set<std::string> seen;
  std::vector<Local> vars;
  std::vector<const core::Pattern*> pats;
  for (size_t i = 0; i < e->gens.size(); ++i) {
    const ast::Generator& g = e->gens[i];
    IType* elem = u_.fresh();
    size_t m = u_.mark();
    if (!u_.unify(sources[i].t, u_.seq(elem))) {
      u_.rollback(m);
      error(g.exp ? g.exp->span : g.span,
            fmt::format("In the generator {} of an APPLY-TO-EACH construct the value must be a sequence.",
                        pattern_to_string(g.pattern) + " in " +
                            (g.exp ? expr_to_string(g.exp) : g.pattern->name)),
            {"  Value type: " + show(sources[i].t)});
      elem = u_.error();
    }
    pats.push_back(bind(g.pattern, elem, "an APPLY-TO-EACH construct", g.exp, seen, vars));
  }
  Node body = e->body ? infer(e->body) : pattern_value(pats[0]);
  Node filter;
  if (e->filter) {
    filter = infer(e->filter);
    size_t m = u_.mark();
    if (!u_.unify(filter.t, u_.base(TypeKind::Bool))) {
      u_.rollback(m);
      error(e->filter->span,
            fmt::format("The filter {} of an APPLY-TO-EACH construct must be of type BOOL.", expr_to_string(e->filter)),
            {"  Filter type: " + show(filter.t)});
    }
  }
  scope_.resize(scope_mark);
  IType* t = u_.seq(body.t);
  core::Expr* n = mk(Kind::Map, t, e->span);
  n->gens = pats;
  for (const Node& s : sources) n->args.push_back(s.e);
  n->args.push_back(body.e);
  if (e->filter) {
    n->args.push_back(filter.e);
    n->has_filter = true;
  }
  n->level = e->level;
  n->subwarp_width = e->subwarp_width;
  return {n, t};
}

FormChecker::Node FormChecker::let(const ast::Expr* e) {
  size_t scope_mark = scope_.size();
  std::vector<std::pair<core::Pattern*, Node>> binds;
  for (const ast::Binding& b : e->binds) {
    Node v = infer(b.exp);
    std::set<std::string> seen;
    std::vector<Local> vars;
    core::Pattern* p = bind(b.pattern, v.t, "a LET construct", b.exp, seen, vars);
    binds.emplace_back(p, v);
  }
  Node body = infer(e->kids[0]);
  scope_.resize(scope_mark);
  Node cur = body;
  for (size_t i = binds.size(); i-- > 0;) {
    core::Expr* n = mk(Kind::Let, body.t, i == 0 ? e->span : e->binds[i].span);
    n->pattern = binds[i].first;
    n->args = {binds[i].second.e, cur.e};
    cur = {n, body.t};
  }
  return cur;
}

namespace {

void pattern_slots(const core::Pattern* p, std::set<uint32_t>& out) {
  if (!p) return;
  if (p->kind == core::PatternKind::Var) out.insert(p->slot);
  pattern_slots(p->left, out);
  pattern_slots(p->right, out);
}

/// The slots `e` reads and those it binds (slots are unique in a frame, so a slot read and not
/// bound inside `e` comes from outside it).
void slot_uses(const core::Expr* e, std::set<uint32_t>& reads, std::set<uint32_t>& binds) {
  if (e->kind == Kind::Local) reads.insert(e->slot);
  if (e->kind == Kind::Lambda) {  // built first: its captures are what it reads from outside
    reads.insert(e->captures.begin(), e->captures.end());
    return;
  }
  pattern_slots(e->pattern, binds);
  for (const core::Pattern* g : e->gens) pattern_slots(g, binds);
  for (const core::Expr* a : e->args) slot_uses(a, reads, binds);
}

}  // namespace

// A lambda is checked in the enclosing scope with its parameter bound, like a let body: its
// type is monomorphic (language.md §3.8), and its Core node lists the slots it captures.
FormChecker::Node FormChecker::lambda(const ast::Expr* e) {
  size_t scope_mark = scope_.size();
  std::set<std::string> seen;
  std::vector<Local> vars;
  IType* param_t = u_.fresh();
  core::Pattern* param = bind(e->param, param_t, "an anonymous function", nullptr, seen, vars);
  Node body = infer(e->kids[0]);
  scope_.resize(scope_mark);
  IType* t = u_.fn(param_t, body.t);
  core::Expr* n = mk(Kind::Lambda, t, e->span);
  n->pattern = param;
  n->args = {body.e};
  n->id = prog_.lambda_count++;
  std::set<uint32_t> reads, binds;
  pattern_slots(param, binds);
  slot_uses(body.e, reads, binds);
  for (uint32_t s : reads) {
    if (binds.count(s)) continue;
    n->captures.push_back(s);
    std::string name = "?";
    for (const Local& l : scope_)
      if (l.slot == s) name = l.name;
    n->capture_names.push_back(name);
  }
  return {n, t};
}

FormChecker::Node FormChecker::if_(const ast::Expr* e) {
  Node c = infer(e->kids[0]);
  size_t m = u_.mark();
  if (!u_.unify(c.t, u_.base(TypeKind::Bool))) {
    u_.rollback(m);
    error(e->kids[0]->span,
          fmt::format("In the IF expression {} the first argument must be of type BOOL.", expr_to_string(e)),
          {"  Condition type: " + show(c.t)});
  }
  Node a = infer(e->kids[1]);
  Node b = infer(e->kids[2]);
  m = u_.mark();
  if (!u_.unify(a.t, b.t)) {
    u_.rollback(m);
    error(e->span, fmt::format("In the IF expression {} the two branches must be of the same type.", expr_to_string(e)),
          {"  Then branch type: " + show(a.t), "  Else branch type: " + show(b.t)});
  }
  core::Expr* n = mk(Kind::If, a.t, e->span);
  n->args = {c.e, a.e, b.e};
  return {n, a.t};
}

// ---- Type expressions ----

lang::TypeClass class_from_name(const std::string& s, bool* ok) {
  *ok = true;
  if (s == "number") return lang::TypeClass::Number;
  if (s == "ordinal") return lang::TypeClass::Ordinal;
  if (s == "logical") return lang::TypeClass::Logical;
  if (s == "any") return lang::TypeClass::Any;
  *ok = false;
  return lang::TypeClass::Any;
}

bool FormChecker::context_vars(const std::vector<ast::ContextBind>& binds, std::vector<CtxVar>& out) {
  bool ok = true;
  for (const ast::ContextBind& b : binds) {
    bool known;
    lang::TypeClass cls = class_from_name(b.cls, &known);
    if (!known) {
      error(b.span, fmt::format("Unknown type class {} (the classes are number, ordinal, logical and any).", b.cls));
      ok = false;
    }
    for (const CtxVar& v : out)
      if (v.name == b.var) {
        error(b.span, fmt::format("The type variable {} is declared twice in the context.", b.var));
        ok = false;
      }
    out.push_back({b.var, u_.fresh(cls)});
  }
  return ok;
}

IType* FormChecker::type_expr(const ast::TypeExpr* t, const std::vector<CtxVar>& ctx) {
  switch (t->kind) {
    case ast::TypeExprKind::Name: {
      if (t->args.empty()) {
        for (const CtxVar& v : ctx)
          if (v.name == t->name) return v.type;
        const std::string& n = t->name;
        if (n == "int" || n == "i64") return u_.base(TypeKind::Int);
        if (n == "float" || n == "f64") return u_.base(TypeKind::Float);
        if (n == "bool") return u_.base(TypeKind::Bool);
        if (n == "char") return u_.base(TypeKind::Char);
        if (n == "i32") return u_.base(TypeKind::I32);
        if (n == "f32") return u_.base(TypeKind::F32);
        if (n == "stream") return u_.base(TypeKind::Stream);
      }
      auto d = env_.datatypes.find(t->name);
      if (d == env_.datatypes.end()) {
        if (t->args.empty())
          error(t->span, fmt::format("No type definition for {}.", t->name),
                {fmt::format("  (a type variable must be declared in the context, e.g. :: ({} in any))", t->name)});
        else
          error(t->span, fmt::format("No type definition for {}.", t->name));
        return u_.error();
      }
      const lang::DataDef* def = d->second;
      if (t->args.size() != def->params.size()) {
        error(t->span, fmt::format("The datatype {} takes {} type parameter(s), but {} are given.", def->name,
                                   def->params.size(), t->args.size()));
        return u_.error();
      }
      std::vector<IType*> args;
      for (size_t i = 0; i < t->args.size(); ++i) {
        IType* a = type_expr(t->args[i], ctx);
        if (!u_.constrain(a, def->params[i]))
          error(t->args[i]->span, fmt::format("The type {} is not in class {}, as parameter {} of datatype {} requires.",
                                              type_expr_to_string(t->args[i]), lang::class_name(def->params[i]),
                                              i + 1, def->name));
        args.push_back(a);
      }
      return u_.data(def, std::move(args));
    }
    case ast::TypeExprKind::Seq: return u_.seq(type_expr(t->args[0], ctx));
    case ast::TypeExprKind::Pair: {
      IType* a = type_expr(t->args[0], ctx);
      return u_.pair(a, type_expr(t->args[1], ctx));
    }
    case ast::TypeExprKind::Fn: {
      IType* a = type_expr(t->args[0], ctx);
      return u_.fn(a, type_expr(t->args[1], ctx));
    }
  }
  lang::ndp_unreachable("type expression kind");
}

}  // namespace ndp::frontend
