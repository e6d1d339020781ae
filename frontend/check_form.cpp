// Top-level forms: function and datatype definitions, assignments, expressions and `load`;
// generalisation, and the redefinition rules of language.md §4.2.
#include <fmt/format.h>

#include <cctype>

#include "frontend/check_form.h"
#include "frontend/check_print.h"

namespace ndp::frontend {

namespace ast = lang::ast;
namespace core = lang::core;
using core::Global;
using core::Kind;
using lang::TypeKind;

core::Global* Env::lookup(std::string_view name) const {
  auto it = names.find(name);
  return it == names.end() ? nullptr : prog.globals[it->second].get();
}

FormChecker::FormChecker(Env& env, lang::DiagnosticEngine& diags)
    : env_(env), prog_(env.prog), tc_(env.prog.types), diags_(diags), errors_at_start_(diags.error_count()) {}

std::optional<CheckedForm> FormChecker::check(const ast::TopLevel& form) {
  switch (form.kind) {
    case ast::TopKind::Function: return function(form);
    case ast::TopKind::Datatype: return datatype(form);
    case ast::TopKind::Assign: return assign(form);
    case ast::TopKind::Expr: return expression(form);
    case ast::TopKind::Command: return command(form);
  }
  lang::ndp_unreachable("top-level kind");
}

static std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

uint32_t FormChecker::commit_global(const std::string& name, Global::Kind kind, const lang::TypeScheme& scheme,
                                    bool quiet, CheckedForm& cf) {
  auto it = env_.names.find(name);
  std::vector<std::string>& notes = cf.notes;
  if (it == env_.names.end()) cf.replaced.emplace_back(name, std::nullopt);
  if (it != env_.names.end()) {
    const Global* old = prog_.globals[it->second].get();
    bool same = same_scheme(tc_, old->scheme, scheme);
    // User code never overwrites a library global: library code keeps calling its own.
    bool shadows_library = old->library && !env_.library_mode;
    if (same && !shadows_library && old->kind == kind) return it->second;
    if (!same && !quiet)
      notes.push_back(fmt::format("Redefining {} with a new type.  Old calls will not be modified.", upper(name)));
  }
  if (it != env_.names.end()) cf.replaced.emplace_back(name, it->second);
  Global* g = prog_.new_global(kind, name);
  g->scheme = scheme;
  g->library = env_.library_mode;
  uint32_t id = static_cast<uint32_t>(prog_.globals.size() - 1);
  env_.names[name] = id;
  return id;
}

void FormChecker::finalize(TypeOut& out) {
  for (auto& [e, t] : expr_types_) e->type = out.get(t);
  for (auto& [e, args] : expr_targs_) {
    e->type_args.clear();
    for (IType* a : args) e->type_args.push_back(out.get(a));
  }
  for (auto& [p, t] : pattern_types_) p->type = out.get(t);
}

static bool is_special_name(const std::string& s) { return s == "t" || s == "f" || s == "time"; }

// ---- function NAME PATTERN [: TYPE] [= EXP] ----

std::optional<CheckedForm> FormChecker::function(const ast::TopLevel& form) {
  const std::string& fname = form.name;
  if (is_special_name(fname)) {
    error(form.name_span, fmt::format("The symbol {} is a special symbol, it cannot be used as a variable.", fname));
    return std::nullopt;
  }
  IType* sig = nullptr;
  if (form.signature) {
    std::vector<CtxVar> ctx;
    context_vars(form.context, ctx);
    sig = type_expr(form.signature, ctx);
    if (u_.find(sig)->kind != IKind::Fn && u_.find(sig)->kind != IKind::Error) {
      error(form.signature->span, "Not a function type.",
            {"  (a signature is ARGUMENT -> RESULT; several arguments are a parenthesised tuple)"});
      sig = nullptr;
    }
  } else if (!form.body) {
    error(form.span, fmt::format("The function {} has neither a body nor a type signature.", fname));
  }

  std::set<std::string> seen;
  std::vector<Local> params;
  IType* param_t;
  core::Pattern* param = pattern(form.pattern, param_t, seen, params);
  IType* result_t = u_.fresh();
  IType* self = u_.fn(param_t, result_t);
  if (sig) {
    size_t m = u_.mark();
    if (!u_.unify(self, sig)) {
      u_.rollback(m);
      error(form.pattern->span,
            fmt::format("The parameter {} of function {} does not match its signature.",
                        pattern_to_string(form.pattern), fname),
            {"  Parameter type: " + show(param_t), "  Signature: " + show(sig)});
    }
  }
  // A body for an earlier declaration (§3.7) must have the declared type.
  const Global* old = env_.lookup(fname);
  bool completes_declaration = form.body && old && old->kind == Global::Kind::Function && !old->fn.body &&
                               !(old->library && !env_.library_mode);
  if (completes_declaration) {
    std::vector<IType*> vars = u_.fresh_vars(old->scheme.vars);
    IType* declared = u_.from_type(old->scheme.type, vars);
    size_t m = u_.mark();
    if (!u_.unify(self, declared)) {
      u_.rollback(m);
      error(form.name_span, fmt::format("The definition of {} does not match its declaration.", fname),
            {"  Definition type: " + show(self), "  Declared type: " + show(declared)});
    }
  }

  for (const Local& l : params) scope_.push_back(l);
  const core::Expr* body = nullptr;
  if (form.body) {
    self_name_ = &fname;
    self_type_ = self;
    Node b = infer(form.body);
    self_name_ = nullptr;
    size_t m = u_.mark();
    if (!u_.unify(b.t, result_t)) {
      u_.rollback(m);
      error(form.body->span, fmt::format("The body of function {} does not have its result type.", fname),
            {"  Body type: " + show(b.t), "  Result type: " + show(result_t)});
    }
    body = b.e;
  }
  scope_.clear();
  if (failed()) return std::nullopt;

  TypeOut out(u_, tc_, true);
  out.number(self);
  const lang::Type* fn_type = out.get(self);
  lang::TypeScheme scheme{out.classes(), fn_type};
  finalize(out);

  CheckedForm cf;
  cf.kind = ast::TopKind::Function;
  uint32_t id = commit_global(fname, Global::Kind::Function, scheme, false, cf);
  Global* g = prog_.globals[id].get();
  if (!body && g->fn.body && g->fn.global == id && same_scheme(tc_, g->scheme, scheme)) {
    // A declaration of a function that already has a body changes nothing.
  } else {
    g->scheme = scheme;
    g->library = env_.library_mode;
    g->fn.name = fname;
    g->fn.global = id;
    g->fn.scheme = scheme;
    g->fn.param = param;
    g->fn.body = body;
    g->fn.num_slots = slots_;
    g->fn.doc = form.doc;
    g->fn.span = form.span;
  }
  std::vector<const lang::Type*> identity;
  for (uint32_t i = 0; i < scheme.vars.size(); ++i) identity.push_back(tc_.var(i, scheme.vars[i]));
  for (core::Expr* e : self_refs_) {
    e->id = id;
    e->type_args = identity;
  }
  cf.global = id;
  cf.echo_name = fname;
  cf.type = scheme.type;
  cf.type_vars = scheme.vars;
  return cf;
}

// ---- datatype NAME(T1, ..., Tn) [:: CONTEXT] ----

std::optional<CheckedForm> FormChecker::datatype(const ast::TopLevel& form) {
  const std::string& dname = form.name;
  if (is_special_name(dname)) {
    error(form.name_span, fmt::format("The symbol {} is a special symbol, it cannot be used as a variable.", dname));
    return std::nullopt;
  }
  std::vector<CtxVar> ctx;
  context_vars(form.context, ctx);
  // The datatype is not in scope in its own fields, so a recursive one reports
  // "No type definition for NAME." (language.md §3.4).
  IType* fields = type_expr(form.signature, ctx);
  if (failed()) return std::nullopt;

  TypeOut out(u_, tc_, false);
  for (const CtxVar& v : ctx) out.number_var(u_.find(v.type));
  std::vector<lang::TypeClass> classes = out.classes();
  const lang::Type* field_type = out.get(fields);
  // Re-declaring an identical datatype (reloading a file) keeps the old one, so values and
  // functions made with it stay compatible.
  const lang::DataDef* def = nullptr;
  auto old = env_.datatypes.find(dname);
  if (old != env_.datatypes.end() && old->second->params == classes && old->second->fields == field_type) {
    def = old->second;
  } else {
    lang::DataDef* fresh = tc_.new_datadef(dname);
    fresh->params = classes;
    fresh->fields = field_type;
    def = fresh;
  }
  std::vector<const lang::Type*> params;
  for (uint32_t i = 0; i < def->params.size(); ++i) params.push_back(tc_.var(i, def->params[i]));
  lang::TypeScheme scheme{def->params, tc_.fn(def->fields, tc_.data(def, params))};

  CheckedForm cf;
  cf.kind = ast::TopKind::Datatype;
  uint32_t id = commit_global(dname, Global::Kind::Constructor, scheme, false, cf);
  prog_.globals[id]->data = def;
  env_.datatypes[dname] = def;
  cf.global = id;
  cf.echo_name = dname;
  cf.type = scheme.type;
  cf.type_vars = scheme.vars;
  return cf;
}

// ---- PATTERN = EXP ----

std::optional<CheckedForm> FormChecker::assign(const ast::TopLevel& form) {
  Node value = infer(form.body);
  std::set<std::string> seen;
  std::vector<Local> vars;
  core::Pattern* pat = bind(form.pattern, value.t, "a LET construct", form.body, seen, vars);
  Node echo = pattern_value(pat);
  core::Expr* let = mk(Kind::Let, echo.t, form.span);
  let->pattern = pat;
  let->args = {value.e, echo.e};
  if (failed()) return std::nullopt;

  TypeOut out(u_, tc_, true);
  out.number(echo.t);
  const lang::Type* type = out.get(echo.t);
  std::vector<lang::TypeClass> classes = out.classes();
  finalize(out);

  CheckedForm cf;
  cf.kind = ast::TopKind::Assign;
  cf.top = core::TopExpr{let, slots_};
  cf.type = type;
  cf.type_vars = classes;
  cf.echo_name = form.pattern->kind == ast::PatternKind::Var ? form.pattern->name : pattern_to_string(form.pattern);
  for (size_t i = 0; i < vars.size(); ++i) {
    // Each variable's scheme is its own type with the variables renumbered from 0.
    lang::TypeScheme s = canonical_scheme(tc_, lang::TypeScheme{classes, out.get(vars[i].type)});
    uint32_t id = commit_global(vars[i].name, Global::Kind::Variable, s, vars[i].name == "it", cf);
    prog_.globals[id]->scheme = s;
    cf.assign_slots.emplace_back(vars[i].slot, id);
    if (i == 0) cf.global = id;
  }
  return cf;
}

// ---- EXP (binds `it`) ----

std::optional<CheckedForm> FormChecker::expression(const ast::TopLevel& form) {
  Node value = infer(form.body);
  if (failed()) return std::nullopt;
  TypeOut out(u_, tc_, true);
  out.number(value.t);
  const lang::Type* type = out.get(value.t);
  std::vector<lang::TypeClass> classes = out.classes();
  finalize(out);

  CheckedForm cf;
  cf.kind = ast::TopKind::Expr;
  cf.top = core::TopExpr{value.e, slots_};
  cf.type = type;
  cf.type_vars = classes;
  cf.echo_name = "it";
  cf.global = commit_global("it", Global::Kind::Variable, lang::TypeScheme{classes, type}, true, cf);
  return cf;
}

// ---- load EXP, and the other commands ----

std::optional<CheckedForm> FormChecker::command(const ast::TopLevel& form) {
  CheckedForm cf;
  cf.kind = ast::TopKind::Command;
  if (form.name != "load" || !form.command_exp) return cf;
  Node file = infer(form.command_exp);
  size_t m = u_.mark();
  if (!u_.unify(file.t, u_.seq(u_.base(TypeKind::Char)))) {
    u_.rollback(m);
    error(form.command_exp->span, "Bad type for load, expecting a character string.",
          {"  Argument type: " + show(file.t)});
  }
  if (failed()) return std::nullopt;
  TypeOut out(u_, tc_, true);
  out.number(file.t);
  cf.type = out.get(file.t);
  finalize(out);
  cf.top = core::TopExpr{file.e, slots_};
  return cf;
}

}  // namespace ndp::frontend
