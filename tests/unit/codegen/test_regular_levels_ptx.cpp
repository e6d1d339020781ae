// The kernels of regular levels (codegen/regular_levels_ptx.h, Note [Regular levels] in
// flatten/flat_ir.h): one level over the array, and the levels in a block's shared memory; PTX
// that ptxas assembles.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/regular_levels_ptx.h"
#include "tests/unit/codegen/ptxas.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using ndp::test::flat_ir::Flattened;
using ndp::test::check_assembles;
using ndp::test::flat_ir::occurrences;

namespace {

const flatten::RegularLevels* plan_in(const flatten::Block& b) {
  for (const flatten::Stmt& s : b.stmts)
    if (s.loop && s.loop->regular) return &*s.loop->regular;
  return nullptr;
}

}  // namespace

TEST_CASE("regular levels: Batcher's min and max as one level and as the levels in a block") {
  for (const char* type : {"int", "float", "char"}) {
    const std::string arg = std::string(type) == "int" ? "[1, 4, 3, 2]" : std::string(type) == "float" ? "[1.0, 4.0]" : "\"ab\"";
    Flattened f("function bm(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; "
                "hi = {select(x > y, x, y) : x in h[0]; y in h[1]} in flatten({bm(c) : c in [lo, hi]}) $ bm(" + arg + ") $",
                true);
    const flatten::RegularLevels* r = nullptr;
    for (const flatten::Function& fn : f.flat.functions)
      if (!r) r = plan_in(fn.body);
    REQUIRE_MESSAGE(r != nullptr, type);
    const std::string level = codegen::compile_regular_levels_ptx(*r, false);
    const std::string blocks = codegen::compile_regular_levels_ptx(*r, true);
    CHECK(occurrences(level, ".entry ndp_kernel") == 1);
    CHECK(occurrences(level, "bar.sync") == 0);
    CHECK(occurrences(blocks, "bar.sync") == 2);  // after the copy in, and after each level
    CHECK(occurrences(blocks, "st.shared") >= 2);
    check_assembles(level);
    check_assembles(blocks);
  }
}

TEST_CASE("regular ascents: Batcher's sort, its permutation and the levels in a block") {
  Flattened f("function bm(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); "
              "lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; hi = {select(x > y, x, y) : x in h[0]; y in h[1]} "
              "in flatten({bm(c) : c in [lo, hi]}) $ "
              "function bs(a) = if #a < 2 then a else let s = {bs(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])} "
              "in bm(s[0] ++ prim_reverse(s[1])) $ bs([3, 1, 4, 2]) $",
              true);
  const flatten::RegularLevels* r = nullptr;
  for (const flatten::Function& fn : f.flat.functions)
    if (const flatten::RegularLevels* p = plan_in(fn.body); p && p->callee) r = p;
  REQUIRE(r != nullptr);
  const std::string permute = codegen::compile_regular_levels_ptx(*r, false);
  const std::string blocks = codegen::compile_regular_levels_ptx(*r, true);
  CHECK(occurrences(permute, "bar.sync") == 0);
  CHECK(occurrences(blocks, "bar.sync") == 3);  // after the copy in, the permutation, each merge level
  check_assembles(permute);
  check_assembles(blocks);
}

TEST_CASE("regular levels: a map that is no such map is refused") {
  Flattened f("function bm(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; "
              "hi = {select(x > y, x, y) : x in h[0]; y in h[1]} in flatten({bm(c) : c in [lo, hi]}) $ bm([1, 2]) $",
              true);
  const flatten::RegularLevels* r = nullptr;
  for (const flatten::Function& fn : f.flat.functions)
    if (!r) r = plan_in(fn.body);
  REQUIRE(r != nullptr);
  flatten::RegularLevels past = *r;
  past.input_parts = {0, 2};
  CHECK_THROWS_AS(codegen::compile_regular_levels_ptx(past, false), std::runtime_error);
  flatten::RegularLevels childless = *r;
  childless.child_outputs.clear();
  CHECK_THROWS_AS(codegen::compile_regular_levels_ptx(childless, true), std::runtime_error);
  flatten::RegularLevels twice = *r;  // an ascent taking child 0 twice
  twice.callee = std::make_shared<const flatten::RegularLevels>(*r);
  twice.map = nullptr;
  twice.pieces = {{0, false}, {0, true}};
  CHECK_THROWS_AS(codegen::compile_regular_levels_ptx(twice, true), std::runtime_error);
}
