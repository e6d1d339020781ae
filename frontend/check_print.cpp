// Printing AST expressions, patterns and type expressions back as NESL source.
#include "frontend/check_print.h"

#include <fmt/format.h>

namespace ndp::frontend {

using namespace lang::ast;

namespace {

// Precedence levels of language.md §2.5 (loosest first); atoms bind tightest.
enum Prec : int { kIfLet = 1, kTuple = 2, kOr = 3, kAnd = 4, kRel = 5, kAdd = 6, kMul = 7, kPow = 8,
                  kPut = 9, kGet = 10, kPrefix = 11, kPostfix = 12, kAtom = 13 };

int binary_prec(const std::string& op) {
  if (op == "or" || op == "nor" || op == "xor") return kOr;
  if (op == "and" || op == "nand") return kAnd;
  if (op == "==" || op == "/=" || op == "<" || op == ">" || op == "<=" || op == ">=") return kRel;
  if (op == "+" || op == "-" || op == "++") return kAdd;
  if (op == "*" || op == "/" || op == "||") return kMul;
  if (op == "^") return kPow;
  if (op == "<-") return kPut;
  return kGet;  // ->
}

int prec_of(const Expr* e) {
  switch (e->kind) {
    case ExprKind::Tuple: return kTuple;
    case ExprKind::Binary: return binary_prec(e->text);
    case ExprKind::Unary: return kPrefix;
    case ExprKind::Call:
    case ExprKind::Index: return kPostfix;
    case ExprKind::If:
    case ExprKind::Let:
    case ExprKind::Lambda: return kIfLet;
    case ExprKind::Int:
      return e->int_value < 0 ? kPrefix : kAtom;
    case ExprKind::Float:
      return e->float_value < 0 ? kPrefix : kAtom;
    default: return kAtom;
  }
}

std::string float_text(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// `(a, b)` patterns print without their outer parentheses inside generators and bindings.
std::string pattern_text(const Pattern* p, bool top);

std::string print(const Expr* e, int min_prec);

std::string tuple_body(const Expr* e) {
  if (e->kind == ExprKind::Tuple) return print(e->kids[0], kTuple + 1) + ", " + tuple_body(e->kids[1]);
  return print(e, kTuple);
}

std::string print_raw(const Expr* e) {
  switch (e->kind) {
    case ExprKind::Int:
      return fmt::format("{}{}", e->int_value, e->sized == Sized::I32 ? "i32" : "");
    case ExprKind::Float: return float_text(e->float_value) + (e->sized == Sized::F32 ? "f32" : "");
    case ExprKind::Bool: return e->bool_value ? "t" : "f";
    case ExprKind::Char: return std::string("`") + static_cast<char>(e->char_value);
    case ExprKind::String: return quoted(e->text);
    case ExprKind::Name: return e->text;
    case ExprKind::Tuple: return tuple_body(e);
    case ExprKind::Binary: {
      int p = binary_prec(e->text);
      bool right = e->text == "->";
      return print(e->kids[0], right ? p + 1 : p) + " " + e->text + " " + print(e->kids[1], right ? p : p + 1);
    }
    case ExprKind::Unary: return e->text + print(e->kids[0], kPrefix);
    case ExprKind::Call:
      if (e->juxtaposed) return print(e->kids[0], kPostfix) + " " + print(e->kids[1], kAtom);
      return print(e->kids[0], kPostfix) + "(" + print(e->kids[1], 0) + ")";
    case ExprKind::Index: return print(e->kids[0], kPostfix) + "[" + print(e->kids[1], 0) + "]";
    case ExprKind::SeqLit: {
      std::string s = "[";
      for (size_t i = 0; i < e->kids.size(); ++i) s += (i ? ", " : "") + print(e->kids[i], kOr);
      return s + "]";
    }
    case ExprKind::EmptySeq: {
      std::string t = type_expr_to_string(e->type);
      return "[] " + (e->type && e->type->kind == TypeExprKind::Pair ? "(" + t + ")" : t);
    }
    case ExprKind::Range: {
      std::string s = "[" + print(e->kids[0], kOr) + ":" + print(e->kids[1], 0);
      if (e->kids.size() > 2) s += ":" + print(e->kids[2], 0);
      return s + "]";
    }
    case ExprKind::ApplyToEach: {
      std::string s = "{";
      if (e->body) s += print(e->body, 0) + " : ";
      for (size_t i = 0; i < e->gens.size(); ++i) {
        if (i) s += "; ";
        s += pattern_text(e->gens[i].pattern, false);
        if (e->gens[i].exp) s += " in " + print(e->gens[i].exp, 0);
      }
      if (e->filter) s += " | " + print(e->filter, 0);
      s += "}";
      if (e->level != AtLevel::Auto) s += " at " + level_text(e->level, e->subwarp_width);
      return s;
    }
    case ExprKind::If:
      return "if " + print(e->kids[0], 0) + " then " + print(e->kids[1], 0) + " else " + print(e->kids[2], 0);
    case ExprKind::Let: {
      std::string s = "let ";
      for (size_t i = 0; i < e->binds.size(); ++i)
        s += (i ? "; " : "") + pattern_text(e->binds[i].pattern, false) + " = " + print(e->binds[i].exp, 0);
      return s + " in " + print(e->kids[0], 0);
    }
    case ExprKind::Time: return "time(" + print(e->kids[0], 0) + ")";
    case ExprKind::Lambda: {
      std::string param = pattern_text(e->param, false);
      if (e->param->kind != lang::ast::PatternKind::Var) param = "(" + param + ")";
      return param + " => " + print(e->kids[0], 0);
    }
  }
  return "?";
}

std::string print(const Expr* e, int min_prec) {
  std::string s = print_raw(e);
  return prec_of(e) < min_prec ? "(" + s + ")" : s;
}

std::string pattern_text(const Pattern* p, bool top) {
  switch (p->kind) {
    case PatternKind::Var: return p->name;
    case PatternKind::Con: {
      // Fields print as a tuple without its outer parentheses, like a datatype value.
      std::string inner = pattern_text(p->left, false);
      return p->name + "(" + inner + ")";
    }
    case PatternKind::Tuple: {
      std::string left = pattern_text(p->left, false);
      if (p->left->kind == PatternKind::Tuple) left = "(" + left + ")";
      std::string s = left + ", " + pattern_text(p->right, false);
      return top ? "(" + s + ")" : s;
    }
  }
  return "?";
}

}  // namespace

std::string expr_to_string(const Expr* e) { return print(e, 0); }

std::string pattern_to_string(const Pattern* p) { return pattern_text(p, true); }

std::string type_expr_to_string(const TypeExpr* t) {
  if (!t) return "?";
  switch (t->kind) {
    case TypeExprKind::Name: {
      std::string s = t->name;
      if (!t->args.empty()) {
        s += "(";
        for (size_t i = 0; i < t->args.size(); ++i) s += (i ? ", " : "") + type_expr_to_string(t->args[i]);
        s += ")";
      }
      return s;
    }
    case TypeExprKind::Seq: return "[" + type_expr_to_string(t->args[0]) + "]";
    case TypeExprKind::Pair: {
      std::string l = type_expr_to_string(t->args[0]);
      if (t->args[0]->kind != TypeExprKind::Name && t->args[0]->kind != TypeExprKind::Seq) l = "(" + l + ")";
      return l + ", " + type_expr_to_string(t->args[1]);
    }
    case TypeExprKind::Fn: {
      std::string l = type_expr_to_string(t->args[0]);
      if (t->args[0]->kind == TypeExprKind::Pair || t->args[0]->kind == TypeExprKind::Fn) l = "(" + l + ")";
      return l + " -> " + type_expr_to_string(t->args[1]);
    }
  }
  return "?";
}

}  // namespace ndp::frontend
