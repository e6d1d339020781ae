// The source AST produced by the parser (frontend/parser) and consumed by the type checker.
//
// Note [AST]
// The AST mirrors NESL's surface syntax (language.md §2) with no desugaring: operators keep
// their spelling, apply-to-each keeps optional bodies and bare-name generators, and `a[i]`,
// `#a`, `[s:e:d]`, juxtaposition and `time(e)` are their own nodes. Names are stored lower
// case (NESL is case-insensitive), with their source spans. Tuples are binary (`,` is a
// right-associative operator), exactly as in NESL. Nodes are allocated in an AstContext arena
// and referenced by plain const pointers; a node never outlives its context.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "lang/source.h"

namespace ndp::lang::ast {

// ---- Type expressions (signatures, `[] T`, datatype fields) ----

enum class TypeExprKind : uint8_t {
  Name,  // int, float, bool, char, i32, f32, a type variable, or a datatype (with args)
  Seq,   // [T]
  Pair,  // T1, T2
  Fn,    // T1 -> T2 (only at the top of a function signature)
};

struct TypeExpr {
  TypeExprKind kind;
  Span span;
  std::string name;                    // Name
  std::vector<const TypeExpr*> args;   // Name: datatype parameters; Seq: [elem]; Pair/Fn: [l, r]
};

/// `a in number`
struct ContextBind {
  std::string var;
  std::string cls;  // number, ordinal, logical, any (checked by the type checker)
  Span span;
};

// ---- Patterns ----

enum class PatternKind : uint8_t {
  Var,    // x
  Tuple,  // p1, p2
  Con,    // name(p)
};

struct Pattern {
  PatternKind kind;
  Span span;
  std::string name;                   // Var: variable; Con: constructor
  const Pattern* left = nullptr;      // Tuple: first; Con: argument
  const Pattern* right = nullptr;     // Tuple: second
};

// ---- Expressions ----

enum class ExprKind : uint8_t {
  Int,         // int_value (i32 literal when sized == I32)
  Float,       // float_value (f32 literal when sized == F32)
  Bool,        // bool_value
  Char,        // char_value
  String,      // text (raw bytes after escapes)
  Name,        // text
  Tuple,       // kids[0], kids[1]
  Binary,      // op, kids[0], kids[1]: or nor xor and nand == /= < > <= >= + - ++ * / || ^ <- ->
  Unary,       // op, kids[0]: # @ -
  Call,        // kids[0](kids[1]); `juxtaposed` for `f x`
  Index,       // kids[0][kids[1]]
  SeqLit,      // [kids...], at least one
  EmptySeq,    // [] type
  Range,       // [kids[0] : kids[1] (: kids[2])]
  ApplyToEach, // {body : gens | filter} at level
  If,          // kids[0] then kids[1] else kids[2]
  Let,         // let binds in kids[0]
  Time,        // time(kids[0])
  Lambda,      // param => kids[0] (an anonymous function, as CMU NESL writes it)
};

enum class Sized : uint8_t { Default, I32, F32 };

/// `at LEVEL` on an apply-to-each (extensions.md §2).
enum class AtLevel : uint8_t { Auto, Grid, Block, Warp, Subwarp, Thread, Seq };

/// The source spelling of a level: "auto", "grid", ..., "seq".
inline const char* level_name(AtLevel l) {
  switch (l) {
    case AtLevel::Auto: return "auto";
    case AtLevel::Grid: return "grid";
    case AtLevel::Block: return "block";
    case AtLevel::Warp: return "warp";
    case AtLevel::Subwarp: return "subwarp";
    case AtLevel::Thread: return "thread";
    case AtLevel::Seq: return "seq";
  }
  return "auto";
}

/// A level as `at` spells it: its name, and a sub-warp's width (`subwarp(8)`).
inline std::string level_text(AtLevel l, int subwarp_width) {
  if (l == AtLevel::Subwarp) return "subwarp(" + std::to_string(subwarp_width) + ")";
  return level_name(l);
}

struct Expr;

/// One generator of an apply-to-each: `pattern in exp`, or a bare name `x` (means `x in x`;
/// then pattern is a Var and exp is nullptr).
struct Generator {
  const Pattern* pattern = nullptr;
  const Expr* exp = nullptr;
  Span span;
};

/// One binding of a `let`: `pattern = exp`.
struct Binding {
  const Pattern* pattern = nullptr;
  const Expr* exp = nullptr;
  Span span;
};

struct Expr {
  ExprKind kind;
  Span span;
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  uint8_t char_value = 0;
  Sized sized = Sized::Default;
  std::string text;                       // Name, String, operator spelling
  std::vector<const Expr*> kids;
  bool juxtaposed = false;                // Call written as `f x`
  const TypeExpr* type = nullptr;         // EmptySeq
  // ApplyToEach
  const Expr* body = nullptr;             // nullptr: `{x in s | p}` (body is the first pattern)
  std::vector<Generator> gens;
  const Expr* filter = nullptr;
  AtLevel level = AtLevel::Auto;
  int subwarp_width = 0;                  // AtLevel::Subwarp: 2, 4, 8 or 16
  // Let
  std::vector<Binding> binds;
  // Lambda
  const Pattern* param = nullptr;
};

// ---- Top-level forms ----

enum class TopKind : uint8_t {
  Function,   // function name pattern [: type] [doc] [= body]
  Datatype,   // datatype name(T1, ..., Tn) [:: context]
  Assign,     // pattern = exp
  Expr,       // exp (binds `it`)
  Command,    // load "f", set print_length 5, exit, help, show status, describe x, ...
};

struct TopLevel {
  TopKind kind;
  Span span;             // the whole form, terminator excluded
  std::string name;      // Function / Datatype name; Command word (lower case)
  Span name_span;
  const Pattern* pattern = nullptr;   // Function parameter / Assign left side
  const TypeExpr* signature = nullptr;  // Function: Fn type; Datatype: field type
  std::vector<ContextBind> context;     // `:: (a in number; ...)`
  std::string doc;                      // Function doc string
  const Expr* body = nullptr;           // Function body (nullptr: declaration), Assign/Expr value
  /// Command arguments: the raw tokens after the command word (lower-cased except strings),
  /// and for `load EXP` the expression.
  std::vector<std::string> command_args;
  const Expr* command_exp = nullptr;
};

/// Owns every node of one parse (REPL inputs each get a context that lives as long as the
/// session, since definitions keep pointing into them).
class AstContext {
 public:
  template <class T>
  T* make() {
    auto& slot = nodes_.emplace_back(std::make_shared<T>());
    return static_cast<T*>(slot.get());
  }

 private:
  std::deque<std::shared_ptr<void>> nodes_;
};

}  // namespace ndp::lang::ast
