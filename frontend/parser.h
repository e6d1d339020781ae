// The recursive-descent parser over the lexer's tokens (private to frontend/).
//
// Note [Parser error recovery]
// Every parse function returns nullptr on a syntax error. Only the first error of a form is
// reported (later ones would be consequences of it); the form is then dropped and parsing
// resumes after the `$`/`;` that ends it (lexer.h: form_end), so a file reports one error per
// bad form. Tokens the lexer already rejected (Tok::Error) fail the form without a second
// message. All diagnostics reach the engine at the end, in source order. Nesting is bounded
// (kMaxDepth) so hostile input cannot overflow the stack, and long flat chains (tuples, `->`,
// juxtaposition, binary operators) are parsed by loops.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "frontend/lexer.h"
#include "lang/ast.h"
#include "lang/diagnostics.h"
#include "lang/source.h"

namespace ndp::frontend {

/// NESL's messages name symbols in upper case ("The symbol F is a special symbol, ...").
std::string upper_case(std::string_view s);
inline constexpr const char* kPairReserved = "PAIR is a reserved word.  Use , instead.";

/// One parse of one buffer. The member functions are spread over parser.cpp (tokens, errors,
/// top-level forms), parse_expr.cpp and parse_type.cpp (patterns and types).
class Parser {
 public:
  Parser(lang::ast::AstContext& ctx, const lang::SourceManager& sm, uint32_t file, lang::DiagnosticEngine& diags);

  /// Every well-formed top-level form of the buffer; bad ones are reported and skipped.
  std::vector<const lang::ast::TopLevel*> program();
  /// The whole buffer as one `funtype [:: context]`; nullptr after an error.
  const lang::ast::TopLevel* signature();

  /// Counted in exp(), primary(), prefix(), pattern() and type entries, so about 500 levels
  /// of brackets; far beyond real programs, and a few hundred KiB of stack at most.
  static constexpr int kMaxDepth = 1000;

 private:
  using Expr = lang::ast::Expr;
  using Pattern = lang::ast::Pattern;
  using TypeExpr = lang::ast::TypeExpr;
  using TopLevel = lang::ast::TopLevel;
  using Span = lang::Span;

  lang::ast::AstContext& ctx_;
  const lang::SourceManager& sm_;
  uint32_t file_;
  lang::DiagnosticEngine& diags_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  uint32_t prev_end_ = 0;  // end offset of the last consumed token
  bool form_failed_ = false;
  std::vector<lang::Diagnostic> found_;  // lexer and parser errors, reported at the end
  size_t lex_errors_ = 0;
  int depth_ = 0;

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) { ++p.depth_; }
    ~DepthGuard() { --p.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
  };
  bool too_deep();

  // ---- tokens ----
  const Token& peek(size_t k = 0) const;
  bool at(Tok kind) const { return peek().kind == kind; }
  const Token& advance();
  bool accept(Tok kind);
  Span span_of(const Token& t) const;
  Span from(Span start) const;             // `start` up to the end of the last consumed token
  std::string show(const Token& t) const;  // the token as the user wrote it, for messages

  // ---- errors ----
  /// Reports `message` unless this form already failed; always returns nullptr-friendly false.
  bool fail(Span span, std::string message);
  /// Fails at the current token: silently when the lexer already reported it.
  bool fail_here(std::string message);
  bool expect(Tok kind, const std::string& message);
  bool is_terminator() const { return at(Tok::Dollar) || at(Tok::Semi); }

  void lex_buffer();
  void flush_diagnostics();

  // ---- top level ----
  const TopLevel* form();
  const TopLevel* function_def();
  const TopLevel* datatype_def();
  const TopLevel* command(const std::string& word);
  const TopLevel* assignment();
  const TopLevel* expression_form();
  bool looks_like_assignment() const;
  bool name_binder(const Token& t, std::string& name);
  void resync(size_t form_start);

  // ---- expressions ----
  const Expr* exp();
  const Expr* binary(int min_level);
  const Expr* read_chain();  // prefexp { -> prefexp }, right-nested
  const Expr* prefix();
  const Expr* postfix();
  const Expr* primary();
  const Expr* primary_error();
  const Expr* sequence(const Token& open);
  const Expr* apply_to_each(const Token& open);
  const Expr* if_exp(const Token& kw);
  const Expr* let_exp(const Token& kw);
  const Expr* time_exp(const Token& kw);
  /// Whether the tokens from here are a lambda's parameter followed by `=>`: a name, or a
  /// parenthesised group (found by matching parentheses, without parsing).
  bool lambda_follows() const;
  const Expr* lambda();
  bool at_level(Expr* e);
  bool body_follows() const;  // a depth-0 `:` before the closing `}`
  bool right_argument(const Token& op);
  Expr* node(lang::ast::ExprKind kind, Span span);
  Expr* binary_node(const Token& op, const Expr* l, const Expr* r, Span span);

  // ---- patterns ----
  const Pattern* pattern();
  const Pattern* atomic_pattern();

  // ---- types ----
  const TypeExpr* funtype(std::vector<lang::ast::ContextBind>& context);
  const TypeExpr* type_seq();    // arrow-terms separated by `,`, right-nested pairs
  const TypeExpr* type_arrow();  // typeterm [-> type_arrow]
  const TypeExpr* type_term();
  bool context(std::vector<lang::ast::ContextBind>& out);
  bool context_binding(std::vector<lang::ast::ContextBind>& out);
  TypeExpr* type_node(lang::ast::TypeExprKind kind, Span span);
};

}  // namespace ndp::frontend
