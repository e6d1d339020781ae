// A generated NESL program as a typed tree (definitions + one test expression), so that the
// shrinker can replace subexpressions; printing turns it into ndp source text.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/difftest/gen_type.h"

namespace ndp::difftest {

struct Pattern {
  enum class Kind { Var, Tuple, Con };
  Kind kind = Kind::Var;
  std::string name;           // Var: the variable; Con: the constructor
  std::vector<Pattern> kids;  // Tuple: exactly two; Con: one (the fields pattern)
};

Pattern pat_var(std::string name);
Pattern pat_tuple(Pattern a, Pattern b);
Pattern pat_con(std::string con, Pattern fields);

struct Expr;
using ExprP = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    Lit,     // text: the literal as written
    Var,     // text: the name
    Call,    // text: the function; kids: arguments
    Binop,   // text: the operator; kids: left, right
    Prefix,  // text: `#`, `-` or `@`; kids: operand
    Index,   // kids: sequence, index
    If,      // kids: condition, then, else
    Let,     // pats[0] = kids[0] in kids[1]
    Tuple,   // kids: left, right
    SeqLit,  // kids: the elements (at least one)
    Empty,   // `[] T`; type is the sequence type
    Range,   // kids: start, end [, stride]
    Each,    // kids: body, one sequence per pattern in pats, then the filter if has_filter
  };
  Kind kind = Kind::Lit;
  TypeP type;
  std::string text;
  std::vector<ExprP> kids;
  std::vector<Pattern> pats;
  bool has_filter = false;
  /// Guards that keep recursion finite (the decreasing argument, the base-case test): the
  /// shrinker must not rewrite them, or a reproducer could stop terminating.
  bool frozen = false;
};

struct FunctionDef {
  std::string name;
  std::vector<std::string> params;  // the parameter names (a tuple when more than one)
  std::vector<TypeP> param_types;
  TypeP result;
  ExprP body;            // null for a bodyless declaration (`function f(n) : int -> bool`)
  bool typed = false;    // write a signature
  bool recursive = false;
};

struct DatatypeDef {
  std::string name;
  TypeP fields;
};

/// Top-level definitions in source order, then the test expression.
struct Program {
  struct Def {
    enum class Kind { Datatype, Function } kind = Kind::Function;
    DatatypeDef data;
    FunctionDef fn;
  };
  std::vector<Def> defs;
  ExprP expr;
};

std::string pattern_text(const Pattern& p);
std::string expr_text(const ExprP& e);
/// One definition as a top-level form, terminated by ` $`.
std::string def_text(const Program::Def& d);
/// Every definition, one per line.
std::string defs_text(const Program& p);
/// Definitions, test expression and a `%test` block: a ready-to-paste `.ndp` file.
std::string program_file(const Program& p, const std::string& header, const std::string& expected);

/// Number of nodes, a size measure for the shrinker.
size_t expr_size(const ExprP& e);
/// Preorder walk; `visit` returns false to skip a node's children.
void walk(const ExprP& e, const std::function<bool(const ExprP&)>& visit);
/// A copy of `root` with its preorder node number `target` replaced by `repl`.
ExprP replace_node(const ExprP& root, size_t target, const ExprP& repl);
/// True when `e` calls `name` anywhere.
bool calls(const ExprP& e, const std::string& name);
/// True when the whole-word identifier `name` appears in `text`.
bool mentions(const std::string& text, const std::string& name);

}  // namespace ndp::difftest
