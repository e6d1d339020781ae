// The parser's expressions: the precedence levels of language.md §2.5 (precedence climbing
// for the left-associative binary levels, loops for `,` and `->`), primaries, apply-to-each
// with `at LEVEL` (extensions.md §2), `if`, `let` and `time`.
#include <fmt/format.h>

#include <utility>

#include "frontend/parser.h"

namespace ndp::frontend {

using lang::Span;
using lang::ast::AtLevel;
using lang::ast::Expr;
using lang::ast::ExprKind;
using lang::ast::Generator;
using lang::ast::Pattern;
using lang::ast::PatternKind;
using lang::ast::TypeExpr;

namespace {

/// Binding level of a binary operator token (§2.5: 3 loosest .. 9); 0 for anything else.
/// `->` (level 10) is handled apart because it groups to the right.
int binary_level(Tok kind) {
  switch (kind) {
    case Tok::Or:
    case Tok::Nor:
    case Tok::Xor: return 3;
    case Tok::And:
    case Tok::Nand: return 4;
    case Tok::EqEq:
    case Tok::NotEq:
    case Tok::Less:
    case Tok::Greater:
    case Tok::LessEq:
    case Tok::GreaterEq: return 5;
    case Tok::Plus:
    case Tok::Minus:
    case Tok::PlusPlus: return 6;
    case Tok::Star:
    case Tok::Slash:
    case Tok::BarBar: return 7;
    case Tok::Caret: return 8;
    case Tok::LArrow: return 9;
    default: return 0;
  }
}

/// Tokens that start the argument of a juxtaposed call `f x` (a primary other than `(`/`[`,
/// which make a call or an index).
bool starts_juxtaposed_argument(Tok kind) {
  switch (kind) {
    case Tok::Int:
    case Tok::Float:
    case Tok::Char:
    case Tok::String:
    case Tok::Ident:
    case Tok::True:
    case Tok::False:
    case Tok::Time:
    case Tok::Pair:
    case Tok::LBrace:
    case Tok::If:
    case Tok::Let: return true;
    default: return false;
  }
}

}  // namespace

Expr* Parser::node(ExprKind kind, Span span) {
  Expr* e = ctx_.make<Expr>();
  e->kind = kind;
  e->span = span;
  return e;
}

Expr* Parser::binary_node(const Token& op, const Expr* l, const Expr* r, Span span) {
  Expr* e = node(ExprKind::Binary, span);
  e->text = token_spelling(op.kind);
  e->kids = {l, r};
  return e;
}

bool Parser::right_argument(const Token& op) {
  if (!is_terminator() && !at(Tok::End)) return true;
  return fail(span_of(op), fmt::format("{} is missing its right argument.", show(op)));
}

const Expr* Parser::exp() {
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  // `,` groups to the right: collect the elements, then nest from the end.
  std::vector<const Expr*> items;
  std::vector<Span> starts;  // a parenthesised element starts before its node's span
  starts.push_back(span_of(peek()));
  const Expr* first = binary(3);
  if (!first) return nullptr;
  items.push_back(first);
  while (at(Tok::Comma)) {
    const Token& comma = advance();
    if (!right_argument(comma)) return nullptr;
    starts.push_back(span_of(peek()));
    const Expr* e = binary(3);
    if (!e) return nullptr;
    items.push_back(e);
  }
  const Expr* result = items.back();
  for (size_t i = items.size() - 1; i-- > 0;) {
    Expr* t = node(ExprKind::Tuple, from(starts[i]));
    t->kids = {items[i], result};
    result = t;
  }
  return result;
}

const Expr* Parser::binary(int min_level) {
  // Precedence climbing over the left-associative levels 3..9: recursion depth is bounded by
  // the number of levels, not by the length of an operator chain.
  Span start = span_of(peek());
  const Expr* lhs = read_chain();
  if (!lhs) return nullptr;
  while (true) {
    int level = binary_level(peek().kind);
    if (level == 0 || level < min_level) return lhs;
    const Token& op = advance();
    if (!right_argument(op)) return nullptr;
    const Expr* rhs = binary(level + 1);
    if (!rhs) return nullptr;
    lhs = binary_node(op, lhs, rhs, from(start));
  }
}

const Expr* Parser::read_chain() {
  std::vector<const Expr*> items;
  std::vector<const Token*> ops;
  std::vector<Span> starts;
  starts.push_back(span_of(peek()));
  const Expr* first = prefix();
  if (!first) return nullptr;
  items.push_back(first);
  while (at(Tok::Arrow)) {
    const Token& op = advance();
    if (!right_argument(op)) return nullptr;
    starts.push_back(span_of(peek()));
    const Expr* e = prefix();
    if (!e) return nullptr;
    ops.push_back(&op);
    items.push_back(e);
  }
  const Expr* result = items.back();
  for (size_t i = items.size() - 1; i-- > 0;) result = binary_node(*ops[i], items[i], result, from(starts[i]));
  return result;
}

const Expr* Parser::prefix() {
  if (!at(Tok::Hash) && !at(Tok::At) && !at(Tok::Minus)) return postfix();
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  const Token& op = advance();
  if (!right_argument(op)) return nullptr;
  const Expr* operand = prefix();
  if (!operand) return nullptr;
  Expr* e = node(ExprKind::Unary, from(span_of(op)));
  e->text = token_spelling(op.kind);
  e->kids = {operand};
  return e;
}

const Expr* Parser::postfix() {
  Span start = span_of(peek());
  const Expr* e = primary();
  if (!e) return nullptr;
  while (true) {
    if (at(Tok::LBracket)) {
      advance();
      const Expr* index = exp();
      if (!index) return nullptr;
      if (!expect(Tok::RBracket, fmt::format("Expected a ] instead of {} to terminate an index.", show(peek()))))
        return nullptr;
      Expr* n = node(ExprKind::Index, from(start));
      n->kids = {e, index};
      e = n;
    } else if (at(Tok::LParen)) {
      advance();
      const Expr* arg = exp();
      if (!arg) return nullptr;
      if (!expect(Tok::RParen,
                  fmt::format("Expected a ) instead of {} to close the argument of a call.", show(peek()))))
        return nullptr;
      Expr* n = node(ExprKind::Call, from(start));
      n->kids = {e, arg};
      e = n;
    } else if (starts_juxtaposed_argument(peek().kind)) {
      const Expr* arg = primary();
      if (!arg) return nullptr;
      Expr* n = node(ExprKind::Call, from(start));
      n->kids = {e, arg};
      n->juxtaposed = true;
      e = n;
    } else {
      return e;
    }
  }
}

const Expr* Parser::primary() {
  DepthGuard guard(*this);
  if (too_deep()) return nullptr;
  const Token& t = peek();
  Span s = span_of(t);
  if (lambda_follows()) return lambda();
  switch (t.kind) {
    case Tok::Int: {
      advance();
      Expr* e = node(ExprKind::Int, s);
      e->int_value = t.int_value;
      e->sized = t.sized;
      return e;
    }
    case Tok::Float: {
      advance();
      Expr* e = node(ExprKind::Float, s);
      e->float_value = t.float_value;
      e->sized = t.sized;
      return e;
    }
    case Tok::Char: {
      advance();
      Expr* e = node(ExprKind::Char, s);
      e->char_value = t.char_value;
      return e;
    }
    case Tok::String: {
      advance();
      Expr* e = node(ExprKind::String, s);
      e->text = t.text;
      return e;
    }
    case Tok::True:
    case Tok::False: {
      advance();
      Expr* e = node(ExprKind::Bool, s);
      e->bool_value = t.kind == Tok::True;
      return e;
    }
    case Tok::Ident: {
      advance();
      Expr* e = node(ExprKind::Name, s);
      e->text = t.text;
      return e;
    }
    case Tok::LParen: {
      advance();
      const Expr* e = exp();
      if (!e) return nullptr;
      if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {}.", show(peek())))) return nullptr;
      return e;
    }
    case Tok::LBracket: return sequence(advance());
    case Tok::LBrace: return apply_to_each(advance());
    case Tok::If: return if_exp(advance());
    case Tok::Let: return let_exp(advance());
    case Tok::Time: return time_exp(advance());
    default: return primary_error();
  }
}

const Expr* Parser::primary_error() {
  const Token& t = peek();
  if (t.kind == Tok::Pair) {
    fail_here(kPairReserved);
  } else if (binary_level(t.kind) != 0 || t.kind == Tok::Arrow || t.kind == Tok::Comma) {
    fail_here(fmt::format("{} is missing its left argument.", show(t)));
  } else if (t.kind == Tok::End) {
    fail_here("Unexpected end of input");
  } else {
    fail_here(fmt::format("Unexpected {}", show(t)));
  }
  return nullptr;
}

const Expr* Parser::sequence(const Token& open) {
  Span start = span_of(open);
  if (accept(Tok::RBracket)) {
    if (!at(Tok::Ident) && !at(Tok::LBracket) && !at(Tok::LParen)) {
      fail_here(
          fmt::format("Expected a type after [] instead of {} (an empty sequence needs its "
                      "element type, as in [] int)",
                      show(peek())));
      return nullptr;
    }
    const TypeExpr* type = type_term();
    if (!type) return nullptr;
    Expr* e = node(ExprKind::EmptySeq, from(start));
    e->type = type;
    return e;
  }
  const Expr* first = binary(3);
  if (!first) return nullptr;
  if (accept(Tok::Colon)) {
    Expr* e = node(ExprKind::Range, start);
    const Expr* end = exp();
    if (!end) return nullptr;
    e->kids = {first, end};
    if (accept(Tok::Colon)) {
      const Expr* stride = exp();
      if (!stride) return nullptr;
      e->kids.push_back(stride);
    }
    if (!expect(Tok::RBracket, fmt::format("Expected a ] instead of {} to terminate a range.", show(peek()))))
      return nullptr;
    e->span = from(start);
    return e;
  }
  Expr* e = node(ExprKind::SeqLit, start);
  e->kids.push_back(first);
  while (accept(Tok::Comma)) {
    const Expr* elem = binary(3);
    if (!elem) return nullptr;
    e->kids.push_back(elem);
  }
  if (!expect(Tok::RBracket, fmt::format("Expected a ] instead of {} to terminate a sequence.", show(peek()))))
    return nullptr;
  e->span = from(start);
  return e;
}

bool Parser::body_follows() const {
  int depth = 0;
  for (size_t i = pos_; i < toks_.size(); ++i) {
    switch (toks_[i].kind) {
      case Tok::LParen:
      case Tok::LBracket:
      case Tok::LBrace: ++depth; break;
      case Tok::RParen:
      case Tok::RBracket:
        if (depth > 0) --depth;
        break;
      case Tok::RBrace:
        if (depth == 0) return false;
        --depth;
        break;
      case Tok::Colon:
        if (depth == 0) return true;
        break;
      case Tok::Dollar:
      case Tok::End: return false;
      default: break;
    }
  }
  return false;
}

const Expr* Parser::apply_to_each(const Token& open) {
  Span start = span_of(open);
  Expr* e = node(ExprKind::ApplyToEach, start);
  if (body_follows()) {
    e->body = exp();
    if (!e->body) return nullptr;
    if (!expect(Tok::Colon,
                fmt::format("Expected a : instead of {} after the body of an apply-to-each.", show(peek()))))
      return nullptr;
  }
  do {
    Generator g;
    Span gstart = span_of(peek());
    Tok next = peek(1).kind;
    bool name = at(Tok::Ident) || at(Tok::True) || at(Tok::False) || at(Tok::Time);
    if (name && (next == Tok::Semi || next == Tok::Bar || next == Tok::RBrace)) {
      // A bare name `x` means `x in x`.
      const Token& name = advance();
      auto* p = ctx_.make<Pattern>();
      p->kind = PatternKind::Var;
      p->span = span_of(name);
      p->name = name.text;
      g.pattern = p;
    } else {
      g.pattern = pattern();
      if (!g.pattern) return nullptr;
      if (!expect(Tok::In, fmt::format("Expected IN instead of {} in a generator of an apply-to-each.", show(peek()))))
        return nullptr;
      g.exp = exp();
      if (!g.exp) return nullptr;
    }
    g.span = from(gstart);
    e->gens.push_back(g);
  } while (accept(Tok::Semi));
  if (accept(Tok::Bar)) {
    e->filter = exp();
    if (!e->filter) return nullptr;
  }
  if (!expect(Tok::RBrace, fmt::format("Expected a }} instead of {} to terminate an apply-to-each.", show(peek()))))
    return nullptr;
  if (!at_level(e)) return nullptr;
  e->span = from(start);
  return e;
}

bool Parser::at_level(Expr* e) {
  if (!at(Tok::Ident) || peek().text != "at") return true;
  advance();
  const Token& t = peek();
  if (t.kind == Tok::Ident) {
    static constexpr std::pair<std::string_view, AtLevel> kLevels[] = {
        {"grid", AtLevel::Grid},     {"block", AtLevel::Block}, {"warp", AtLevel::Warp},
        {"thread", AtLevel::Thread}, {"seq", AtLevel::Seq},     {"auto", AtLevel::Auto}};
    for (const auto& [word, level] : kLevels) {
      if (t.text == word) {
        advance();
        e->level = level;
        return true;
      }
    }
    if (t.text == "subwarp") {
      advance();
      if (!expect(Tok::LParen, fmt::format("Expected a ( instead of {} after SUBWARP.", show(peek())))) return false;
      const Token& n = peek();
      if (n.kind != Tok::Int || n.sized != lang::ast::Sized::Default ||
          (n.int_value != 2 && n.int_value != 4 && n.int_value != 8 && n.int_value != 16))
        return fail_here(fmt::format("subwarp width must be 2, 4, 8 or 16, not {}", show(n)));
      advance();
      e->level = AtLevel::Subwarp;
      e->subwarp_width = static_cast<int>(n.int_value);
      return expect(Tok::RParen, fmt::format("Expected a ) instead of {} after the subwarp width.", show(peek())));
    }
  }
  return fail_here(fmt::format(
      "Expected a level (grid, block, warp, subwarp(N), thread, seq or auto) after AT instead of {}.", show(t)));
}

const Expr* Parser::if_exp(const Token& kw) {
  Span start = span_of(kw);
  const Expr* cond = exp();
  if (!cond) return nullptr;
  if (!expect(Tok::Then, fmt::format("Expected a THEN instead of {} in an IF construct.", show(peek()))))
    return nullptr;
  const Expr* yes = exp();
  if (!yes) return nullptr;
  if (!expect(Tok::Else, fmt::format("Expected an ELSE instead of {} in an IF construct.", show(peek()))))
    return nullptr;
  const Expr* no = exp();  // reaches as far right as possible (§2.3)
  if (!no) return nullptr;
  Expr* e = node(ExprKind::If, from(start));
  e->kids = {cond, yes, no};
  return e;
}

const Expr* Parser::let_exp(const Token& kw) {
  Span start = span_of(kw);
  Expr* e = node(ExprKind::Let, start);
  while (true) {
    lang::ast::Binding b;
    Span bstart = span_of(peek());
    b.pattern = pattern();
    if (!b.pattern) return nullptr;
    if (!expect(Tok::Equal, fmt::format("Expected an = instead of {} in a binding of a LET construct.", show(peek()))))
      return nullptr;
    b.exp = exp();
    if (!b.exp) return nullptr;
    b.span = from(bstart);
    e->binds.push_back(b);
    if (accept(Tok::Semi)) {
      if (at(Tok::In)) break;  // optional trailing `;`
      continue;
    }
    if (at(Tok::In)) break;
    fail_here(fmt::format("Expected a ; or IN instead of {} after a binding of a LET construct.", show(peek())));
    return nullptr;
  }
  advance();  // in
  const Expr* body = exp();
  if (!body) return nullptr;
  e->kids = {body};
  e->span = from(start);
  return e;
}

bool Parser::lambda_follows() const {
  if (at(Tok::Ident)) return peek(1).kind == Tok::FatArrow;
  if (!at(Tok::LParen)) return false;
  int depth = 0;
  for (size_t k = 0;; ++k) {
    Tok kind = peek(k).kind;
    if (kind == Tok::End) return false;
    if (kind == Tok::LParen) ++depth;
    if (kind == Tok::RParen && --depth == 0) return peek(k + 1).kind == Tok::FatArrow;
  }
}

const Expr* Parser::lambda() {
  Span start = span_of(peek());
  const lang::ast::Pattern* param = atomic_pattern();
  if (!param) return nullptr;
  const Token& arrow = advance();  // =>
  if (!right_argument(arrow)) return nullptr;
  // The body reaches as far right as possible but stops at a comma, so a lambda is one argument
  // among others (`twice(x => x * 3, 2)`, `[x => x, sq]`); a tuple body is parenthesised.
  const Expr* body = binary(3);
  if (!body) return nullptr;
  Expr* e = node(ExprKind::Lambda, from(start));
  e->param = param;
  e->kids = {body};
  return e;
}

const Expr* Parser::time_exp(const Token& kw) {
  Span start = span_of(kw);
  if (!expect(Tok::LParen, fmt::format("Expected a ( instead of {} after TIME.", show(peek())))) return nullptr;
  const Expr* inner = exp();
  if (!inner) return nullptr;
  if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {} to close TIME.", show(peek())))) return nullptr;
  Expr* e = node(ExprKind::Time, from(start));
  e->kids = {inner};
  return e;
}

}  // namespace ndp::frontend
