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
std::vector<size_t> kernel_outputs(const flat::Program& p) {
  std::vector<size_t> out;
  std::function<void(const flat::Block&)> walk = [&](const flat::Block& b) {
    for (const flat::Stmt& s : b.stmts) {
      if (s.op == flat::Op::Kernel) out.push_back(s.outs.size());
      flat::for_each_sub_block(s, walk);
    }
  };
  for (const flat::Function& fn : p.functions) walk(fn.body);
  return out;
}

}  // namespace

TEST_CASE("fuse_siblings: quicksort's three comparisons with the pivot become one kernel") {
  Flattened q(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  q.flat = flat::fuse_elementwise(flat::recursion_to_loops(flat::merge_calls(flat::cse(std::move(q.flat)))));
  std::string before = flat::print_program(q.flat);
  size_t kernels_before = occurrences(before, "= kernel(");
  q.flat = flat::fuse_siblings(std::move(q.flat));
  CHECK(flat::verify(q.flat).empty());
  std::string after = flat::print_program(q.flat);
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
  f.flat = flat::fuse_elementwise(flat::cse(std::move(f.flat)));
  std::string before = flat::print_program(f.flat);
  REQUIRE(occurrences(before, "= kernel(") == 2);
  size_t first = before.find("= kernel(");
  REQUIRE(before.find("= kernel(", first + 1) != std::string::npos);
  f.flat = flat::fuse_siblings(std::move(f.flat));
  CHECK(flat::verify(f.flat).empty());
  std::string after = flat::print_program(f.flat);
  CHECK(after == before);  // nothing merged, nothing moved
}
