// The parser's patterns (language.md §2.4) and type expressions with their contexts
// (§3.4 datatype fields, §3.7 signatures, `[] T`).
#include <fmt/format.h>

#include "frontend/parser.h"

namespace ndp::frontend {

using lang::Span;
using lang::ast::ContextBind;
using lang::ast::Pattern;
using lang::ast::PatternKind;
using lang::ast::TypeExpr;
using lang::ast::TypeExprKind;

// ---------------------------------------------------------------- patterns

const Pattern* Parser::pattern() {
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  std::vector<const Pattern*> items;
  std::vector<Span> starts;
  starts.push_back(span_of(peek()));
  const Pattern* first = atomic_pattern();
  if (!first) return nullptr;
  items.push_back(first);
  while (accept(Tok::Comma)) {
    starts.push_back(span_of(peek()));
    const Pattern* p = atomic_pattern();
    if (!p) return nullptr;
    items.push_back(p);
  }
  const Pattern* result = items.back();
  for (size_t i = items.size() - 1; i-- > 0;) {
    auto* t = ctx_.make<Pattern>();
    t->kind = PatternKind::Tuple;
    t->span = from(starts[i]);
    t->left = items[i];
    t->right = result;
    result = t;
  }
  return result;
}

const Pattern* Parser::atomic_pattern() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Ident: {
      Span start = span_of(advance());
      auto* p = ctx_.make<Pattern>();
      p->name = t.text;
      if (!accept(Tok::LParen)) {
        p->kind = PatternKind::Var;
        p->span = start;
        return p;
      }
      p->kind = PatternKind::Con;
      p->left = pattern();
      if (!p->left) return nullptr;
      if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {} in a pattern.", show(peek())))) return nullptr;
      p->span = from(start);
      return p;
    }
    case Tok::LParen: {
      advance();
      if (at(Tok::RParen)) {
        fail_here("Unexpected ) in a pattern: () is not a pattern (a function takes one argument)");
        return nullptr;
      }
      const Pattern* inner = pattern();
      if (!inner) return nullptr;
      if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {} in a pattern.", show(peek())))) return nullptr;
      return inner;
    }
    case Tok::True:
    case Tok::False:
    case Tok::Time: {
      // Binding these is an error that the checker reports (with the pattern's span), so a
      // pattern keeps them as ordinary variable names.
      auto* p = ctx_.make<Pattern>();
      p->kind = PatternKind::Var;
      p->span = span_of(advance());
      p->name = t.text;
      return p;
    }
    case Tok::Pair: fail_here(kPairReserved); return nullptr;
    case Tok::LBracket: fail_here("square brackets cannot be used for pattern matching."); return nullptr;
    case Tok::Int:
    case Tok::Float:
    case Tok::Char:
    case Tok::String:
      fail_here(
          fmt::format("{} cannot be used in a pattern: patterns are names, tuples and datatype "
                      "constructors",
                      show(t)));
      return nullptr;
    default: fail_here(fmt::format("Expected a pattern instead of {}.", show(t))); return nullptr;
  }
}

// ---------------------------------------------------------------- types

TypeExpr* Parser::type_node(TypeExprKind kind, Span span) {
  auto* t = ctx_.make<TypeExpr>();
  t->kind = kind;
  t->span = span;
  return t;
}

const TypeExpr* Parser::funtype(std::vector<ContextBind>& ctx) {
  // funtype = typeterm -> typeexp: the argument is one term, so `int, int -> int` reads as
  // `int, (int -> int)` and is refused as in CMU; the result extends over commas.
  Span start = span_of(peek());
  const TypeExpr* arg = type_term();
  if (!arg) return nullptr;
  if (!at(Tok::Arrow)) {
    if (at(Tok::Comma))
      fail(Span::cover(start, span_of(peek())),
           "Not a function type.  The argument type of a function with several parameters needs "
           "parentheses: (T1, T2) -> T");
    else
      fail_here(fmt::format("Not a function type.  Expected -> instead of {}.", show(peek())));
    return nullptr;
  }
  advance();
  const TypeExpr* result = type_seq();
  if (!result) return nullptr;
  TypeExpr* fn = type_node(TypeExprKind::Fn, from(start));
  fn->args = {arg, result};
  if (accept(Tok::ColonColon) && !context(ctx)) return nullptr;
  return fn;
}

const TypeExpr* Parser::type_seq() {
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  std::vector<const TypeExpr*> items;
  std::vector<Span> starts;
  starts.push_back(span_of(peek()));
  const TypeExpr* first = type_arrow();
  if (!first) return nullptr;
  items.push_back(first);
  while (accept(Tok::Comma)) {
    starts.push_back(span_of(peek()));
    const TypeExpr* t = type_arrow();
    if (!t) return nullptr;
    items.push_back(t);
  }
  const TypeExpr* result = items.back();
  for (size_t i = items.size() - 1; i-- > 0;) {
    TypeExpr* p = type_node(TypeExprKind::Pair, from(starts[i]));
    p->args = {items[i], result};
    result = p;
  }
  return result;
}

const TypeExpr* Parser::type_arrow() {
  // Inside brackets `->` binds tighter than `,`: `(c -> b, c)` is a pair whose first
  // component is a function type, as CMU prints higher-order types.
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  Span start = span_of(peek());
  const TypeExpr* t = type_term();
  if (!t) return nullptr;
  if (!accept(Tok::Arrow)) return t;
  const TypeExpr* r = type_arrow();
  if (!r) return nullptr;
  TypeExpr* fn = type_node(TypeExprKind::Fn, from(start));
  fn->args = {t, r};
  return fn;
}

const TypeExpr* Parser::type_term() {
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  const Token& t = peek();
  Span start = span_of(t);
  if (t.kind == Tok::Ident) {
    advance();
    TypeExpr* n = type_node(TypeExprKind::Name, start);
    n->name = t.text;
    if (accept(Tok::LParen)) {
      // Datatype parameters: each one a term, so `rev(char, int)` has two.
      do {
        const TypeExpr* a = type_arrow();
        if (!a) return nullptr;
        n->args.push_back(a);
      } while (accept(Tok::Comma));
      if (!expect(Tok::RParen,
                  fmt::format("Expected a ) instead of {} after the parameters of type {}.", show(peek()), t.text)))
        return nullptr;
      n->span = from(start);
    }
    return n;
  }
  if (t.kind == Tok::LBracket) {
    advance();
    const TypeExpr* elem = type_seq();
    if (!elem) return nullptr;
    if (!expect(Tok::RBracket, fmt::format("Expected a ] instead of {} in a sequence type.", show(peek()))))
      return nullptr;
    TypeExpr* s = type_node(TypeExprKind::Seq, from(start));
    s->args = {elem};
    return s;
  }
  if (t.kind == Tok::LParen) {
    advance();
    const TypeExpr* inner = type_seq();
    if (!inner) return nullptr;
    if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {} in a type.", show(peek())))) return nullptr;
    return inner;
  }
  fail_here(fmt::format("Expected a type instead of {}.", show(t)));
  return nullptr;
}

bool Parser::context(std::vector<ContextBind>& out) {
  if (accept(Tok::LParen)) {
    do {
      if (!context_binding(out)) return false;
    } while (accept(Tok::Semi));
    return expect(Tok::RParen, fmt::format("Expected a ) instead of {} to close a type context.", show(peek())));
  }
  // Without parentheses a `;` separates bindings only when another `NAME in` follows; else it
  // ends the form.
  while (true) {
    if (!context_binding(out)) return false;
    if (!(at(Tok::Semi) && peek(1).kind == Tok::Ident && peek(2).kind == Tok::In)) return true;
    advance();
  }
}

bool Parser::context_binding(std::vector<ContextBind>& out) {
  ContextBind b;
  Span start = span_of(peek());
  if (!at(Tok::Ident))
    return fail_here(fmt::format("Expected a type variable instead of {} in a type context.", show(peek())));
  b.var = advance().text;
  if (!expect(Tok::In, fmt::format("Expected IN instead of {} in a type context.", show(peek())))) return false;
  if (!at(Tok::Ident))
    return fail_here(
        fmt::format("Expected a type class (number, ordinal, logical or any) instead of {}.", show(peek())));
  b.cls = advance().text;
  b.span = from(start);
  out.push_back(std::move(b));
  return true;
}

}  // namespace ndp::frontend
