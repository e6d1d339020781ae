// The front end's entry points: parse source text into top-level forms, and check + desugar
// each form into Core IR against a growing session environment.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lang/ast.h"
#include "lang/core.h"
#include "lang/diagnostics.h"
#include "lang/source.h"

namespace ndp::frontend {

/// Parses every top-level form of buffer `file`. Syntax errors are reported to `diags` with
/// spans; the parser resynchronises at the next `$`/`;` so one file reports all its errors.
/// A final form without a terminator is an error ("expected $ or ; to end the form").
std::vector<const lang::ast::TopLevel*> parse_program(lang::ast::AstContext& ctx,
                                                      const lang::SourceManager& sm, uint32_t file,
                                                      lang::DiagnosticEngine& diags);

/// For the REPL: true when `text` holds at least one complete top-level form, i.e. a `$` or
/// `;` outside comments, strings and character literals that is not a `let`/generator
/// separator (the lexer decides; an unterminated comment or string is incomplete).
bool input_is_complete(std::string_view text);

/// Parses a type signature in NESL syntax ("[a] -> [a] :: (a in number)"); used for primitive
/// signatures (lang/prims.def) and tests.
const lang::ast::TopLevel* parse_signature(lang::ast::AstContext& ctx, const lang::SourceManager& sm,
                                           uint32_t file, lang::DiagnosticEngine& diags);

/// What one checked top-level form asks the driver to do.
struct CheckedForm {
  lang::ast::TopKind kind;
  /// Expr / Assign / Command(load): the code to run.
  lang::core::TopExpr top;
  const lang::Type* type = nullptr;             // type of the value (Expr/Assign)
  std::vector<lang::TypeClass> type_vars;        // classes of Var(i) in `type` (printing)
  /// Assign: after running, store frame slot `first` into global `second`.
  std::vector<std::pair<uint32_t, uint32_t>> assign_slots;
  std::string echo_name;                         // "it", "x", "(a, b)", function name
  uint32_t global = 0;                           // Function / Datatype constructor / it / var
  /// Lines to print before the answer, e.g. "Redefining BASE with a new type.  Old calls
  /// will not be modified."
  std::vector<std::string> notes;
  /// The name bindings this form replaced (nullopt: the name was unbound). If the form then
  /// fails at run time, `Checker::restore` puts them back, so `it` and the variables keep
  /// their previous values (language.md §4.9).
  std::vector<std::pair<std::string, std::optional<uint32_t>>> replaced;
};

/// Name resolution, type inference (Hindley–Milner with NESL's classes) and desugaring into
/// Core IR. Holds the global name environment of a session; each successful form extends it.
class Checker {
 public:
  Checker(lang::core::Program& prog, lang::DiagnosticEngine& diags);
  ~Checker();

  /// While true, definitions are marked `library` (stdlib): user forms may later shadow them
  /// but never overwrite them, so library code keeps the library version.
  void set_library_mode(bool on);

  /// Checks one form. On error, reports to diags, leaves the environment unchanged, returns
  /// nullopt. Command forms other than `load` are returned with kind Command untouched.
  std::optional<CheckedForm> check(const lang::ast::TopLevel& form);

  /// Undoes the name bindings of a form whose run failed (see CheckedForm::replaced).
  void restore(const CheckedForm& form);

  /// Looks a global up by its current name binding (for the driver: `it`, `describe`).
  std::optional<uint32_t> lookup(std::string_view name) const;
  /// Names of all current global bindings (for `apropos`, completion).
  std::vector<std::string> names() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ndp::frontend
