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
