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

TEST_CASE("map kernels: a row read at its own fold's index is not checked, an index from data is") {
  // {sum(r) : r in rows}: the fold runs over [0, #r), so r[k] is in bounds; nothing can fail,
  // and the failure record's atomic is gone. SpMV's x[c] keeps its check and its record.
  Flattened own("let rows = [[1, 2], [3]] in {sum(r) : r in rows} at thread $", true);
  Flattened spmv("let m = [[(0, 1.0), (2, 2.0)], [(1, 3.0)]]; x = [1.0, 2.0, 3.0] in "
                 "{sum({v * x[c] : (c, v) in row}) : row in m} at thread $",
                 true);
  const flatten::KernelBody* k_own = map_kernel_of(own.flat);
  const flatten::KernelBody* k_spmv = map_kernel_of(spmv.flat);
  REQUIRE(k_own != nullptr);
  REQUIRE(k_spmv != nullptr);
  // The kernel takes no failure record at all, so the cuda backend neither waits for one nor
  // holds the kernel's inputs until it is read (Note [Deferred failure records]).
  CHECK(!k_own->can_fail());
  CHECK(k_spmv->can_fail());
  const std::string ptxas = test::find_ptxas();
  for (int lanes : {1, 8}) {
    CAPTURE(lanes);
    std::string p_own = codegen::compile_ptx(*k_own, {}, lanes), p_spmv = codegen::compile_ptx(*k_spmv, {}, lanes);
    CHECK(p_own.find("atom.global.min") == std::string::npos);
    CHECK(p_spmv.find("atom.global.min") != std::string::npos);
    if (!ptxas.empty()) {
      CHECK_MESSAGE(test::ptxas_accepts(ptxas, p_own), "ptxas rejected:\n" << p_own);
      CHECK_MESSAGE(test::ptxas_accepts(ptxas, p_spmv), "ptxas rejected:\n" << p_spmv);
    }
  }
}

TEST_CASE("map kernels: regular rows take their one length in place of the offsets, and load none") {
  // Note [Regular rows in kernels]: row i starts at i·c, so the kernel reads only the elements.
  Flattened own("let rows = [[1, 2], [3, 4]] in {sum(r) : r in rows} at thread $", true);
  const flatten::KernelBody* k = map_kernel_of(own.flat);
  REQUIRE(k != nullptr);
  REQUIRE(k->seqs.size() == 1);
  const std::string ptxas = test::find_ptxas();
  for (int lanes : {1, 8, 256}) {
    CAPTURE(lanes);
    const std::string plain = codegen::compile_ptx(*k, {}, lanes), regular = codegen::compile_ptx(*k, {}, lanes, flatten::KernelForm::Instances, {.regular = 1});
    // Plain: the offsets' two loads and the elements'; regular: the elements' alone.
    CHECK(occurrences(regular, "ld.global") < occurrences(plain, "ld.global"));
    CHECK(occurrences(regular, "ld.global") > 0);
    if (!ptxas.empty()) CHECK_MESSAGE(test::ptxas_accepts(ptxas, regular), "ptxas rejected:\n" << regular);
  }
  // A sequence the body does not have.
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 1, flatten::KernelForm::Instances, {.regular = 2}));
}

/// True for a line of PTX that loads through a generic address (no state space named): a
/// block's rows in shared memory (Note [Block rows] in codegen/block_rows.h).
bool generic_load(const std::string& line) {
  const size_t at = line.find("\tld.");
  if (at == std::string::npos) return false;
  for (const char* space : {"global", "shared", "param", "local", "const"})
    if (line.compare(at + 4, std::string(space).size(), space) == 0) return false;
  return true;
}

/// The most loads of one straight-line stretch of `ptx` (between labels and branches).
size_t most_loads_without_a_branch(const std::string& ptx) {
  size_t most = 0, now = 0;
  size_t at = 0;
  while (at < ptx.size()) {
    size_t end = ptx.find('\n', at);
    if (end == std::string::npos) end = ptx.size();
    const std::string line = ptx.substr(at, end - at);
    if (line.find("ld.global") != std::string::npos) most = std::max(most, ++now);
    if (line.find("bra") != std::string::npos || line.find("$L__") == 0) now = 0;
    at = end + 1;
  }
  return most;
}

/// The loads of `ptx` from global memory and through generic addresses.
size_t element_loads(const std::string& ptx) {
  size_t loads = 0, at = 0;
  while (at < ptx.size()) {
    size_t end = ptx.find('\n', at);
    if (end == std::string::npos) end = ptx.size();
    const std::string line = ptx.substr(at, end - at);
    if (generic_load(line) || line.find("ld.global") != std::string::npos) ++loads;
    at = end + 1;
  }
  return loads;
}

TEST_CASE("map kernels: a fold spread over 8 lanes or more is unrolled, its loads together") {
  // Note [Spread folds count their steps]: each lane's steps are counted before the loop, so
  // the unrolled body has no exit test between its loads.
  Flattened own("let rows = [[1, 2], [3]] in {sum(r) : r in rows} at thread $", true);
  const flatten::KernelBody* k_own = map_kernel_of(own.flat);
  REQUIRE(k_own != nullptr);
  // (Over fewer lanes LLVM may unroll a body this small on its own, now that it knows the count.)
  CHECK(most_loads_without_a_branch(codegen::compile_ptx(*k_own, {}, 8)) == 4);
  CHECK(most_loads_without_a_branch(codegen::compile_ptx(*k_own, {}, 16)) == 4);
  CHECK(most_loads_without_a_branch(codegen::compile_ptx(*k_own, {}, 32)) == 8);
  CHECK(most_loads_without_a_branch(codegen::compile_ptx(*k_own, {}, 256)) == 8);
  // Regular rows too (Note [Regular rows in kernels]).
  CHECK(most_loads_without_a_branch(codegen::compile_ptx(*k_own, {}, 256, flatten::KernelForm::Instances, {.regular = 1})) == 8);
  Flattened spmv("let m = [[(0, 1.0), (2, 2.0)], [(1, 3.0)]]; x = [1.0, 2.0, 3.0] in "
                 "{sum({v * x[c] : (c, v) in row}) : row in m} at thread $",
                 true);
  const flatten::KernelBody* k = map_kernel_of(spmv.flat);
  REQUIRE(k != nullptr);
  // Each step loads a column, a value and x[c]: four steps a trip over 8 lanes, eight over a
  // warp, and the remainder's one. On 4 and 8 lanes the columns and values are the block's
  // rows, read from shared memory through generic loads after the same copy in both.
  const auto four = element_loads(codegen::compile_ptx(*k, {}, 4));
  const auto eight = element_loads(codegen::compile_ptx(*k, {}, 8));
  const auto warp = occurrences(codegen::compile_ptx(*k, {}, 32), "ld.global");
  CHECK(eight >= four + 9);
  CHECK(warp >= 8 * 3 + 3);
}

TEST_CASE("map kernels: an instance split over blocks publishes its block's value, and the last block combines") {
  // Note [Rows over several blocks] in codegen/lanes.h.
  Flattened own("let rows = [[1, 2], [3]] in {sum(r) * 2 : r in rows} at block $", true);
  const flatten::KernelBody* k = map_kernel_of(own.flat);
  REQUIRE(k != nullptr);
  REQUIRE(k->split_fold().has_value());
  const std::string ptx = codegen::compile_ptx(*k, {}, flatten::kSplitLanes, flatten::KernelForm::SplitRows);
  CHECK(occurrences(ptx, "atom.acq_rel.gpu.add.u32") == 1);  // the block counted in
  CHECK(occurrences(ptx, "bar.warp.sync") == 1);             // the last block's warp, after it
  CHECK(occurrences(ptx, "ld.volatile.global") >= 1);                  // the partials read past the L1
  CHECK(occurrences(ptx, "shfl.sync.idx") == 1);                       // the count's verdict, to warp 0
  CHECK(most_loads_without_a_branch(ptx) == 8);          // the chunk's fold still unrolled
  // Two stores of 8 bytes: the block's value in its slot, and the output, by the last block.
  CHECK(occurrences(ptx, "st.global.u64") + occurrences(ptx, "st.global.b64") == 2);
  CHECK(occurrences(ptx, "st.volatile.global.u32") == 1);  // the counter set back
  const std::string ptxas = test::find_ptxas();
  if (!ptxas.empty()) CHECK_MESSAGE(test::ptxas_accepts(ptxas, ptx), "ptxas rejected:\n" << ptx);
  // Only at a block's lanes, and only a body with one outer fold (the four of `several`).
  CHECK_THROWS(codegen::compile_ptx(*k, {}, 32, flatten::KernelForm::SplitRows));
  Flattened several("let rows = [[1, 2], [3]] in {(sum(r), max_val(r)) : r in rows} at block $", true);
  const flatten::KernelBody* two = map_kernel_of(several.flat);
  REQUIRE(two != nullptr);
  CHECK_FALSE(two->split_fold().has_value());
  CHECK_THROWS(codegen::compile_ptx(*two, {}, flatten::kSplitLanes, flatten::KernelForm::SplitRows));
  // Nor a fold over a range: no rows to measure the split by.
  Flattened range("let ys = [3, 4] in {sum({i * y : i in [0:y]}) : y in ys} at block $", true);
  const flatten::KernelBody* over_range = map_kernel_of(range.flat);
  REQUIRE(over_range != nullptr);
  CHECK_FALSE(over_range->split_fold().has_value());
  // A fold nested inside the one outer fold is the outer one's business.
  Flattened nested("let rows = [[1, 2], [3]] in {sum({max_val(r) - x : x in r}) : r in rows} at block $", true);
  const flatten::KernelBody* inner = map_kernel_of(nested.flat);
  REQUIRE(inner != nullptr);
  REQUIRE(inner->split_fold().has_value());
  const std::string nested_ptx = codegen::compile_ptx(*inner, {}, flatten::kSplitLanes, flatten::KernelForm::SplitRows);
  CHECK(occurrences(nested_ptx, "atom.acq_rel.gpu.add.u32") == 1);
  if (!ptxas.empty()) CHECK_MESSAGE(test::ptxas_accepts(ptxas, nested_ptx), "ptxas rejected:\n" << nested_ptx);
}
