// The parser's driver: token access, error recovery, top-level forms (language.md §2.1) and
// REPL commands (§2.2), and the frontend.h entry points. See Note [Parser error recovery].
#include "frontend/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "frontend/frontend.h"

namespace ndp::frontend {

using lang::Span;
using lang::ast::Expr;
using lang::ast::TopKind;
using lang::ast::TopLevel;

namespace {

constexpr std::array<std::string_view, 7> kCommands = {"load", "set", "show", "help", "exit", "describe", "apropos"};
// CMU commands for editors, shells, Lisp and background jobs (language.md §2.2 "no").
constexpr std::array<std::string_view, 6> kUnsupportedCommands = {"get", "edit", "shell", "lisp", "dump", "defconfig"};

bool one_of(std::string_view word, auto const& list) { return std::find(list.begin(), list.end(), word) != list.end(); }

bool is_closer(Tok kind) { return kind == Tok::RParen || kind == Tok::RBracket || kind == Tok::RBrace; }

std::string special_symbol_message(std::string_view word) {
  return fmt::format("The symbol {} is a special symbol, it cannot be used as a variable.", upper_case(word));
}

/// Recognises a pattern without building it: `apat {, apat}` with apat = name [ ( pattern ) ]
/// or ( pattern ). Special words count as names so that `f = 1` reaches the real parser and
/// gets its proper message.
bool scan_pattern(const std::vector<Token>& toks, size_t& i, int depth);

bool scan_atomic_pattern(const std::vector<Token>& toks, size_t& i, int depth) {
  switch (toks[i].kind) {
    case Tok::Ident:
    case Tok::True:
    case Tok::False:
    case Tok::Time:
    case Tok::Pair:
      ++i;
      if (toks[i].kind != Tok::LParen) return true;
      [[fallthrough]];
    case Tok::LParen:
      ++i;
      if (!scan_pattern(toks, i, depth + 1)) return false;
      if (toks[i].kind != Tok::RParen) return false;
      ++i;
      return true;
    default: return false;
  }
}

bool scan_pattern(const std::vector<Token>& toks, size_t& i, int depth) {
  if (depth > Parser::kMaxDepth) return false;
  if (!scan_atomic_pattern(toks, i, depth)) return false;
  while (toks[i].kind == Tok::Comma) {
    ++i;
    if (!scan_atomic_pattern(toks, i, depth)) return false;
  }
  return true;
}

}  // namespace

std::string upper_case(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

Parser::Parser(lang::ast::AstContext& ctx, const lang::SourceManager& sm, uint32_t file, lang::DiagnosticEngine& diags)
    : ctx_(ctx), sm_(sm), file_(file), diags_(diags) {}

// ---------------------------------------------------------------- tokens and errors

const Token& Parser::peek(size_t k) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }

const Token& Parser::advance() {
  const Token& t = toks_[pos_];
  if (t.kind != Tok::End) {
    ++pos_;
    prev_end_ = t.end;
  }
  return t;
}

bool Parser::accept(Tok kind) {
  if (!at(kind)) return false;
  advance();
  return true;
}

Span Parser::span_of(const Token& t) const { return Span{file_, t.begin, t.end}; }

Span Parser::from(Span start) const { return Span{file_, start.begin, std::max(start.end, prev_end_)}; }

std::string Parser::show(const Token& t) const {
  if (t.kind == Tok::End) return "end of input";
  std::string_view raw = sm_.slice(span_of(t));
  if (raw.size() > 40) return std::string(raw.substr(0, 37)) + "...";
  return std::string(raw);
}

bool Parser::fail(Span span, std::string message) {
  if (!form_failed_) found_.push_back(lang::Diagnostic{lang::Severity::Error, span, std::move(message), {}});
  form_failed_ = true;
  return false;
}

bool Parser::fail_here(std::string message) {
  if (at(Tok::Error)) {
    form_failed_ = true;
    return false;
  }
  if (at(Tok::End)) return fail(Span{file_, prev_end_, prev_end_}, std::move(message));
  return fail(span_of(peek()), std::move(message));
}

bool Parser::expect(Tok kind, const std::string& message) {
  if (accept(kind)) return true;
  return fail_here(message);
}

bool Parser::too_deep() {
  if (depth_ <= kMaxDepth) return false;
  fail_here("expression nested too deeply");
  return true;
}

// ---------------------------------------------------------------- top level

void Parser::lex_buffer() {
  lang::DiagnosticEngine lex_diags;
  toks_ = lex(sm_.text(file_), file_, &lex_diags).tokens;
  found_ = lex_diags.all();
  lex_errors_ = found_.size();
}

void Parser::flush_diagnostics() {
  // Lexical errors were found first; report everything in source order.
  std::stable_sort(found_.begin(), found_.end(),
                   [](const lang::Diagnostic& a, const lang::Diagnostic& b) { return a.span.begin < b.span.begin; });
  for (lang::Diagnostic& d : found_) diags_.add(std::move(d));
  found_.clear();
}

std::vector<const TopLevel*> Parser::program() {
  lex_buffer();
  std::vector<const TopLevel*> out;
  while (!at(Tok::End)) {
    if (is_terminator()) {  // an empty form
      advance();
      continue;
    }
    size_t start = pos_;
    form_failed_ = false;
    depth_ = 0;
    const TopLevel* f = form();
    if (f && !form_failed_) {
      if (is_terminator()) {
        advance();
        out.push_back(f);
        continue;
      }
      if (at(Tok::End))
        fail(Span{file_, prev_end_, prev_end_}, "expected $ or ; to end the form");
      else if (is_closer(peek().kind))
        fail_here(fmt::format("Unexpected {}", show(peek())));
      else
        fail_here(fmt::format("Unexpected {} (expected $ or ; to end the form)", show(peek())));
    }
    resync(start);
  }
  flush_diagnostics();
  return out;
}

void Parser::resync(size_t form_start) {
  size_t end = form_end(toks_, form_start);
  if (end < pos_) end = form_end(toks_, pos_);
  pos_ = end;
  prev_end_ = toks_[end].begin;
  if (is_terminator()) advance();
}

const TopLevel* Parser::signature() {
  lex_buffer();
  form_failed_ = false;
  Span start = span_of(peek());
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Function;
  top->signature = funtype(top->context);
  if (top->signature && !at(Tok::End)) fail_here(fmt::format("Unexpected {} after the type signature", show(peek())));
  bool ok = top->signature && !form_failed_ && lex_errors_ == 0;
  flush_diagnostics();
  if (!ok) return nullptr;
  top->span = from(start);
  return top;
}

const TopLevel* Parser::form() {
  const Token& t = peek();
  switch (t.kind) {
    case Tok::Function: return function_def();
    case Tok::Datatype: return datatype_def();
    case Tok::Question: advance(); return command("help");
    case Tok::Ident:
      if (one_of(t.text, kCommands)) {
        std::string word = t.text;
        advance();
        return command(word);
      }
      if (one_of(t.text, kUnsupportedCommands)) {
        fail_here(fmt::format("{} is a CMU NESL command that is not supported by ndp", upper_case(t.text)));
        return nullptr;
      }
      break;
    default: break;
  }
  if (looks_like_assignment()) return assignment();
  return expression_form();
}

bool Parser::looks_like_assignment() const {
  size_t i = pos_;
  return scan_pattern(toks_, i, 0) && toks_[i].kind == Tok::Equal;
}

bool Parser::name_binder(const Token& t, std::string& name) {
  switch (t.kind) {
    case Tok::Ident: name = t.text; return true;
    case Tok::True:
    case Tok::False:
    case Tok::Time: return fail_here(special_symbol_message(t.text));
    case Tok::Pair: return fail_here(kPairReserved);
    default: return fail_here(fmt::format("Expected a name instead of {}.", show(t)));
  }
}

const TopLevel* Parser::command(const std::string& word) {
  Span word_span{file_, toks_[pos_ - 1].begin, toks_[pos_ - 1].end};
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Command;
  top->name = word;
  top->name_span = word_span;
  size_t args_start = pos_;
  // Each argument is the token's source text, lower-cased unless it is a string or character
  // literal (a string keeps its quotes, so the driver can tell `"x"` from `x`).
  while (!is_terminator() && !at(Tok::End)) {
    const Token& t = advance();
    if (t.kind == Tok::Error) form_failed_ = true;  // the lexer reported it
    std::string raw(sm_.slice(span_of(t)));
    if (t.kind != Tok::String && t.kind != Tok::Char)
      for (char& c : raw)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    top->command_args.push_back(std::move(raw));
  }
  if (form_failed_) return nullptr;
  if (word == "load" && pos_ > args_start) {
    size_t args_end = pos_;
    pos_ = args_start;
    const Expr* e = exp();
    if (!e) return nullptr;
    if (pos_ != args_end) {
      fail_here(fmt::format("Unexpected {} after the file name of LOAD", show(peek())));
      return nullptr;
    }
    top->command_exp = e;
  }
  top->span = from(word_span);
  return top;
}

const TopLevel* Parser::function_def() {
  Span kw = span_of(advance());
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Function;
  if (!name_binder(peek(), top->name)) return nullptr;
  top->name_span = span_of(advance());
  top->pattern = pattern();
  if (!top->pattern) return nullptr;
  if (accept(Tok::Colon)) {
    top->signature = funtype(top->context);
    if (!top->signature) return nullptr;
    // CMU reads a doc string after a type as part of the type; ndp accepts it (§6 item 15).
    if (at(Tok::String)) top->doc = advance().text;
    if (accept(Tok::Equal)) {
      top->body = exp();
      if (!top->body) return nullptr;
    }
  } else {
    if (at(Tok::String)) top->doc = advance().text;
    if (!expect(Tok::Equal, fmt::format("Expected = or : instead of {} in the definition of function {}.", show(peek()),
                                        upper_case(top->name))))
      return nullptr;
    top->body = exp();
    if (!top->body) return nullptr;
  }
  top->span = from(kw);
  return top;
}

const TopLevel* Parser::datatype_def() {
  Span kw = span_of(advance());
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Datatype;
  if (!name_binder(peek(), top->name)) return nullptr;
  top->name_span = span_of(advance());
  if (!expect(Tok::LParen, fmt::format("Expected a ( instead of {} after the name of datatype {}.", show(peek()),
                                       upper_case(top->name))))
    return nullptr;
  top->signature = type_seq();
  if (!top->signature) return nullptr;
  if (!expect(Tok::RParen, fmt::format("Expected a ) instead of {} to close the fields of datatype {}.", show(peek()),
                                       upper_case(top->name))))
    return nullptr;
  if (accept(Tok::ColonColon) && !context(top->context)) return nullptr;
  top->span = from(kw);
  return top;
}

const TopLevel* Parser::assignment() {
  Span start = span_of(peek());
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Assign;
  top->pattern = pattern();
  if (!top->pattern) return nullptr;
  if (!expect(Tok::Equal, fmt::format("Expected an = instead of {}.", show(peek())))) return nullptr;
  top->body = exp();
  if (!top->body) return nullptr;
  top->span = from(start);
  return top;
}

const TopLevel* Parser::expression_form() {
  Span start = span_of(peek());
  auto* top = ctx_.make<TopLevel>();
  top->kind = TopKind::Expr;
  top->body = exp();
  if (!top->body) return nullptr;
  top->span = from(start);
  return top;
}

// ---------------------------------------------------------------- entry points

std::vector<const lang::ast::TopLevel*> parse_program(lang::ast::AstContext& ctx, const lang::SourceManager& sm,
                                                      uint32_t file, lang::DiagnosticEngine& diags) {
  return Parser(ctx, sm, file, diags).program();
}

const lang::ast::TopLevel* parse_signature(lang::ast::AstContext& ctx, const lang::SourceManager& sm, uint32_t file,
                                           lang::DiagnosticEngine& diags) {
  return Parser(ctx, sm, file, diags).signature();
}

bool input_is_complete(std::string_view text) {
  LexResult r = lex(text, 0, nullptr);
  if (r.unterminated) return false;
  size_t end = form_end(r.tokens, 0);
  return r.tokens[end].kind != Tok::End;
}

}  // namespace ndp::frontend
