// The type checker: every typed echo and type error of language.md §2–§4 (checked from source
// text), the desugaring into Core IR, redefinition and library shadowing, and error locations.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/frontend.h"
#include "lang/core.h"

using namespace ndp;
using namespace ndp::lang;
using ndp::frontend::CheckedForm;

namespace {

// One checking session: source buffers, AST arenas and a Program that live as long as it.
struct Session {
  SourceManager sm;
  std::vector<std::unique_ptr<ast::AstContext>> asts;
  DiagnosticEngine diags;
  core::Program prog;
  frontend::Checker checker{prog, diags};

  // Checks every form of `src`; a syntax error fails the test.
  std::vector<std::optional<CheckedForm>> run(const std::string& src) {
    diags.clear();
    asts.push_back(std::make_unique<ast::AstContext>());
    uint32_t file = sm.add("<test>", src);
    std::vector<const ast::TopLevel*> forms = frontend::parse_program(*asts.back(), sm, file, diags);
    REQUIRE_MESSAGE(!diags.has_errors(), format_diagnostics(sm, diags.all()));
    std::vector<std::optional<CheckedForm>> out;
    for (const ast::TopLevel* f : forms) out.push_back(checker.check(*f));
    return out;
  }

  // What the REPL would print for the last form, types only: `NAME = fn : TYPE` for
  // definitions, `NAME : TYPE` for values, notes first; or the error messages with their
  // extra lines.
  std::string echo(const std::string& src) {
    auto forms = run(src);
    REQUIRE(!forms.empty());
    const auto& last = forms.back();
    if (!last) return errors();
    std::string s;
    for (const std::string& n : last->notes) s += n + "\n";
    if (last->kind == ast::TopKind::Function || last->kind == ast::TopKind::Datatype)
      return s + last->echo_name + " = fn : " + type_to_string(last->type, last->type_vars);
    return s + last->echo_name + " : " + type_to_string(last->type, last->type_vars);
  }

  std::string errors() const {
    std::string s;
    for (const Diagnostic& d : diags.all()) {
      if (d.severity != Severity::Error) continue;
      s += d.message + "\n";
      for (const std::string& e : d.extra) s += e + "\n";
    }
    return s;
  }

  const core::Global& global(const std::string& name) {
    auto id = checker.lookup(name);
    REQUIRE(id.has_value());
    return *prog.globals[*id];
  }
};

const char* kMismatch = ": inferred argument types don't match function specification\n";

// Every node of a Core tree, in preorder.
void walk(const core::Expr* e, std::vector<const core::Expr*>& out) {
  out.push_back(e);
  for (const core::Expr* a : e->args) walk(a, out);
}

std::vector<const core::Expr*> nodes(const core::Expr* e) {
  std::vector<const core::Expr*> out;
  walk(e, out);
  return out;
}

}  // namespace

TEST_CASE("check: definition echoes of language.md §3.9") {
  Session s;
  CHECK(s.echo("function k(x, y) = (y, x) $") == "k = fn : (a, b) -> (b, a) :: (a in any; b in any)");
  CHECK(s.echo("function m(x, y, z) = (x + z, y) $") == "m = fn : (b, a, b) -> (b, a) :: (a in any; b in number)");
  CHECK(s.echo("function k5(a, b) = {(x, b) : x in a} $") == "k5 = fn : ([a], b) -> [(a, b)] :: (a in any; b in any)");
  CHECK(s.echo("function k2((x, y), z) = (z, x, y) $") ==
        "k2 = fn : ((a, b), c) -> (c, a, b) :: (a in any; b in any; c in any)");
  CHECK(s.echo("function f10(x) = (x, [x], 1.5) $") == "f10 = fn : a -> (a, [a], float) :: (a in any)");
  CHECK(s.echo("function f12(a) = a[0] < a[1] $") == "f12 = fn : [a] -> bool :: (a in ordinal)");
  CHECK(s.echo("function f13(a,b,c,d,e,g) = (a,b,c,d,e,g) $") ==
        "f13 = fn : (a0, a1, a2, a3, a4, a5) -> (a0, a1, a2, a3, a4, a5) :: "
        "(a0 in any; a1 in any; a2 in any; a3 in any; a4 in any; a5 in any)");
  CHECK(s.echo("function lt3(a, b, c, d, e, g, h, i) = (a + 1, b + 1.0, [c], [[d]], (e, g), h and t, i) $") ==
        "lt3 = fn : (int, float, a, b, c, d, bool, e) -> (int, float, [a], [[b]], (c, d), bool, e) :: "
        "(a in any; b in any; c in any; d in any; e in any)");
  CHECK(s.echo("FUNCTION Foo(X) = X + 1 $") == "foo = fn : int -> int");
  CHECK(s.echo("function sq(x) = x*x $") == "sq = fn : a -> a :: (a in number)");
  CHECK(s.echo("sq $") == "it : a -> a :: (a in number)");
}

TEST_CASE("check: quicksort (§4.4)") {
  Session s;
  CHECK(s.echo("function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
               "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $") ==
        "qs = fn : [a] -> [a] :: (a in ordinal)");
  CHECK(s.echo("qs([3,1,4,1,5,9,2,6,5,3,5]) $") == "it : [int]");
  CHECK(s.echo("qs(\"hello world\") $") == "it : [char]");
  // The recursive call is a FnRef to qs itself, instantiated at the function's own variable.
  const core::Global& qs = s.global("qs");
  bool found = false;
  for (const core::Expr* e : nodes(qs.fn.body)) {
    if (e->kind != core::Kind::Map) continue;
    const core::Expr* body = e->args[e->gens.size()];
    if (body->kind == core::Kind::Call && body->args[0]->kind == core::Kind::FnRef) {
      CHECK(body->args[0]->id == *s.checker.lookup("qs"));
      REQUIRE(body->args[0]->type_args.size() == 1);
      CHECK(body->args[0]->type_args[0]->kind == TypeKind::Var);
      found = true;
    }
  }
  CHECK(found);
}

TEST_CASE("check: signatures, declarations and narrowing (§3.7)") {
  Session s;
  CHECK(s.echo("function f1(x) : int -> int = x $") == "f1 = fn : int -> int");
  CHECK(s.echo("function f2(x, y) : (int, int) -> int = x + y $") == "f2 = fn : (int, int) -> int");
  CHECK(s.echo("function f3(x) : [a] -> [a] :: (a in ordinal) = x $") == "f3 = fn : [a] -> [a] :: (a in ordinal)");
  CHECK(s.echo("f3(\"abc\") $") == "it : [char]");
  CHECK(s.echo("function ev(n) : int -> bool $") == "ev = fn : int -> bool");
  uint32_t ev_decl = *s.checker.lookup("ev");
  CHECK(s.global("ev").fn.body == nullptr);
  CHECK(s.echo("function od(n) = if n == 0 then f else ev(n-1) $") == "od = fn : int -> bool");
  CHECK(s.echo("function ev(n) = if n == 0 then t else od(n-1) $") == "ev = fn : int -> bool");
  CHECK(*s.checker.lookup("ev") == ev_decl);
  CHECK(s.global("ev").fn.body != nullptr);
  CHECK(s.echo("od(7) $") == "it : bool");
  CHECK(s.echo("function bad(x) : a -> a :: (a in any) = x + x $") == "bad = fn : a -> a :: (a in number)");
  // ndp rule: a type variable must be declared in the context.
  CHECK(s.echo("function id2(x) : a -> a = x $").find("No type definition for a.") != std::string::npos);
  CHECK_FALSE(s.checker.lookup("id2").has_value());
  CHECK(s.echo("function sig1(x) : int -> int = x + 1.5 $").find("for function + in expression x + 1.5") !=
        std::string::npos);
}

TEST_CASE("check: inference as the user sees it (§3.8)") {
  Session s;
  CHECK(s.echo("function h(x) = x $") == "h = fn : a -> a :: (a in any)");
  CHECK(s.echo("(h(1), h(1.0)) $") == "it : int, float");
  CHECK(s.echo("let g = h in (g(1), g(1.0)) $") ==
        std::string("for function g in expression g(1.0)") + kMismatch +
            "  Argument types: float\n  Function types: int\n");
  std::string pr = s.echo("function pr(x, n) = if n == 0 then 0 else pr([x], n - 1) $");
  CHECK(pr.find(std::string("for function pr in expression pr([x], n - 1)") + kMismatch) == 0);
  CHECK(pr.find("  Argument types: [a], int :: (a in any)\n") != std::string::npos);
  CHECK_FALSE(s.checker.lookup("pr").has_value());
  CHECK(s.echo("function g(x) = x + 1 $") == "g = fn : int -> int");
  CHECK(s.echo("function sq(x) = x*x $") == "sq = fn : a -> a :: (a in number)");
  CHECK(s.echo("g2 = sq $") == "g2 : a -> a :: (a in number)");
  CHECK(s.echo("(g2(2), g2(1.5)) $") == "it : int, float");
  // Functions as values (§3.5): in data, and called through a parameter.
  CHECK(s.echo("[sq, sq] $") == "it : [a -> a] :: (a in number)");
  CHECK(s.echo("(sq, 1) $") == "it : a -> a, int :: (a in number)");
  // Exactly CMU's echo (language.md §3.5), with the hidden variable of the functional parameter.
  CHECK(s.echo("function ap(g, x) = g(x) $") == "ap = fn : (c -> b, c) -> b :: (a in any; b in any; c in any)");
  CHECK(s.echo("ap(sq, 2.5) $") == "it : float");
  CHECK(s.echo("function w(x) = x(x) $").find("x is not a function type.") != std::string::npos);
}

TEST_CASE("check: classes (§3.6) and type errors with both types") {
  Session s;
  CHECK(s.echo("function k9(a, b) = (a + b, a and b) $") ==
        std::string("for function and in expression a and b") + kMismatch +
            "  Argument types: a, a :: (a in number)\n  Function types: a, a :: (a in logical)\n");
  CHECK(s.echo("1 < 2 < 3 $") == std::string("for function < in expression 1 < 2 < 3") + kMismatch +
                                     "  Argument types: bool, int\n  Function types: a, a :: (a in ordinal)\n");
  CHECK(s.echo("1 + 2.0 $") == std::string("for function + in expression 1 + 2.0") + kMismatch +
                                   "  Argument types: int, float\n  Function types: a, a :: (a in number)\n");
  CHECK(s.echo("t == f $").find("  Argument types: bool, bool\n") != std::string::npos);
  CHECK(s.echo("\"abc\" == \"abc\" $").find("  Argument types: [char], [char]\n") != std::string::npos);
  CHECK(s.echo("(1, 2) == (1, 2) $").find("for function ==") == 0);
  CHECK(s.echo("2 * 3.0 $").find("for function *") == 0);
  CHECK(s.echo("`a < `b $") == "it : bool");
  CHECK(s.echo("5 and 3 $") == "it : int");
  CHECK(s.echo("not(5) $") == "it : int");
  CHECK(s.echo("float(2) * 3.0 $") == "it : float");
  // extensions.md §1: i32 is number/ordinal/logical, f32 number/ordinal; no conversions.
  CHECK(s.echo("1i32 + 2i32 $") == "it : i32");
  CHECK(s.echo("5i32 and 3i32 $") == "it : i32");
  CHECK(s.echo("1.5f32 * 2.0f32 $") == "it : f32");
  CHECK(s.echo("1.5f32 < 2.0f32 $") == "it : bool");
  CHECK(s.echo("1.5f32 and 2.0f32 $").find("for function and") == 0);
  CHECK(s.echo("1i32 + 1 $").find("  Argument types: i32, int\n") != std::string::npos);
  CHECK(s.echo("i32(7) $") == "it : i32");
  CHECK(s.echo("f64(1.5f32) $") == "it : float");
}

TEST_CASE("check: precedence examples of §2.5 type-check") {
  Session s;
  CHECK(s.echo("1+2*3 $") == "it : int");
  CHECK(s.echo("1, 2 == 2 $") == "it : int, bool");
  CHECK(s.echo("t or f and f $") == "it : bool");
  CHECK(s.echo("\"ab\" || 4 ++ \"c\" $") == "it : [char]");
  CHECK(s.echo("#[[1,2],[3]][0] $") == "it : int");
  CHECK(s.echo("-[1,2][0] $") == "it : int");
  CHECK(s.echo("[1,2] ++ [3,4] -> [0] $") == "it : [int]");
  CHECK(s.echo("[0,0,0] <- [(1,5),(2,6)] -> [1] $") == "it : [int]");
  CHECK(s.echo("\"a\" ++ @1 $") == "it : [char]");
  CHECK(s.echo("if f then (1,2) else 2, 3 $") == "it : int, int");
  CHECK(s.echo("let x = 1 in x, 2 $") == "it : int, int");
  CHECK(s.echo("let x = 1; x = x + 1 in x $") == "it : int");
  CHECK(s.echo("2^3^2 $") == "it : int");
  CHECK(s.echo("sqrt 4.0 $") == "it : float");
  CHECK(s.echo("not t $") == "it : bool");
  CHECK(s.echo("time(1 + 2) $") == "it : int, float");
  CHECK(s.echo("[] (int, float) $") == "it : [(int, float)]");
  CHECK(s.echo("[[] int, [1]] $") == "it : [[int]]");
  CHECK(s.echo("[(1, 2), (3, 4)] $") == "it : [(int, int)]");
  CHECK(s.echo("[1, 2.0] $").find("the elements must all be of the same type") != std::string::npos);
  CHECK(s.echo("\"hello\"[1] $") == "it : char");
  CHECK(s.echo("[1:10:3] $") == "it : [int]");
  CHECK(s.echo("[1.0:3] $").find("for function iseq") == 0);
}

TEST_CASE("check: apply-to-each (§4.4)") {
  Session s;
  CHECK(s.echo("{a+b : a in [1,2,3]; b in [10,20,30]} $") == "it : [int]");
  s.run("a = [1,2,3] $ b = [4,5,6] $");
  CHECK(s.echo("{a+b : a; b} $") == "it : [int]");
  CHECK(s.echo("{x in [1,2,3,4] | x > 2} $") == "it : [int]");
  CHECK(s.echo("{x + 1 : (x, y) in [(1,2),(3,4)]} $") == "it : [int]");
  CHECK(s.echo("{a + b : (a, b) in [(1,2),(3,4)]; c in \"xy\" | c == `y} $") == "it : [int]");
  CHECK(s.echo("{x, y : x in [1,2]; y in \"ab\"} $") == "it : [(int, char)]");
  CHECK(s.echo("{[1:x] : x in [1,2,3]} $") == "it : [[int]]");
  CHECK(s.echo("{sum(x) : x in [[1,2],[3,4,5],[] int]} $") == "it : [int]");
  CHECK(s.echo("{i : i in [0:3]; i in [5:8]} $") ==
        "The variable: i is repeated in the pattern of a let binding, or an apply-to-each.\n");
  CHECK(s.echo("let (a, a) = (1, 2) in a $") ==
        "The variable: a is repeated in the pattern of a let binding, or an apply-to-each.\n");
  CHECK(s.echo("{x : x in 5} $").find("must be a sequence") != std::string::npos);
  CHECK(s.echo("{x : x in [1] | 1} $").find("must be of type BOOL") != std::string::npos);

  // Core shape: a filtered map with its body and filter, the bare generator `a` reading the
  // global a, and `at` carried through.
  auto forms = s.run("{a + 1 : a | a > 1} $ {x : x in [1, 2]} at warp $");
  REQUIRE(forms[0]);
  const core::Expr* m = forms[0]->top.body;
  REQUIRE(m->kind == core::Kind::Map);
  CHECK(m->gens.size() == 1);
  CHECK(m->has_filter);
  REQUIRE(m->args.size() == 3);
  CHECK(m->args[0]->kind == core::Kind::Global);
  CHECK(m->args[0]->id == *s.checker.lookup("a"));
  CHECK(m->args[2]->type == s.prog.types.bool_());
  CHECK(m->type == s.prog.types.seq(s.prog.types.int_()));
  REQUIRE(forms[1]);
  CHECK(forms[1]->top.body->level == ast::AtLevel::Warp);
}

TEST_CASE("check: let patterns must fit") {
  Session s;
  CHECK(s.echo("let (a, (b, c)) = (1, 2, 3) in a + b + c $") == "it : int");
  std::string e = s.echo("let ((a, b), c) = (1, 2, 3) in a $");
  CHECK(e.find("In the binding of a LET construct") == 0);
  CHECK(e.find("does not match the pattern on the left.") != std::string::npos);
}

TEST_CASE("check: names, globals and redefinition (§4.2)") {
  Session s;
  CHECK(s.echo("y = 10 $") == "y : int");
  uint32_t y = *s.checker.lookup("y");
  CHECK(s.echo("function usey(a) = a + y $") == "usey = fn : int -> int");
  CHECK(s.echo("y = 20 $") == "y : int");
  CHECK(*s.checker.lookup("y") == y);  // same type: same global, usey sees 20
  // usey's body reads y by id.
  bool reads_y = false;
  for (const core::Expr* e : nodes(s.global("usey").fn.body))
    reads_y |= e->kind == core::Kind::Global && e->id == y;
  CHECK(reads_y);

  CHECK(s.echo("function base(x) = x + 1 $") == "base = fn : int -> int");
  uint32_t base = *s.checker.lookup("base");
  CHECK(s.echo("function caller(x) = base(x) * 10 $") == "caller = fn : int -> int");
  CHECK(s.echo("function base(x) = x + 2 $") == "base = fn : int -> int");
  CHECK(*s.checker.lookup("base") == base);
  CHECK(s.echo("function base(x) = 1.5 $") ==
        "Redefining BASE with a new type.  Old calls will not be modified.\nbase = fn : a -> float :: (a in any)");
  CHECK(*s.checker.lookup("base") != base);
  CHECK(s.prog.globals[base]->fn.body != nullptr);  // old callers keep the old one

  CHECK(s.echo("5 $") == "it : int");
  uint32_t it = *s.checker.lookup("it");
  CHECK(s.echo("6 $") == "it : int");
  CHECK(*s.checker.lookup("it") == it);
  CHECK(s.echo("it + 1 $") == "it : int");
  CHECK(s.echo("2.5 $") == "it : float");  // no note for `it`

  CHECK(s.echo("x $") == "x is undefined.\n");
  CHECK(s.echo("y = 1.5 $") ==
        "Redefining Y with a new type.  Old calls will not be modified.\ny : float");
  CHECK(s.echo("(q, r) = (20 / 6, rem(20, 6)) $") == "(q, r) : int, int");
  auto forms = s.run("(a, b) = (1, 2.5) $");
  REQUIRE(forms[0]);
  CHECK(forms[0]->echo_name == "(a, b)");
  REQUIRE(forms[0]->assign_slots.size() == 2);
  CHECK(forms[0]->assign_slots[0].second == *s.checker.lookup("a"));
  CHECK(forms[0]->assign_slots[1].second == *s.checker.lookup("b"));
  CHECK(s.global("b").scheme.type == s.prog.types.float_());
  CHECK(s.echo("a, b = 3, 4 $") ==
        "Redefining B with a new type.  Old calls will not be modified.\n(a, b) : int, int");
  CHECK(s.echo("(a, (b, c)) = (1, 2, 3) $") == "(a, b, c) : int, int, int");
  CHECK(s.echo("((a, b), c) = ((1, 2), 3) $") == "((a, b), c) : (int, int), int");
}

TEST_CASE("check: an error leaves the environment unchanged and reports every error") {
  Session s;
  size_t globals = s.prog.globals.size();
  auto names = s.checker.names();
  CHECK(s.echo("function bad1(x) = (x + 1.0, undefined_a, undefined_b) $") ==
        "undefined_a is undefined.\nundefined_b is undefined.\n");
  CHECK(s.diags.error_count() == 2);
  CHECK(s.prog.globals.size() == globals);
  CHECK(s.checker.names() == names);
  CHECK(s.echo("(1 + t, 2 + f) $").find("for function +") == 0);
  CHECK(s.diags.error_count() == 2);
}

TEST_CASE("check: error locations") {
  Session s;
  s.run("  1 + zz $");
  REQUIRE(s.diags.error_count() == 1);
  const Diagnostic& d = s.diags.all()[0];
  CHECK(s.sm.slice(d.span) == "zz");
  s.run("(1,\n  3 < 4 < 5) $");
  REQUIRE(s.diags.error_count() == 1);
  CHECK(s.sm.slice(s.diags.all()[0].span) == "3 < 4 < 5");
  CHECK(s.sm.line_col(s.diags.all()[0].span).line == 2);
  s.run("if 1 then 2 else 3 $");
  REQUIRE(s.diags.error_count() == 1);
  CHECK(s.diags.all()[0].message.find("In the IF expression") == 0);
  CHECK(s.sm.slice(s.diags.all()[0].span) == "1");
  CHECK(s.echo("if t then 1 else 2.0 $").find("the two branches must be of the same type") != std::string::npos);
  CHECK(s.echo("1 2 $").find("1 is not a function type.") != std::string::npos);
  CHECK(s.echo("f(1) $").find("f is not a function type.") != std::string::npos);
}

TEST_CASE("check: datatypes (§3.4, §3.9)") {
  Session s;
  CHECK(s.echo("datatype point(int, int) $") == "point = fn : (int, int) -> point");
  CHECK(s.echo("function px(point(x, y)) = x $") == "px = fn : point -> int");
  CHECK(s.echo("{px(p) : p in [point(1, 2), point(3, 4)]} $") == "it : [int]");
  CHECK(s.echo("datatype box(a) :: (a in any) $") == "box = fn : a -> box(a) :: (a in any)");
  CHECK(s.echo("{box(i) : i in \"ab\"} $") == "it : [box(char)]");
  CHECK(s.echo("[box((1, 2.5))] $") == "it : [box((int, float))]");
  CHECK(s.echo("datatype rev(a, b) :: (b in any; a in any) $") == "rev = fn : (a, b) -> rev(b, a) :: (a in any; b in any)");
  CHECK(s.global("rev").data->params.size() == 2);
  CHECK(s.echo("rev(1, `c) $") == "it : rev(char, int)");
  CHECK(s.echo("datatype nb(a, [a]) :: (a in number) $") == "nb = fn : (a, [a]) -> nb(a) :: (a in number)");
  CHECK(s.echo("function mk(x) = nb(x, [x]) $") == "mk = fn : a -> nb(a) :: (a in number)");
  CHECK(s.echo("{mk(1.5) : i in [0:2]} $") == "it : [nb(float)]");
  CHECK(s.echo("datatype pair3(a, b, a) :: (a in number; b in any) $") ==
        "pair3 = fn : (b, a, b) -> pair3(b, a) :: (a in any; b in number)");
  CHECK(s.echo("datatype vect(float, float, float) $") == "vect = fn : (float, float, float) -> vect");
  CHECK(s.echo("datatype p2(int, (float, bool)) $") == "p2 = fn : (int, float, bool) -> p2");
  CHECK(s.echo("let point(u, v) = point(3, 4) in u + v $") == "it : int");
  CHECK(s.echo("point(u, v) = point(3, 4) $") == "point(u, v) : point");
  CHECK(s.echo("{x : point(x, y) in [point(1, 2)]} $") == "it : [int]");
  CHECK(s.echo("function bb(x) : box(int) -> int = let box(y) = x in y $") == "bb = fn : box(int) -> int");
  CHECK(s.echo("[] point $") == "it : [point]");
  CHECK(s.echo("nb(`a, \"b\") $").find("for function nb") == 0);
  CHECK(s.echo("datatype tree(int, [tree]) $").find("No type definition for tree.") == 0);
  CHECK_FALSE(s.checker.lookup("tree").has_value());
  CHECK(s.echo("point(1.5, 2) $").find("  Argument types: float, int\n") != std::string::npos);
  CHECK(s.echo("point(1, 2) == point(1, 2) $").find("for function ==") == 0);
  // An identical re-declaration (a reloaded file) keeps the datatype; a different one is new.
  uint32_t point = *s.checker.lookup("point");
  CHECK(s.echo("datatype point(int, int) $") == "point = fn : (int, int) -> point");
  CHECK(*s.checker.lookup("point") == point);
  CHECK(s.echo("px(point(1, 2)) $") == "it : int");
  CHECK(s.echo("datatype point(float, float) $") ==
        "Redefining POINT with a new type.  Old calls will not be modified.\npoint = fn : (float, float) -> point");
  CHECK(s.echo("px(point(1.0, 2.0)) $").find("for function px") == 0);

  // Core: construction is a Con node; the constructor's field type is over the params.
  auto forms = s.run("box(1) $");
  REQUIRE(forms[0]);
  CHECK(forms[0]->top.body->kind == core::Kind::Con);
  CHECK(forms[0]->top.body->data == s.global("box").data);
}

TEST_CASE("check: primitives desugar to Prim nodes with exactly their arity") {
  Session s;
  auto forms = s.run("p = (3, 4) $ rem(p) $ rem(7, 2) $ [2:9:3] $");
  REQUIRE(forms[1]);
  // rem(p): a Let binding the tuple to two slots, then Prim rem on the two locals.
  const core::Expr* let = forms[1]->top.body;
  REQUIRE(let->kind == core::Kind::Let);
  CHECK(let->pattern->kind == core::PatternKind::Tuple);
  const core::Expr* prim = let->args[1];
  REQUIRE(prim->kind == core::Kind::Prim);
  CHECK(prim->prim == core::PrimId::Rem);
  REQUIRE(prim->args.size() == 2);
  CHECK(prim->args[0]->kind == core::Kind::Local);
  CHECK(forms[1]->top.num_slots >= 2);
  REQUIRE(forms[2]);
  CHECK(forms[2]->top.body->kind == core::Kind::Prim);
  CHECK(forms[2]->top.body->args.size() == 2);
  // [s:e:d] is iseq(s, d, e).
  REQUIRE(forms[3]);
  const core::Expr* r = forms[3]->top.body;
  REQUIRE(r->kind == core::Kind::Prim);
  CHECK(r->prim == core::PrimId::Iseq);
  CHECK(r->args[0]->lit.as_int() == 2);
  CHECK(r->args[1]->lit.as_int() == 3);
  CHECK(r->args[2]->lit.as_int() == 9);

  // Operators always use the library primitive, even when the user shadows the name.
  s.run("function negate(x) = x $");
  auto neg = s.run("-(1.5) $");
  REQUIRE(neg[0]);
  CHECK(neg[0]->top.body->kind == core::Kind::Prim);
  CHECK(neg[0]->top.body->prim == core::PrimId::Negate);
  CHECK(neg[0]->top.body->type_args[0] == s.prog.types.float_());

  // A primitive used as a value is a FnRef to its library global.
  auto val = s.run("g = sum $ g([1, 2]) $ function ap(h, x) = h(x) $ ap(max_val, [1.5]) $");
  REQUIRE(val[0]);
  CHECK(val[0]->top.body->kind == core::Kind::Let);
  const core::Expr* ref = val[0]->top.body->args[0];
  CHECK(ref->kind == core::Kind::FnRef);
  CHECK(s.prog.globals[ref->id]->kind == core::Global::Kind::Prim);
  CHECK(s.prog.globals[ref->id]->prim == core::PrimId::Sum);
  REQUIRE(val[1]);
  CHECK(type_to_string(val[1]->type, val[1]->type_vars) == "int");
  REQUIRE(val[3]);
  CHECK(type_to_string(val[3]->type, val[3]->type_vars) == "float");
  CHECK(s.echo("function ap2(g, x) = g(x) $").find("ap2 = fn : (") == 0);
}

TEST_CASE("check: Core types inside a polymorphic function use its scheme variables") {
  Session s;
  s.run("function dup(x) = let y = x in (y, [y]) $");
  const core::Global& g = s.global("dup");
  REQUIRE(g.scheme.vars.size() == 1);
  const Type* a = s.prog.types.var(0, TypeClass::Any);
  CHECK(g.scheme.type == s.prog.types.fn(a, s.prog.types.pair(a, s.prog.types.seq(a))));
  CHECK(g.fn.param->type == a);
  for (const core::Expr* e : nodes(g.fn.body)) CHECK(e->type != nullptr);
  CHECK(g.fn.num_slots == 2);
  CHECK(g.fn.body->kind == core::Kind::Let);
  CHECK(g.fn.body->pattern->type == a);
}

TEST_CASE("check: library mode and shadowing") {
  Session s;
  s.checker.set_library_mode(true);
  s.run("function twice(x) = x + x $ function use_twice(x) = twice(x) $");
  s.checker.set_library_mode(false);
  uint32_t lib = *s.checker.lookup("twice");
  CHECK(s.prog.globals[lib]->library);
  // Same type: still a new global, silently; library code keeps the library one.
  CHECK(s.echo("function twice(x) = x + x $") == "twice = fn : a -> a :: (a in number)");
  uint32_t user = *s.checker.lookup("twice");
  CHECK(user != lib);
  CHECK_FALSE(s.prog.globals[user]->library);
  CHECK(s.echo("function twice(x) = x + x $") == "twice = fn : a -> a :: (a in number)");
  CHECK(*s.checker.lookup("twice") == user);
  // Shadowing a primitive with a new type prints the note.
  CHECK(s.echo("function sum(x) = 0 $") ==
        "Redefining SUM with a new type.  Old calls will not be modified.\nsum = fn : a -> int :: (a in any)");
}

TEST_CASE("check: commands and load") {
  Session s;
  auto forms = s.run("load \"prog\" $ set print_length 5 $");
  REQUIRE(forms[0]);
  CHECK(forms[0]->kind == ast::TopKind::Command);
  REQUIRE(forms[0]->top.body);
  CHECK(forms[0]->top.body->kind == core::Kind::Lit);
  REQUIRE(forms[1]);
  CHECK(forms[1]->kind == ast::TopKind::Command);
  CHECK(forms[1]->top.body == nullptr);
  CHECK(s.echo("load 5 $").find("Bad type for load, expecting a character string.") == 0);
}

TEST_CASE("check: core dump") {
  Session s;
  auto forms = s.run("function inc(x) = x + 1 $ {inc(i) : i in [1, 2] | i > 1} $");
  REQUIRE(forms[1]);
  std::string fn = core::dump_function(s.prog, s.global("inc").fn);
  CHECK(fn.find("(function inc#") == 0);
  CHECK(fn.find("(prim + [int] : int") != std::string::npos);
  std::string ex = core::dump_expr(s.prog, forms[1]->top.body);
  CHECK(ex.find("(map : [int]") == 0);
  CHECK(ex.find("filter") != std::string::npos);
  CHECK(ex.find("(fnref inc#") != std::string::npos);
}
