// inline_calls: small functions that call nothing are copied into their callers (and the copies'
// callers in turn), so that fusion spans them; and vectorise's conditionals as selects (Note
// [Conditionals as selects]), which make the inlined code one kernel. Results are checked where
// programs run (tests/programs/language/fused_math.ndp on every backend).
#include <doctest/doctest.h>

#include <string>

#include "flatten/passes/inline_calls.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("inline_calls: leaf functions are inlined, then the functions that called only them") {
  // cnd calls myabs (a leaf); price calls cnd twice: after inlining, one function is left and
  // the whole formula is one kernel.
  Flattened f(
      "function myabs(v) = select(v < 0.0, 0.0 - v, v) $"
      "function cnd(d) = let c = exp(0.0 - d * d) * myabs(d) in if d > 0.0 then 1.0 - c else c $"
      "function price(s, x) = s * cnd(ln(s / x)) - x * cnd(ln(x / s)) $"
      "{price(s, x) : s in [1.0, 2.0]; x in [3.0, 4.0]} $",
      true);
  CHECK(f.count("function ") == 1);  // the entry only: the callees are inlined and dropped
  CHECK(f.count("= call ") == 0);
  CHECK(f.count("= kernel(") == 1);
  CHECK(f.count(" = ln(") == 2);
  CHECK(f.count(" = exp(") == 2);
  CHECK(f.count(" = select(") == 4);  // myabs twice, the conditional twice
  CHECK(f.count("merge(") == 0);
}

TEST_CASE("inline_calls: recursive functions and large ones stay calls") {
  Flattened rec("function fact(n) = if n <= 1 then 1 else n * fact(n - 1) $ {fact(n) : n in [3, 4]} $", true);
  CHECK(rec.count("function fact") == 1);
  // A function of more than kInlineStatements statements: a long chain of lets.
  std::string body = "x";
  for (size_t i = 0; i < flatten::kInlineStatements; ++i) body = "(" + body + " * 2 + 1)";
  Flattened big("function big(x) = " + body + " $ function two(y) = big(y) + big(y + 1) $ {two(y) : y in [1, 2]} $", true);
  CHECK(big.count("function big") == 1);
  CHECK(big.count("= call big") >= 1);
}

TEST_CASE("vectorise: an if of small formulas that cannot fail is a select; others branch") {
  Flattened sel("function fa(d) = if d > 0.0 then 1.0 - d * 2.0 else d $ {fa(d) : d in [1.0, -1.0]} $");
  CHECK(sel.count("prim select(") == 1);
  CHECK(sel.count("merge(") == 0);
  // A branch that can fail (integer division) keeps the packed branches: only the instances
  // that take it divide.
  Flattened div("function g(x) = if x == 0 then 0 else 100 / x $ {g(x) : x in [0, 5]} $");
  CHECK(div.count("prim select(") == 0);
  CHECK(div.count("merge(") == 1);
  // So does a branch that builds a sequence.
  Flattened seq("function h(x) = if x > 0 then [x] else [] int $ {h(x) : x in [0, 5]} $");
  CHECK(seq.count("prim select(") == 0);
}
