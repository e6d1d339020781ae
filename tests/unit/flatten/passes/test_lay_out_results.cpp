// lay_out_results (Note [Results laid out before the calls] in flatten/flat_ir.h): which
// recursion loops get a layout and what it places, after the whole pipeline.
#include <doctest/doctest.h>

#include <string>

#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

constexpr const char* kLayout = "(results laid out before the calls: ";

/// The layout line of the program's one recursion loop, from its pieces on; "" where none.
std::string layout_of(const std::string& src) {
  Flattened f(src, true);
  const size_t at = f.text.find(kLayout);
  if (at == std::string::npos) return "";
  const size_t from = f.text.find("; else ", at);
  return f.text.substr(from + 7, f.text.find(" by ", from) - from - 7);
}

}  // namespace

TEST_CASE("lay_out_results: quicksort's children and its equal part, in the combine's order") {
  const std::string qsort =
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $";
  const std::string laid = layout_of(qsort);
  CHECK(laid.starts_with("child 0, "));
  CHECK(laid.ends_with(", child 1"));
  // Descending, with equal computed only where the combine reads it (it runs early).
  CHECK(layout_of("function qd(a) = if #a < 2 then a else let p = a[#a/2]; "
                  "r = {qd(v) : v in [{e in a | e < p}, {e in a | e > p}]} in r[1] ++ {e in a | e == p} ++ r[0] $ qd([3, 1]) $")
            .starts_with("child 1, "));
  // The base case second: its result is computed in the finish, before the merge.
  CHECK(layout_of("function qe(a) = if #a >= 2 then let h = partition(a, [#a / 2, #a - #a / 2]); r = {qe(v) : v in h} in r[1] ++ r[0] else a $ qe([3, 1]) $") ==
        "child 1, child 0");
}

TEST_CASE("lay_out_results leaves the loops whose combine does more than concatenate") {
  // A flatten of the children's results (its ascent copies nothing), work on a child's
  // result, a child twice, a child left out, an effect in the loop, results of nested sequences.
  CHECK(layout_of("function fl(a) = if #a < 3 then a else flatten({fl(c) : c in partition(a, [1, #a - 1])}) $ fl([3, 1, 2]) $")
            .empty());
  CHECK(layout_of("function a(s) = if #s < 2 then s else let r = {a(v) : v in partition(s, [#s / 2, #s - #s / 2])} in r[0] ++ {x + 1 : x in r[1]} $ a([1, 2]) $")
            .empty());
  CHECK(layout_of("function b(s) = if #s < 2 then s else let r = {b(v) : v in partition(s, [#s / 2, #s - #s / 2])} in r[0] ++ r[0] $ b([1, 2]) $").empty());
  CHECK(layout_of("function c(s) = if #s < 2 then s else let r = {c(v) : v in partition(s, [#s / 2, #s - #s / 2])} in r[1] $ c([1, 2]) $").empty());
  CHECK(layout_of("function d(s) = if #s < 2 then s else let u = print_string(\"x\"); r = {d(v) : v in partition(s, [#s / 2, #s - #s / 2])} "
                  "in r[0] ++ r[1] $ d([1, 2]) $")
            .empty());
  CHECK(layout_of("function e(s) = if #s < 2 then {[x] : x in s} else let r = {e(v) : v in partition(s, [#s / 2, #s - #s / 2])} in r[0] ++ r[1] $ e([1, 2]) $")
            .empty());
  // Still laid out: what the checks at run time judge (a result shorter than its argument).
  CHECK(layout_of("function g(s) = if #s < 2 then [] int else let r = {g(v) : v in partition(s, [#s / 2, #s - #s / 2])} in r[0] ++ r[1] $ g([1, 2]) $") ==
        "child 0, child 1");
}
