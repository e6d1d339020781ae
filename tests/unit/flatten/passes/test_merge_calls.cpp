// merge_calls: a function's independent recursive calls become one call on concatenated
// arguments, unless a result feeds the next call or a call can run an effect.
#include <doctest/doctest.h>

#include <string>

#include "flatten/passes/merge_calls.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("merge_calls: fib's two recursive calls become one call on concatenated arguments") {
  Flattened f("function fib(n) = if n < 2 then n else fib(n-1) + fib(n-2) $ {fib(i) : i in [0:25]} $");
  CHECK(f.count("call fib") == 3);  // main + two recursive
  f.flat = flatten::merge_calls(std::move(f.flat));
  std::string text = flatten::print_program(f.flat);
  CHECK(occurrences(text, "call fib") == 2);
  CHECK(occurrences(text, "concat(") == 1);
  CHECK(occurrences(text, "slice(") == 2);
}

TEST_CASE("merge_calls leaves a call alone when its result feeds the next call") {
  Flattened f("function g(n) = if n < 1 then 0 else g(g(n - 1) - 1) $ g(3) $");
  f.flat = flatten::merge_calls(std::move(f.flat));
  CHECK(occurrences(flatten::print_program(f.flat), "concat(") == 0);
}

TEST_CASE("merge_calls keeps calls that can run an effect in order") {
  Flattened f("function d(s) = let ok = rand_seed(s) in {rand(10) : i in [0:3]} $ (d(1), d(1)) $");
  f.flat = flatten::merge_calls(std::move(f.flat));
  CHECK(occurrences(flatten::print_program(f.flat), "concat(") == 0);
  Flattened g("function p(s) = s + 1 $ (p(1), p(2)) $");
  g.flat = flatten::merge_calls(std::move(g.flat));
  CHECK(occurrences(flatten::print_program(g.flat), "concat(") == 1);
}
