// The lexer and parser: every precedence example of language.md §2.5, each form of §2 and
// §3.4/§3.7, sized literals and `at LEVEL` (extensions.md §1-§2), and error recovery.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/frontend.h"

using namespace ndp;
using namespace ndp::lang;
using namespace ndp::lang::ast;

namespace {

// ---- an S-expression printer for the AST ----

std::string show(const TypeExpr* t) {
  switch (t->kind) {
    case TypeExprKind::Name: {
      if (t->args.empty()) return t->name;
      std::string s = "(" + t->name;
      for (const TypeExpr* a : t->args) s += " " + show(a);
      return s + ")";
    }
    case TypeExprKind::Seq: return "[" + show(t->args[0]) + "]";
    case TypeExprKind::Pair: return "(, " + show(t->args[0]) + " " + show(t->args[1]) + ")";
    case TypeExprKind::Fn: return "(-> " + show(t->args[0]) + " " + show(t->args[1]) + ")";
  }
  return "?";
}

std::string show(const Pattern* p) {
  switch (p->kind) {
    case PatternKind::Var: return p->name;
    case PatternKind::Tuple: return "(, " + show(p->left) + " " + show(p->right) + ")";
    case PatternKind::Con: return "(" + p->name + " " + show(p->left) + ")";
  }
  return "?";
}

std::string level_name(const Expr* e) {
  switch (e->level) {
    case AtLevel::Auto: return "";
    case AtLevel::Grid: return " @grid";
    case AtLevel::Block: return " @block";
    case AtLevel::Warp: return " @warp";
    case AtLevel::Subwarp: return fmt::format(" @subwarp{}", e->subwarp_width);
    case AtLevel::Thread: return " @thread";
    case AtLevel::Seq: return " @seq";
  }
  return "?";
}

std::string show(const Expr* e) {
  auto kids = [&](std::string head) {
    std::string s = "(" + head;
    for (const Expr* k : e->kids) s += " " + show(k);
    return s + ")";
  };
  switch (e->kind) {
    case ExprKind::Int: return fmt::format("{}{}", e->int_value, e->sized == Sized::I32 ? "i32" : "");
    case ExprKind::Float: return fmt::format("{}{}", e->float_value, e->sized == Sized::F32 ? "f32" : "");
    case ExprKind::Bool: return e->bool_value ? "t" : "f";
    case ExprKind::Char: return std::string("`") + static_cast<char>(e->char_value);
    case ExprKind::String: return "\"" + e->text + "\"";
    case ExprKind::Name: return e->text;
    case ExprKind::Tuple: return kids(",");
    case ExprKind::Binary:
    case ExprKind::Unary: return kids(e->text);
    case ExprKind::Call: return kids(e->juxtaposed ? "juxt" : "call");
    case ExprKind::Index: return kids("index");
    case ExprKind::SeqLit: return kids("seq");
    case ExprKind::EmptySeq: return "(empty " + show(e->type) + ")";
    case ExprKind::Range: return kids("range");
    case ExprKind::If: return kids("if");
    case ExprKind::Time: return kids("time");
    case ExprKind::Lambda: return "(=> " + show(e->param) + " " + show(e->kids[0]) + ")";
    case ExprKind::Let: {
      std::string s = "(let (";
      for (size_t i = 0; i < e->binds.size(); ++i)
        s += (i ? " " : "") + ("(= " + show(e->binds[i].pattern) + " " + show(e->binds[i].exp) + ")");
      return s + ") " + show(e->kids[0]) + ")";
    }
    case ExprKind::ApplyToEach: {
      std::string s = "(each " + (e->body ? show(e->body) : std::string("_"));
      for (const Generator& g : e->gens)
        s += " (in " + show(g.pattern) + " " + (g.exp ? show(g.exp) : std::string("_")) + ")";
      if (e->filter) s += " (| " + show(e->filter) + ")";
      return s + level_name(e) + ")";
    }
  }
  return "?";
}

std::string show(const TopLevel* t) {
  std::string s;
  switch (t->kind) {
    case TopKind::Function:
      s = "(function " + t->name + " " + show(t->pattern);
      if (t->signature) s += " : " + show(t->signature);
      break;
    case TopKind::Datatype: s = "(datatype " + t->name + " " + show(t->signature); break;
    case TopKind::Assign: s = "(assign " + show(t->pattern); break;
    case TopKind::Expr: s = "(expr"; break;
    case TopKind::Command:
      s = "(command " + t->name;
      for (const std::string& a : t->command_args) s += " " + a;
      if (t->command_exp) s += " (exp " + show(t->command_exp) + ")";
      break;
  }
  if (!t->context.empty()) {
    s += " ::";
    for (const ContextBind& b : t->context) s += " (" + b.var + " in " + b.cls + ")";
  }
  if (!t->doc.empty()) s += " doc \"" + t->doc + "\"";
  if (t->body) s += (t->kind == TopKind::Function ? " = " : " ") + show(t->body);
  return s + ")";
}

// ---- parsing helpers ----

struct Parsed {
  SourceManager sm;
  DiagnosticEngine diags;
  AstContext ctx;
  uint32_t file = 0;
  std::vector<const TopLevel*> forms;

  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const Diagnostic& d : diags.all()) {
      LineCol lc = sm.line_col(d.span);
      out.push_back(fmt::format("{}:{}: {}", lc.line, lc.col, d.message));
    }
    return out;
  }
};

std::unique_ptr<Parsed> parse(std::string text) {
  auto p = std::make_unique<Parsed>();
  p->file = p->sm.add("<test>", std::move(text));
  p->forms = frontend::parse_program(p->ctx, p->sm, p->file, p->diags);
  return p;
}

/// All forms of a buffer that must parse without errors, one S-expression per line.
std::string top(std::string text) {
  auto p = parse(std::move(text));
  for (const std::string& e : p->errors()) FAIL_CHECK("unexpected error: " << e);
  std::string s;
  for (const TopLevel* t : p->forms) s += (s.empty() ? "" : "\n") + show(t);
  return s;
}

/// One expression (a terminator is added).
std::string ex(std::string text) {
  auto p = parse(text + " $");
  for (const std::string& e : p->errors()) FAIL_CHECK("unexpected error in `" << text << "`: " << e);
  if (p->forms.size() != 1 || p->forms[0]->kind != TopKind::Expr) return "<not one expression>";
  return show(p->forms[0]->body);
}

/// The diagnostics of a buffer as "line:col: message".
std::vector<std::string> errs(std::string text) { return parse(std::move(text))->errors(); }

/// The first diagnostic's message (for buffers with one error).
std::string err1(std::string text) {
  auto e = errs(std::move(text));
  return e.empty() ? "<no error>" : e[0];
}

}  // namespace

TEST_CASE("precedence examples of language.md §2.5") {
  CHECK(ex("1+2*3") == "(+ 1 (* 2 3))");
  CHECK(ex("2^3^2") == "(^ (^ 2 3) 2)");
  CHECK(ex("-2^2") == "(^ (- 2) 2)");
  CHECK(ex("2 * 3 ^ 2") == "(* 2 (^ 3 2))");
  CHECK(ex("10 - 2 - 3") == "(- (- 10 2) 3)");
  CHECK(ex("100 / 10 / 5") == "(/ (/ 100 10) 5)");
  CHECK(ex("1, 2 == 2") == "(, 1 (== 2 2))");
  CHECK(ex("t or f and f") == "(or t (and f f))");
  CHECK(ex("t xor t and f") == "(xor t (and t f))");
  CHECK(ex("t or t nand t") == "(or t (nand t t))");
  CHECK(ex("\"ab\" || 4 ++ \"c\"") == "(++ (|| \"ab\" 4) \"c\")");
  CHECK(ex("1 + 2 == 3") == "(== (+ 1 2) 3)");
  CHECK(ex("#[[1,2],[3]][0]") == "(# (index (seq (seq 1 2) (seq 3)) 0))");
  CHECK(ex("-[1,2][0]") == "(- (index (seq 1 2) 0))");
  CHECK(ex("[1,2] ++ [3,4] -> [0]") == "(++ (seq 1 2) (-> (seq 3 4) (seq 0)))");
  CHECK(ex("[0,0,0] <- [(1,5),(2,6)] -> [1]") == "(<- (seq 0 0 0) (-> (seq (, 1 5) (, 2 6)) (seq 1)))");
  CHECK(ex("[0,0,0] <- [(0,1)] <- [(1,2)]") == "(<- (<- (seq 0 0 0) (seq (, 0 1))) (seq (, 1 2)))");
  CHECK(ex("\"a\" ++ @1") == "(++ \"a\" (@ 1))");
  CHECK(ex("1 + if t then 1 else 2") == "(+ 1 (if t 1 2))");
  CHECK(ex("if t then 1 else 2 + 10") == "(if t 1 (+ 2 10))");
  CHECK(ex("if f then (1,2) else 2, 3") == "(if f (, 1 2) (, 2 3))");
  CHECK(ex("let x = 1 in x, 2") == "(let ((= x 1)) (, x 2))");
  CHECK(ex("1 < 2 < 3") == "(< (< 1 2) 3)");
}

TEST_CASE("more precedence: levels, associativity, prefix and postfix") {
  CHECK(ex("a -> b -> c") == "(-> a (-> b c))");
  CHECK(ex("#a+1") == "(+ (# a) 1)");
  CHECK(ex("# - @ x") == "(# (- (@ x)))");
  CHECK(ex("a or b nor c xor d") == "(xor (nor (or a b) c) d)");
  CHECK(ex("a and b == c") == "(and a (== b c))");
  CHECK(ex("a <= b + c * d ^ e <- f -> g") == "(<= a (+ b (* c (^ d (<- e (-> f g))))))");
  CHECK(ex("a /= b") == "(/= a b)");
  CHECK(ex("a<-b") == "(<- a b)");
  CHECK(ex("a<=b") == "(<= a b)");
  CHECK(ex("a >= b") == "(>= a b)");
  CHECK(ex("a[1][0]") == "(index (index a 1) 0)");
  CHECK(ex("f(x)[2]") == "(index (call f x) 2)");
  CHECK(ex("f(1, 2)") == "(call f (, 1 2))");
  CHECK(ex("f((1, 2))") == "(call f (, 1 2))");
  CHECK(ex("[1, if t then 2 else 3, 4]") == "(seq 1 (if t 2 (, 3 4)))");
  CHECK(ex("x - 1") == "(- x 1)");
}

TEST_CASE("tuples are right-nested") {
  CHECK(ex("1, 2, 3") == "(, 1 (, 2 3))");
  CHECK(ex("(1, (2, 3))") == "(, 1 (, 2 3))");
  CHECK(ex("((1, 2), 3)") == "(, (, 1 2) 3)");
  CHECK(ex("[(1, 2), (3, 4)]") == "(seq (, 1 2) (, 3 4))");
}

TEST_CASE("juxtaposition is a call, one primary as argument, grouping left") {
  CHECK(ex("sqrt 4.0") == "(juxt sqrt 4)");
  CHECK(ex("not t") == "(juxt not t)");
  CHECK(ex("1 2") == "(juxt 1 2)");
  CHECK(ex("f x y") == "(juxt (juxt f x) y)");
  CHECK(ex("f x[0]") == "(index (juxt f x) 0)");
  CHECK(ex("#f x") == "(# (juxt f x))");
  CHECK(ex("f \"s\" + 1") == "(+ (juxt f \"s\") 1)");
  CHECK(ex("f {x : x in s}") == "(juxt f (each x (in x s)))");
}

TEST_CASE("sequences, empty sequences and ranges") {
  CHECK(ex("[1]") == "(seq 1)");
  CHECK(ex("[] int") == "(empty int)");
  CHECK(ex("[] BOOL") == "(empty bool)");
  CHECK(ex("[] [char]") == "(empty [char])");
  CHECK(ex("[] (int, float)") == "(empty (, int float))");
  CHECK(ex("[] point") == "(empty point)");
  CHECK(ex("[] box(int)") == "(empty (box int))");
  CHECK(ex("[1:10:3]") == "(range 1 10 3)");
  CHECK(ex("[-3:2]") == "(range (- 3) 2)");
  CHECK(ex("[s : e]") == "(range s e)");
  CHECK(ex("{sum(x) : x in [[1,2],[3,4,5],[] int]}") ==
        "(each (call sum x) (in x (seq (seq 1 2) (seq 3 4 5) (empty int))))");
}

TEST_CASE("apply-to-each forms") {
  CHECK(ex("{a+b : a in [1,2,3]; b in [10,20,30]}") == "(each (+ a b) (in a (seq 1 2 3)) (in b (seq 10 20 30)))");
  CHECK(ex("{a+b : a; b}") == "(each (+ a b) (in a _) (in b _))");
  CHECK(ex("{x in [1,2,3,4] | x > 2}") == "(each _ (in x (seq 1 2 3 4)) (| (> x 2)))");
  CHECK(ex("{x*x : x in [1,2,3,4] | oddp(x)}") == "(each (* x x) (in x (seq 1 2 3 4)) (| (call oddp x)))");
  CHECK(ex("{x + 1 : (x, y) in [(1,2),(3,4)]}") == "(each (+ x 1) (in (, x y) (seq (, 1 2) (, 3 4))))");
  CHECK(ex("{a + b : (a, b) in [(1,2),(3,4)]; c in \"xy\" | c == `y}") ==
        "(each (+ a b) (in (, a b) (seq (, 1 2) (, 3 4))) (in c \"xy\") (| (== c `y)))");
  CHECK(ex("{x, y : x in [1,2]; y in \"ab\"}") == "(each (, x y) (in x (seq 1 2)) (in y \"ab\"))");
  CHECK(ex("{if i > 0 then 10 / i else 0 : i in [0, 1, 2]}") == "(each (if (> i 0) (/ 10 i) 0) (in i (seq 0 1 2)))");
  CHECK(ex("{[1:x] : x in [1,2,3]}") == "(each (range 1 x) (in x (seq 1 2 3)))");
  CHECK(ex("{px(p) : p in [point(1, 2), point(3, 4)]}") ==
        "(each (call px p) (in p (seq (call point (, 1 2)) (call point (, 3 4)))))");
  CHECK(ex("{x + y : point(x, y) in ps}") == "(each (+ x y) (in (point (, x y)) ps))");
  CHECK(ex("{let y = x; in y : x in s}") == "(each (let ((= y x)) y) (in x s))");
  CHECK(ex("{x}") == "(each _ (in x _))");
}

TEST_CASE("at LEVEL after an apply-to-each, and `at` as a name elsewhere") {
  CHECK(ex("{x : x in s} at warp") == "(each x (in x s) @warp)");
  CHECK(ex("{x : x in s} AT Block") == "(each x (in x s) @block)");
  CHECK(ex("{x : x in s} at subwarp(8)") == "(each x (in x s) @subwarp8)");
  CHECK(ex("{x : x in s} at grid") == "(each x (in x s) @grid)");
  CHECK(ex("{x : x in s} at thread") == "(each x (in x s) @thread)");
  CHECK(ex("{x : x in s} at seq") == "(each x (in x s) @seq)");
  CHECK(ex("{x : x in s} at auto") == "(each x (in x s))");
  CHECK(ex("{sum({v * x[c] : (c, v) in row}) : row in rows} at warp") ==
        "(each (call sum (each (* v (index x c)) (in (, c v) row))) (in row rows) @warp)");
  CHECK(ex("at + 1") == "(+ at 1)");
  CHECK(ex("f(at)") == "(call f at)");
  CHECK(ex("let at = 2 in at") == "(let ((= at 2)) at)");
  CHECK(top("at = 3 $") == "(assign at 3)");
  CHECK(top("function g(at) = {at : at in at} at warp $") == "(function g at = (each at (in at at) @warp))");
  CHECK(err1("{x : x in s} at 3 $") ==
        "1:17: Expected a level (grid, block, warp, subwarp(N), thread, seq or auto) after AT instead of 3.");
  CHECK(err1("{x : x in s} at subwarp(3) $") == "1:25: subwarp width must be 2, 4, 8 or 16, not 3");
}

TEST_CASE("let and if") {
  CHECK(ex("let a = 1; b = 2 in a + b") == "(let ((= a 1) (= b 2)) (+ a b))");
  CHECK(ex("let a = 1; b = 2; in a") == "(let ((= a 1) (= b 2)) a)");
  CHECK(ex("let (a, (b, c)) = (1, 2, 3) in a") == "(let ((= (, a (, b c)) (, 1 (, 2 3)))) a)");
  CHECK(ex("let point(x, y) = p in x") == "(let ((= (point (, x y)) p)) x)");
  CHECK(ex("let a = let b = 1 in b; c = 2 in a") == "(let ((= a (let ((= b 1)) b)) (= c 2)) a)");
  CHECK(ex("if a then if b then 1 else 2 else 3") == "(if a (if b 1 2) 3)");
  CHECK(ex("- if c then 1 else 2 + 3") == "(- (if c 1 (+ 2 3)))");
  CHECK(ex("time(f(1))") == "(time (call f 1))");
}

TEST_CASE("lambdas: PATTERN => EXPR, the body stopping at a comma") {
  CHECK(ex("x => x + 1") == "(=> x (+ x 1))");
  CHECK(ex("(a, b) => a * b") == "(=> (, a b) (* a b))");
  CHECK(ex("(x) => x") == "(=> x x)");
  CHECK(ex("((a, b), c) => c") == "(=> (, (, a b) c) c)");
  CHECK(ex("twice(x => x * 3, 2)") == "(call twice (, (=> x (* x 3)) 2))");
  CHECK(ex("[x => x, sq]") == "(seq (=> x x) sq)");
  CHECK(ex("(x => x + 1)(2)") == "(call (=> x (+ x 1)) 2)");
  CHECK(ex("let f = (s, v) => (s, v) in f") == "(let ((= f (=> (, s v) (, s v)))) f)");
  CHECK(ex("x => if x then 1 else 2") == "(=> x (if x 1 2))");
  CHECK(ex("x => y => x + y") == "(=> x (=> y (+ x y)))");
  CHECK(ex("(a + b) * c") == "(* (+ a b) c)");  // a parenthesised group not followed by => is no lambda
  CHECK(err1("x => $") == "1:3: => is missing its right argument.");
  CHECK(err1("(1, 2) => 3 $").find("1:2:") == 0);  // a literal is not a pattern
}

TEST_CASE("literals") {
  CHECK(ex("007") == "7");
  CHECK(ex("9223372036854775807") == "9223372036854775807");
  CHECK(ex("1.5") == "1.5");
  CHECK(ex("1.") == "1");
  CHECK(ex(".5") == "0.5");
  CHECK(ex("1e10") == "10000000000");
  CHECK(ex("1E5") == "100000");
  CHECK(ex("2.5e+3") == "2500");
  CHECK(ex("1.0e-7") == "1e-07");
  CHECK(ex(".5e1") == "5");
  CHECK(ex("5.0e-324") == "5e-324");  // subnormal: fine
  CHECK(ex("1.7976931348623157e308") == "1.7976931348623157e+308");
  CHECK(ex("T") == "t");
  CHECK(ex("F") == "f");
  CHECK(ex("`a") == "`a");
  CHECK(ex("`A") == "`A");
  CHECK(ex("` ") == "` ");
  CHECK(ex("`%") == "`%");
  CHECK(ex("`\"") == "`\"");
  CHECK(ex("[`a, `b]") == "(seq `a `b)");
  CHECK(ex("\"a\\\"b\\\\c\"") == "\"a\"b\\c\"");
  CHECK(ex("\"tab\\there\"") == "\"tabthere\"");
  CHECK(ex("\"50%\"") == "\"50%\"");
  CHECK(ex("\"MiXed $ ; case\"") == "\"MiXed $ ; case\"");
  CHECK(ex("\"line\nbreak\"") == "\"line\nbreak\"");

  auto p = parse("`\n $");
  REQUIRE(p->forms.size() == 1);
  CHECK(p->forms[0]->body->char_value == '\n');
}

TEST_CASE("sized literals (extensions.md §1)") {
  CHECK(ex("7i32") == "7i32");
  CHECK(ex("2147483647i32") == "2147483647i32");
  CHECK(ex("1.5f32") == "1.5f32");
  CHECK(ex("2f32") == "2f32");
  CHECK(ex("7I32 + 1") == "(+ 7i32 1)");
  auto p = parse("0.1f32 $");
  REQUIRE(p->forms.size() == 1);
  CHECK(p->forms[0]->body->float_value == static_cast<double>(0.1f));
  CHECK(p->forms[0]->body->sized == Sized::F32);
  CHECK(top("function g(x) : i32 -> f32 = f32(x) $") == "(function g x : (-> i32 f32) = (call f32 x))");
  CHECK(err1("2147483648i32 $") == "1:1: integer literal 2147483648i32 does not fit in 32 bits");
  CHECK(err1("1.5i32 $") == "1:1: '1.5i32': the i32 suffix needs an integer literal");
  CHECK(err1("1e39f32 $") == "1:1: float literal 1e39f32 is too large for f32");
  CHECK(err1("7i64 $") == "1:1: malformed number '7i64': a number cannot be followed directly by a letter or a '.'");
}

TEST_CASE("comments and case folding") {
  CHECK(ex("1 % a comment $ with a dollar % + 1") == "(+ 1 1)");
  CHECK(ex("1 % ; and ; % + 2") == "(+ 1 2)");
  CHECK(top("%test\nqs([3, 1, 2]) ==> [1, 2, 3]\n%\n1 $") == "(expr 1)");
  CHECK(top("FUNCTION Foo(X) = X + 1 $ FOO(3) $") == "(function foo x = (+ x 1))\n(expr (call foo 3))");
  CHECK(ex("IF T THEN F ELSE T") == "(if t f t)");
  CHECK(ex("LeT Xy = 1 In XY") == "(let ((= xy 1)) xy)");
  CHECK(top("DATATYPE Point(INT, Int) $") == "(datatype point (, int int))");
}

TEST_CASE("patterns") {
  CHECK(top("(a, (b, c)) = (1, 2, 3) $") == "(assign (, a (, b c)) (, 1 (, 2 3)))");
  CHECK(top("((a, b), c) = x $") == "(assign (, (, a b) c) x)");
  CHECK(top("point(x, y) = point(3, 4) $") == "(assign (point (, x y)) (call point (, 3 4)))");
  CHECK(top("function px(point(x, y)) = x $") == "(function px (point (, x y)) = x)");
  CHECK(top("function sq x = x*x $") == "(function sq x = (* x x))");
  CHECK(top("function add(a, b) = a + b $") == "(function add (, a b) = (+ a b))");
  CHECK(top("_ = 1 $") == "(assign _ 1)");
}

TEST_CASE("top-level forms") {
  CHECK(top("x = 5 $ x + 1 ; y = 2 ;") == "(assign x 5)\n(expr (+ x 1))\n(assign y 2)");
  CHECK(top("1 $ 2 $") == "(expr 1)\n(expr 2)");
  CHECK(top("x == 5 $") == "(expr (== x 5))");
  CHECK(top("$ ; 1 $") == "(expr 1)");
  CHECK(top("function f3(x) : [a] -> [a] :: (a in ordinal) = x $") ==
        "(function f3 x : (-> [a] [a]) :: (a in ordinal) = x)");
  CHECK(top("function ev(n) : int -> bool $") == "(function ev n : (-> int bool))");
  CHECK(top("function f2(x, y) : (int, int) -> int = x + y $") ==
        "(function f2 (, x y) : (-> (, int int) int) = (+ x y))");
  CHECK(top("function bad(x) : a -> a :: a in any = x + x $") == "(function bad x : (-> a a) :: (a in any) = (+ x x))");
  CHECK(top("function k(a, b) : (a, b) -> (b, a) :: a in any; b in any = (b, a) ;") ==
        "(function k (, a b) : (-> (, a b) (, b a)) :: (a in any) (b in any) = (, b a))");
  CHECK(top("function k(a, b) : (a, b) -> (b, a) :: a in any; b in any ; 1 $") ==
        "(function k (, a b) : (-> (, a b) (, b a)) :: (a in any) (b in any))\n(expr 1)");
  CHECK(top("function d(x) \"doubles x\" = 2 * x $") == "(function d x doc \"doubles x\" = (* 2 x))");
  CHECK(top("function d(x) : int -> int \"doc\" = 2 * x $") == "(function d x : (-> int int) doc \"doc\" = (* 2 x))");
  CHECK(top("function ap(g, x) : (c -> b, c) -> b :: (b in any; c in any) = g(x) $") ==
        "(function ap (, g x) : (-> (, (-> c b) c) b) :: (b in any) (c in any) = (call g x))");
  CHECK(top("datatype point(int, int) $") == "(datatype point (, int int))");
  CHECK(top("datatype box(a) :: (a in any) $") == "(datatype box a :: (a in any))");
  CHECK(top("datatype rev(a, b) :: (b in any; a in any) $") == "(datatype rev (, a b) :: (b in any) (a in any))");
  CHECK(top("datatype nb(a, [a]) :: a in number $") == "(datatype nb (, a [a]) :: (a in number))");
  CHECK(top("datatype p2(int, (float, bool)) $") == "(datatype p2 (, int (, float bool)))");
  CHECK(top("function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
            "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $") ==
        "(function qs a = (if (< (# a) 2) a (let ((= p (index a (/ (# a) 2))) "
        "(= l (each _ (in e a) (| (< e p)))) (= e (each _ (in e a) (| (== e p)))) "
        "(= g (each _ (in e a) (| (> e p)))) (= r (each (call qs v) (in v (seq l g))))) "
        "(++ (++ (index r 0) e) (index r 1)))))");
}

TEST_CASE("spans") {
  auto p = parse("  foo(1, 2) + 3 $\nx = 4;");
  REQUIRE(p->forms.size() == 2);
  CHECK(p->sm.slice(p->forms[0]->span) == "foo(1, 2) + 3");
  const Expr* sum = p->forms[0]->body;
  CHECK(p->sm.slice(sum->span) == "foo(1, 2) + 3");
  CHECK(p->sm.slice(sum->kids[0]->span) == "foo(1, 2)");
  CHECK(p->sm.slice(sum->kids[0]->kids[1]->span) == "1, 2");
  CHECK(p->sm.slice(p->forms[1]->span) == "x = 4");
  CHECK(p->sm.slice(p->forms[1]->pattern->span) == "x");

  auto r = parse("(1 + 2) * 3, (4) $ ((a), b), c = x $ function h(x) : ((int)) -> [int], int = x $");
  REQUIRE(r->forms.size() == 3);
  const Expr* tuple = r->forms[0]->body;
  CHECK(r->sm.slice(tuple->span) == "(1 + 2) * 3, (4)");
  CHECK(r->sm.slice(tuple->kids[0]->span) == "(1 + 2) * 3");
  CHECK(r->sm.slice(tuple->kids[0]->kids[0]->span) == "1 + 2");
  CHECK(r->sm.slice(r->forms[1]->pattern->span) == "((a), b), c");
  CHECK(r->sm.slice(r->forms[1]->pattern->left->span) == "(a), b");
  CHECK(r->sm.slice(r->forms[2]->signature->span) == "((int)) -> [int], int");
  CHECK(r->sm.slice(r->forms[2]->signature->args[1]->span) == "[int], int");
  CHECK(r->sm.slice(r->forms[2]->span) == "function h(x) : ((int)) -> [int], int = x");

  auto q = parse("function g(x) = {y : y in x | y > 0} at warp $");
  REQUIRE(q->forms.size() == 1);
  CHECK(q->sm.slice(q->forms[0]->name_span) == "g");
  CHECK(q->sm.slice(q->forms[0]->body->span) == "{y : y in x | y > 0} at warp");
  CHECK(q->sm.slice(q->forms[0]->body->gens[0].span) == "y in x");
}

TEST_CASE("REPL commands") {
  CHECK(top("load \"f.nesl\" $") == "(command load \"f.nesl\" (exp \"f.nesl\"))");
  CHECK(top("load \"dir/\" ++ name $") == "(command load \"dir/\" ++ name (exp (++ \"dir/\" name)))");
  CHECK(top("load $") == "(command load)");
  CHECK(top("set print_length 5 $") == "(command set print_length 5)");
  CHECK(top("SET Verbose OFF $") == "(command set verbose off)");
  CHECK(top("show status $") == "(command show status)");
  CHECK(top("exit $") == "(command exit)");
  CHECK(top("help $") == "(command help)");
  CHECK(top("? $") == "(command help)");
  CHECK(top("describe qs $") == "(command describe qs)");
  CHECK(top("apropos \"Scan\" $") == "(command apropos \"Scan\")");
  CHECK(top("set = 1 $") == "(command set = 1)");
  // Command words are ordinary names after the first token.
  CHECK(top("f(load, set) $") == "(expr (call f (, load set)))");
  CHECK(err1("get x $") == "1:1: GET is a CMU NESL command that is not supported by ndp");
  CHECK(err1("shell $") == "1:1: SHELL is a CMU NESL command that is not supported by ndp");
  CHECK(err1("load \"a\" ) $") == "1:10: Unexpected ) after the file name of LOAD");
}

TEST_CASE("type signatures (parse_signature)") {
  SourceManager sm;
  DiagnosticEngine diags;
  AstContext ctx;
  auto one = [&](std::string text) -> std::string {
    uint32_t f = sm.add("<sig>", std::move(text));
    const TopLevel* t = frontend::parse_signature(ctx, sm, f, diags);
    if (!t) return "error: " + (diags.all().empty() ? std::string("?") : diags.all().back().message);
    std::string s = show(t->signature);
    for (const ContextBind& b : t->context) s += " (" + b.var + " in " + b.cls + ")";
    return s;
  };
  CHECK(one("(a, a) -> a :: (a in number)") == "(-> (, a a) a) (a in number)");
  CHECK(one("[a] -> (a, [a], float)") == "(-> [a] (, a (, [a] float)))");
  CHECK(one("float -> float") == "(-> float float)");
  CHECK(one("(int, int, int) -> [int]") == "(-> (, int (, int int)) [int])");
  CHECK(one("([a], [(int, a)]) -> [a] :: (a in any)") == "(-> (, [a] [(, int a)]) [a]) (a in any)");
  CHECK(one("([char], int, stream) -> (([char], int), bool, [char])") ==
        "(-> (, [char] (, int stream)) (, (, [char] int) (, bool [char])))");
  CHECK(one("a -> b :: a in number; b in any") == "(-> a b) (a in number) (b in any)");
  CHECK(one("a -> box(a) :: (a in any)") == "(-> a (box a)) (a in any)");
  CHECK(one("(a, b) -> rev(b, a) :: (a in any; b in any)") == "(-> (, a b) (rev b a)) (a in any) (b in any)");
  CHECK(one("((b, b) -> b, b, [b]) -> ([b], b)") == "(-> (, (-> (, b b) b) (, b [b])) (, [b] b))");
  CHECK(one("a -> b, c") == "(-> a (, b c))");
  CHECK(one("int, int -> int").rfind("error: Not a function type.", 0) == 0);
  CHECK(one("int").rfind("error: Not a function type.", 0) == 0);
  CHECK(one("int -> int $") == "error: Unexpected $ after the type signature");
  CHECK(one("a -> a :: (a number)") == "error: Expected IN instead of number in a type context.");
}

TEST_CASE("every signature of lang/prims.def parses") {
  const char* sigs[] = {
#define NDP_PRIM(id, name, signature, ...) signature,
#include "lang/prims.def"
#undef NDP_PRIM
  };
  for (const char* text : sigs) {
    SourceManager sm;
    DiagnosticEngine diags;
    AstContext ctx;
    uint32_t f = sm.add("<prim>", text);
    const TopLevel* t = frontend::parse_signature(ctx, sm, f, diags);
    INFO(text);
    REQUIRE(t != nullptr);
    CHECK(diags.all().empty());
    CHECK(t->signature->kind == TypeExprKind::Fn);
    CHECK(t->signature->args.size() == 2);
    CHECK(sm.slice(t->span).size() == std::string_view(text).size());
  }
}

TEST_CASE("errors: messages and positions") {
  CHECK(err1("[1, 2 $") == "1:7: Expected a ] instead of $ to terminate a sequence.");
  CHECK(err1("if t then 1 $") == "1:13: Expected an ELSE instead of $ in an IF construct.");
  CHECK(err1("if t else 2 $") == "1:6: Expected a THEN instead of else in an IF construct.");
  CHECK(err1("let x = 1 ) $") == "1:11: Expected a ; or IN instead of ) after a binding of a LET construct.");
  CHECK(err1("let x = 1 $") == "1:11: Expected a ; or IN instead of $ after a binding of a LET construct.");
  CHECK(err1("1 ] $") == "1:3: Unexpected ]");
  CHECK(err1("] $") == "1:1: Unexpected ]");
  CHECK(err1("* 3 $") == "1:1: * is missing its left argument.");
  CHECK(err1("and t $") == "1:1: and is missing its left argument.");
  CHECK(err1("1 + $") == "1:3: + is missing its right argument.");
  CHECK(err1("1 $ 2") == "1:6: expected $ or ; to end the form");
  CHECK(err1("[] $") ==
        "1:4: Expected a type after [] instead of $ (an empty sequence needs its element "
        "type, as in [] int)");
  CHECK(err1("function f(a) = a $") == "1:10: The symbol F is a special symbol, it cannot be used as a variable.");
  CHECK(err1("datatype time(int) $") == "1:10: The symbol TIME is a special symbol, it cannot be used as a variable.");
  // In patterns the checker reports them (it has the binding context); the parser keeps names.
  CHECK(top("function g(t) = t $") == "(function g t = t)");
  CHECK(top("time = 3 $") == "(assign time 3)");
  CHECK(ex("let f = 1 in f") == "(let ((= f 1)) f)");
  CHECK(ex("{f : f in s}") == "(each f (in f s))");
  CHECK(ex("{t}") == "(each _ (in t _))");
  CHECK(err1("function z() = 1 $") ==
        "1:12: Unexpected ) in a pattern: () is not a pattern (a function takes one argument)");
  CHECK(err1("pair(1, 2) $") == "1:1: PAIR is a reserved word.  Use , instead.");
  CHECK(err1("let [a, b] = x in a $") == "1:5: square brackets cannot be used for pattern matching.");
  CHECK(err1("function f2(x, y) : int, int -> int = x + y $").rfind("1:21: Not a function type.", 0) == 0);
  CHECK(err1("function g(x) $") == "1:15: Expected = or : instead of $ in the definition of function G.");
  CHECK(err1("{x : x s} $") == "1:8: Expected IN instead of s in a generator of an apply-to-each.");
  CHECK(err1("{x : x in s $") == "1:13: Expected a } instead of $ to terminate an apply-to-each.");
  CHECK(err1("(1, 2 $") == "1:7: Expected a ) instead of $.");
  CHECK(err1("time 3 $") == "1:6: Expected a ( instead of 3 after TIME.");
  CHECK(err1("datatype d int $") == "1:12: Expected a ( instead of int after the name of datatype D.");
  CHECK(err1("a[0] = 5 $") == "1:6: Unexpected = (expected $ or ; to end the form)");
}

TEST_CASE("lexical errors") {
  CHECK(err1("1a $") == "1:1: malformed number '1a': a number cannot be followed directly by a letter or a '.'");
  CHECK(err1("3b2 $") == "1:1: malformed number '3b2': a number cannot be followed directly by a letter or a '.'");
  CHECK(err1("2.5.3 $") == "1:1: malformed number '2.5.3': a number cannot be followed directly by a letter or a '.'");
  CHECK(err1("1e+x $") == "1:1: malformed exponent in number '1e+x'");
  CHECK(err1("99999999999999999999 $") == "1:1: integer literal 99999999999999999999 does not fit in 64 bits");
  CHECK(err1("9223372036854775808 $") == "1:1: integer literal 9223372036854775808 does not fit in 64 bits");
  CHECK(err1("1e400 $") == "1:1: float literal 1e400 is too large for a float");
  CHECK(err1("1 + % never closed $") == "1:5: End of File reached inside of a comment.");
  CHECK(err1("\"abc $") == "1:1: Reached end-of-input while parsing a quoted string");
  CHECK(err1("!x $") == "1:1: '!' is CMU NESL syntax that ndp does not support");
  CHECK(err1("'x $") == "1:1: ''' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a & b $") == "1:3: '&' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a >> b $") == "1:3: '>>' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a := b $") == "1:3: ':=' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a &= b $") == "1:3: '&=' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a |= b $") == "1:3: '|=' is CMU NESL syntax that ndp does not support");
  CHECK(err1("a \\ b $") == "1:3: '\\' is allowed only inside a string literal");
  CHECK(err1("x~y $") == "1:2: unexpected character '~'");
  CHECK(err1(". $") == "1:1: unexpected character '.'");
  CHECK(errs("caf\xc3\xa9 = 1 $") == std::vector<std::string>{"1:4: unexpected non-ASCII characters '\xc3\xa9'"});
  CHECK(err1("x = \x01 $") == "1:5: unexpected character byte 0x01");
  // One lexical error gives one message, not a second one from the parser.
  CHECK(errs("1a + 2 $").size() == 1);
}

TEST_CASE("several errors in one buffer are all reported, good forms survive") {
  auto p = parse(
      "x = [1, 2 $\n"
      "y = 1 + 2 $\n"
      "if t then 1 $\n"
      "let a = 1; b = ) in a $ z = 3 ;\n"
      "  1a $\n"
      "{x : x in [1:3]} $\n"
      "function f(a) = a $");
  INFO(fmt::format("{}", fmt::join(p->errors(), "\n")));
  CHECK(p->errors() == std::vector<std::string>{
                           "1:11: Expected a ] instead of $ to terminate a sequence.",
                           "3:13: Expected an ELSE instead of $ in an IF construct.",
                           "4:16: Unexpected )",
                           "5:3: malformed number '1a': a number cannot be followed directly by a letter or a '.'",
                           "7:10: The symbol F is a special symbol, it cannot be used as a variable.",
                       });
  REQUIRE(p->forms.size() == 3);
  CHECK(show(p->forms[0]) == "(assign y (+ 1 2))");
  CHECK(show(p->forms[1]) == "(assign z 3)");
  CHECK(show(p->forms[2]) == "(expr (each x (in x (range 1 3))))");
}

TEST_CASE("deep nesting is an error, not a crash") {
  std::string deep(5000, '(');
  deep += "1";
  deep += std::string(5000, ')');
  auto e = errs(deep + " $ 2 $");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("nested too deeply") != std::string::npos);

  CHECK(errs(std::string(100000, '-') + "1 $").size() == 1);
  CHECK(errs(std::string(20000, '[') + " $").size() == 1);
  CHECK(errs(std::string(20000, '{') + " $").size() == 1);
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "if t then 1 else ";
  CHECK(errs(ifs + "2 $").size() == 1);
  CHECK(errs("x = " + std::string(20000, '(') + " $").size() == 1);
  CHECK(errs(std::string(20000, '(') + "a = 1 $").size() == 1);
  CHECK(errs("function f(x) : " + std::string(20000, '[') + "int -> int $").size() == 1);

  // Long flat chains are loops, not recursion.
  std::string tuple = "1";
  for (int i = 0; i < 50000; ++i) tuple += ", 1";
  CHECK(errs(tuple + " $").empty());
  std::string sum = "1";
  for (int i = 0; i < 50000; ++i) sum += " + 1 -> 1";
  CHECK(errs(sum + " $").empty());
  std::string seq = "[1";
  for (int i = 0; i < 50000; ++i) seq += ", 1";
  CHECK(errs(seq + "] $").empty());
  // Moderate nesting is fine.
  CHECK(ex(std::string(100, '(') + "1" + std::string(100, ')')) == "1");
}

TEST_CASE("garbage input never hangs or crashes") {
  const char* junk[] = {"",
                        "$",
                        ";;;",
                        ")",
                        "}}}",
                        "]]",
                        "{",
                        "[",
                        "(",
                        "let",
                        "let in",
                        "if",
                        "function",
                        "function $",
                        "datatype",
                        "datatype x(",
                        "{x : }",
                        "{ : x in s}",
                        "{x in s;}",
                        "[1:]",
                        "[:]",
                        "f(",
                        "a[",
                        "load (",
                        "x = ",
                        "= 1",
                        ", 1",
                        "time",
                        "`",
                        "\"",
                        "%",
                        "1 -> ",
                        "# $",
                        "{x : x in s} at",
                        "{x : x in s} at subwarp(",
                        "::",
                        "a -> b"};
  for (const char* j : junk) {
    auto p = parse(j);
    for (const TopLevel* t : p->forms) CHECK(t != nullptr);
  }
  CHECK(parse("")->forms.empty());
  CHECK(errs("").empty());
}

TEST_CASE("random token soup never crashes") {
  const char* pieces[] = {
      "(", ")", "[",  "]",           "{",     "}",  "let ",  "in ",      "if ",       "then ",     "else ", ",",
      ";", "$", ":",  "|",           "=",     "x ", "1 ",    "f ",       "function ", "datatype ", "->",    "<-",
      "-", "#", "::", "a in number", "\"s\"", "`c", "% c %", "at warp ", "[] ",       "time",      "load "};
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  for (int round = 0; round < 300; ++round) {
    std::string text;
    size_t n = next() % (round < 290 ? 60 : 30000);
    for (size_t i = 0; i < n; ++i) text += pieces[next() % std::size(pieces)];
    auto p = parse(text);
    for (const TopLevel* t : p->forms) CHECK(t != nullptr);
    (void)frontend::input_is_complete(text);
  }
}

TEST_CASE("input_is_complete") {
  using frontend::input_is_complete;
  CHECK(input_is_complete("1 + 2 $"));
  CHECK(input_is_complete("1 + 2;"));
  CHECK_FALSE(input_is_complete("1 + 2"));
  CHECK_FALSE(input_is_complete(""));
  CHECK_FALSE(input_is_complete("1 % comment $ %"));
  CHECK(input_is_complete("1 % comment $ % $"));
  CHECK_FALSE(input_is_complete("1 % unterminated $"));
  CHECK_FALSE(input_is_complete("\"a $"));
  CHECK(input_is_complete("\"a $\" $"));
  CHECK_FALSE(input_is_complete("`$"));
  CHECK_FALSE(input_is_complete("`;"));
  CHECK(input_is_complete("`; ;"));
  CHECK_FALSE(input_is_complete("let a = 1; b = 2"));
  CHECK_FALSE(input_is_complete("let a = 1;"));
  CHECK(input_is_complete("let a = 1; b = 2 in a + b;"));
  CHECK_FALSE(input_is_complete("{a + b : a in x; b in y"));
  CHECK(input_is_complete("{a + b : a in x; b in y};"));
  CHECK_FALSE(input_is_complete("(1;"));
  CHECK_FALSE(input_is_complete("[1;"));
  CHECK(input_is_complete("(1 $"));  // `$` always ends a form (the parser reports the error)
  CHECK_FALSE(input_is_complete("function f(x) : a -> a :: a in any; b in number"));
  CHECK(input_is_complete("function f(x) : a -> a :: a in any; b in number;"));
  CHECK(input_is_complete("function f(x) : a -> a :: a in any;"));
  CHECK(input_is_complete("exit;"));
}
