// cse: equal pure statements computed once; effects and calls kept apart.
#include <doctest/doctest.h>

#include <string>

#include "flatten/passes/cse.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("cse: three filters over one sequence replicate the pivot once") {
  Flattened f("let a = [3, 1, 2]; p = 2 in ({e in a | e < p}, {e in a | e == p}, {e in a | e > p}) $");
  CHECK(f.count("= replicate(lit") == 3);
  f.flat = flatten::cse(std::move(f.flat));
  std::string text = flatten::print_program(f.flat);
  CHECK(occurrences(text, "= replicate(lit") == 1);
  CHECK(flatten::verify(f.flat).empty());
}

TEST_CASE("cse keeps effects and calls apart") {
  Flattened f("function g(x) = x + 1 $ (rand(10), rand(10), g(1), g(1)) $");
  f.flat = flatten::cse(std::move(f.flat));
  std::string text = flatten::print_program(f.flat);
  CHECK(occurrences(text, "prim rand") == 2);
  CHECK(occurrences(text, "call g") == 2);
}

TEST_CASE("cse: the elements of a nest are the nested vector (Note [Elements of a nest])") {
  // The cross products of quickhull's hsplit: a map nested by the points' lengths, then read
  // by a filter through elements(nest(...)).
  Flattened f(
      "function h(ps) = let c = {x * y : (x, y) in ps} in {p in ps; d in c | d > 0.0} $ "
      "{h(ps) : ps in [[(1.0, 2.0), (-1.0, 3.0)], [(2.0, 2.0)]]} $");
  const size_t nests = f.count("= nest(");
  REQUIRE(nests >= 1);
  const size_t before = f.count("= elements(");
  f.flat = flatten::cse(std::move(f.flat));
  CHECK(flatten::verify(f.flat).empty());
  std::string text = flatten::print_program(f.flat);
  CHECK(occurrences(text, "= elements(") < before);
  // The filter's comparison now reads the map's result itself, so fusion can join them.
  Flattened fused(
      "function h(ps) = let c = {x * y : (x, y) in ps} in {p in ps; d in c | d > 0.0} $ "
      "{h(ps) : ps in [[(1.0, 2.0), (-1.0, 3.0)], [(2.0, 2.0)]]} $",
      /*all_passes=*/true);
  CHECK(fused.count("prim *(") == 0);
  CHECK(fused.count("prim >(") == 0);
  CHECK(fused.count("= kernel(") == 1);
}

TEST_CASE("cse: a projection of a tuple in scope is its component (Note [Components of a tuple])") {
  // An inlined function of a pair, as the radix benchmark's min(block, #keys - b * block).
  const char* program =
      "function lo(a, b) = if a < b then a else b $ "
      "function capped(xs, m) = {lo(m, x * 2 - 1) : x in xs} $ capped([1, 5, 9], 6) $";
  Flattened f(program, /*all_passes=*/true);
  CHECK(f.count("= first(") == 0);
  CHECK(f.count("= second(") == 0);
  // So the map and the inlined body are one kernel.
  CHECK(f.count("= kernel(") == 1);
  CHECK(flatten::verify(f.flat).empty());
}
