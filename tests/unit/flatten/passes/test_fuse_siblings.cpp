// fuse_siblings: kernels that read the same inputs become one kernel, where no input of the
// later one is computed after the earlier one.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "flatten/passes/cse.h"
#include "flatten/passes/fuse_elementwise.h"
#include "flatten/passes/fuse_siblings.h"
#include "flatten/passes/ir_walk.h"
#include "flatten/passes/merge_calls.h"
#include "flatten/passes/recursion_to_loops.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The number of outputs of every Kernel statement of a program, in walk order.
std::vector<size_t> kernel_outputs(const flatten::Program& p) {
  std::vector<size_t> out;
  std::function<void(const flatten::Block&)> walk = [&](const flatten::Block& b) {
    for (const flatten::Stmt& s : b.stmts) {
      if (s.op == flatten::Op::Kernel) out.push_back(s.outs.size());
      flatten::for_each_sub_block(s, walk);
    }
  };
  for (const flatten::Function& fn : p.functions) walk(fn.body);
  return out;
}

}  // namespace

TEST_CASE("fuse_siblings: quicksort's three comparisons with the pivot become one kernel") {
  Flattened q(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  q.flat = flatten::fuse_elementwise(flatten::recursion_to_loops(flatten::merge_calls(flatten::cse(std::move(q.flat)))));
  std::string before = flatten::print_program(q.flat);
  size_t kernels_before = occurrences(before, "= kernel(");
  q.flat = flatten::fuse_siblings(std::move(q.flat));
  CHECK(flatten::verify(q.flat).empty());
  std::string after = flatten::print_program(q.flat);
  CHECK(occurrences(after, "= kernel(") == kernels_before - 2);
  // The merged kernel reads the elements and the replicated pivot once, and has all six
  // results (three flags, three counts as ints).
  size_t at = after.find("= <(%0, %1)");
  REQUIRE(at != std::string::npos);
  CHECK(after.find("= ==(%0, %1)", at) != std::string::npos);
  CHECK(after.find("= >(%0, %1)", at) != std::string::npos);
  std::vector<size_t> outs = kernel_outputs(q.flat);
  CHECK(std::find(outs.begin(), outs.end(), 6) != outs.end());
}

TEST_CASE("fuse_siblings leaves a kernel whose input is computed after the earlier kernel") {
  // After cse both kernels read the same elements, but the second also reads s, which needs
  // the first kernel's results: it cannot move before it.
  Flattened f("function h(x) = let s = sum({v : v in x | v * 3 > 1}) in {v * 2 + s : v in x} $ h([1, -2, 3]) $");
  f.flat = flatten::fuse_elementwise(flatten::cse(std::move(f.flat)));
  std::string before = flatten::print_program(f.flat);
  REQUIRE(occurrences(before, "= kernel(") == 2);
  size_t first = before.find("= kernel(");
  REQUIRE(before.find("= kernel(", first + 1) != std::string::npos);
  f.flat = flatten::fuse_siblings(std::move(f.flat));
  CHECK(flatten::verify(f.flat).empty());
  std::string after = flatten::print_program(f.flat);
  CHECK(after == before);  // nothing merged, nothing moved
}
