// The PTX of map kernels at every lanes count the dispatch may choose (Note [Map kernels]):
// the folds spread over the lanes and combined by shuffles, across warps through shared
// memory; each assembled by ptxas where it is installed.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "codegen/kernel_ptx.h"
#include "tests/unit/codegen/ptxas.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using ndp::test::flat_ir::Flattened;
using ndp::test::flat_ir::occurrences;

namespace {

const flatten::KernelBody* map_kernel_of(const flatten::Program& p) {
  for (const flatten::Function& f : p.functions)
    for (const flatten::Stmt& s : f.body.stmts)
      if (s.op == flatten::Op::MapKernel) return s.kernel.get();
  return nullptr;
}

}  // namespace

TEST_CASE("map kernels: PTX at every lanes count, folds combined across the lanes, assembles with ptxas") {
  // A float sum, an int max and a bool all over a free sequence, and a nested fold inside one.
  Flattened f("let xs = [1.0, 2.0, 3.0]; ys = [4, 5] in "
              "{(sum({x * float(y) : x in xs}), max_val({y * i : i in [0:y]}), all({x > 0.0 : x in xs}), "
              "sum({sum({x * z : z in xs}) : x in xs})) : y in ys} $",
              true);
  const flatten::KernelBody* k = map_kernel_of(f.flat);
  REQUIRE(k != nullptr);
  const std::string ptxas = test::find_ptxas();
  for (int lanes : {1, 4, 32, 256}) {
    CAPTURE(lanes);
    std::string ptx = codegen::compile_ptx(*k, {}, lanes);
    // Lanes within a warp combine by butterfly shuffles; a block's warps through shared memory.
    CHECK((occurrences(ptx, "shfl.sync.bfly") > 0) == (lanes > 1));
    CHECK((ptx.find("bar.sync") != std::string::npos) == (lanes > 32));
    CHECK((ptx.find(".shared") != std::string::npos) == (lanes > 32));
    if (ptxas.empty()) {
      MESSAGE("ptxas not found: PTX not assembled");
      continue;
    }
    CHECK_MESSAGE(test::ptxas_accepts(ptxas, ptx), "ptxas rejected:\n" << ptx);
  }
  // A loop kernel has one lane an instance; an elementwise kernel too.
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 3));
}
