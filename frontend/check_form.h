// The checker's internals: the session's global environment, and the checker of one form
// (name resolution, inference and desugaring into Core IR).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "frontend/check_types.h"
#include "frontend/frontend.h"
#include "lang/ast.h"
#include "lang/core.h"
#include "lang/diagnostics.h"

namespace ndp::frontend {

/// The global name environment of a session. Ordered maps keep `names()` and every walk over
/// the environment deterministic.
struct Env {
  explicit Env(lang::core::Program& p) : prog(p) {}
  lang::core::Program& prog;
  bool library_mode = false;
  std::map<std::string, uint32_t, std::less<>> names;                       // name -> global id
  std::map<std::string, const lang::DataDef*, std::less<>> datatypes;       // name -> datatype
  std::vector<uint32_t> prim_globals;                                       // PrimId -> global id
  std::map<std::string, lang::core::PrimId, std::less<>> prims_by_name;     // "+", "rem", ...

  lang::core::Global* lookup(std::string_view name) const;
  uint32_t prim_global(lang::core::PrimId id) const { return prim_globals[static_cast<size_t>(id)]; }
};

/// Context variables of a signature or datatype, in context order.
struct CtxVar {
  std::string name;
  IType* type;
};

/// Checks one top-level form against `env`. The environment changes only in `commit_*`, after
/// the whole form checked without error.
class FormChecker {
 public:
  FormChecker(Env& env, lang::DiagnosticEngine& diags);
  std::optional<CheckedForm> check(const lang::ast::TopLevel& form);

  /// Converts a type expression under a context (used for primitive signatures too).
  IType* type_expr(const lang::ast::TypeExpr* t, const std::vector<CtxVar>& ctx);
  bool context_vars(const std::vector<lang::ast::ContextBind>& binds, std::vector<CtxVar>& out);
  Unifier& unifier() { return u_; }
  bool failed() const { return diags_.error_count() > errors_at_start_; }

 private:
  struct Node {
    lang::core::Expr* e = nullptr;
    IType* t = nullptr;
  };
  struct Local {
    std::string name;
    uint32_t slot;
    IType* type;
  };

  // ---- forms (check_form.cpp) ----
  std::optional<CheckedForm> function(const lang::ast::TopLevel& form);
  std::optional<CheckedForm> datatype(const lang::ast::TopLevel& form);
  std::optional<CheckedForm> assign(const lang::ast::TopLevel& form);
  std::optional<CheckedForm> expression(const lang::ast::TopLevel& form);
  std::optional<CheckedForm> command(const lang::ast::TopLevel& form);
  /// Binds `name` to a global of `kind` with `scheme`: reuses the current global when it is a
  /// user global of the same kind and type (language.md §4.2), else makes a new one.
  uint32_t commit_global(const std::string& name, lang::core::Global::Kind kind,
                         const lang::TypeScheme& scheme, bool quiet, CheckedForm& cf);
  void finalize(TypeOut& out);

  // ---- expressions (check_expr.cpp) ----
  Node infer(const lang::ast::Expr* e);
  Node name(const std::string& name, lang::Span span);
  Node call(const lang::ast::Expr* whole, const lang::ast::Expr* callee, const lang::ast::Expr* arg);
  Node apply_value(const lang::ast::Expr* whole, const std::string& fname, Node callee, Node arg);
  Node prim_apply(lang::core::PrimId id, std::vector<Node> comps, const lang::ast::Expr* whole,
                  const std::string& fname);
  Node prim_call(lang::core::PrimId id, Node arg, const lang::ast::Expr* whole, const std::string& fname);
  bool check_arg(IType* arg, IType* param, const std::string& fname, const lang::ast::Expr* whole);
  Node apply_to_each(const lang::ast::Expr* e);
  Node let(const lang::ast::Expr* e);
  Node if_(const lang::ast::Expr* e);
  Node lambda(const lang::ast::Expr* e);

  // ---- patterns (check_expr.cpp) ----
  lang::core::Pattern* pattern(const lang::ast::Pattern* p, IType*& type, std::set<std::string>& seen,
                               std::vector<Local>& vars);
  /// Binds a pattern to a value of type `value` (the LET phrase names `construct`).
  lang::core::Pattern* bind(const lang::ast::Pattern* p, IType* value, const char* construct,
                            const lang::ast::Expr* value_exp, std::set<std::string>& seen,
                            std::vector<Local>& vars);
  /// The pattern read as an expression (the missing body of an apply-to-each, an assignment's
  /// echo value).
  Node pattern_value(const lang::core::Pattern* p);

  lang::core::Expr* mk(lang::core::Kind k, IType* t, lang::Span s);
  lang::core::Pattern* mk_pattern(lang::core::PatternKind k, IType* t, lang::Span s);
  void set_type_args(lang::core::Expr* e, std::vector<IType*> args);
  void error(lang::Span span, std::string msg, std::vector<std::string> extra = {});
  std::string show(IType* t) { return itype_to_string(u_, tc_, t); }

  Env& env_;
  lang::core::Program& prog_;
  lang::TypeContext& tc_;
  lang::DiagnosticEngine& diags_;
  size_t errors_at_start_;
  Unifier u_;
  std::vector<Local> scope_;
  uint32_t slots_ = 0;

  // The function being defined: its own name is monomorphic inside its body, and references
  // to it get their global id and type arguments once the definition is committed.
  const std::string* self_name_ = nullptr;
  IType* self_type_ = nullptr;
  std::vector<lang::core::Expr*> self_refs_;

  std::vector<std::pair<lang::core::Expr*, IType*>> expr_types_;
  std::vector<std::pair<lang::core::Expr*, std::vector<IType*>>> expr_targs_;
  std::vector<std::pair<lang::core::Pattern*, IType*>> pattern_types_;
  // Lookup only (never iterated): the inference type of a pattern made in this form.
  std::unordered_map<const lang::core::Pattern*, IType*> pattern_itype_;
};

lang::TypeClass class_from_name(const std::string& s, bool* ok);

}  // namespace ndp::frontend
