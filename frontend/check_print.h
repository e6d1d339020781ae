// Source-like printing of AST expressions and patterns, for type-error messages ("in
// expression 1 < 2 < 3") and for the echo name of a top-level tuple assignment ("(a, b)").
#pragma once

#include <string>

#include "lang/ast.h"

namespace ndp::frontend {

/// NESL syntax with the fewest parentheses that keep the meaning (language.md §2.5).
std::string expr_to_string(const lang::ast::Expr* e);
/// A pattern printed like a value (language.md §5.2): `(a, b, c)`, `((a, b), c)`, `point(x, y)`.
std::string pattern_to_string(const lang::ast::Pattern* p);
std::string type_expr_to_string(const lang::ast::TypeExpr* t);

}  // namespace ndp::frontend
