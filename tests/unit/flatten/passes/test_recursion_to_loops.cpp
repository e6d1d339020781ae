// recursion_to_loops: recursion after merge_calls becomes one while loop over recursion levels,
// where the shape fits.
#include <doctest/doctest.h>

#include <string>

#include "flatten/passes/merge_calls.h"
#include "flatten/passes/recursion_to_loops.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// merge_calls, then the pass under test; the program printed.
std::string after_passes(Flattened& f) {
  f.flat = flatten::recursion_to_loops(flatten::merge_calls(std::move(f.flat)));
  return flatten::print_program(f.flat);
}

}  // namespace

TEST_CASE("recursion_to_loops: quicksort and fib run as one loop over recursion levels") {
  Flattened q(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  std::string qt = after_passes(q);
  CHECK(occurrences(qt, " = while(") == 1);
  CHECK(occurrences(qt, "call qs") == 1);  // only main's call remains
  Flattened f("function fib(n) = if n < 2 then n else fib(n-1) + fib(n-2) $ {fib(i) : i in [0:25]} $");
  std::string ft = after_passes(f);
  CHECK(occurrences(ft, " = while(") == 1);
  CHECK(occurrences(ft, "call fib") == 1);
}

TEST_CASE("recursion_to_loops keeps host recursion where the shape does not fit") {
  // Two self-calls that depend on each other cannot be merged into one per level.
  Flattened f("function g(n) = if n < 1 then 0 else g(g(n - 1) - 1) $ g(3) $");
  CHECK(occurrences(after_passes(f), " = while(") == 0);
}
