// fuse_consumers: a map fused into the reduction or scan it feeds, a filter's flags into their
// pack (the whole pipeline runs: the pass works on what fuse_elementwise made).
#include <doctest/doctest.h>

#include <string>

#include "flatten/pipeline.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The whole pipeline (flatten::flatten) on the last form of src, printed.
std::string flattened(const std::string& src) {
  Flattened f(src, true);
  CHECK(flatten::verify(f.flat).empty());
  return f.text;
}

}  // namespace

TEST_CASE("fuse_consumers: a map feeding a reduction or a scan becomes one reduce/scan kernel") {
  std::string sum = flattened("function h(s) = sum({x * x + 1 : x in s}) $ h([1, 2]) $");
  CHECK(occurrences(sum, "reduce_kernel sum(") == 1);
  CHECK(occurrences(sum, "= kernel(") == 0);    // the map is gone ...
  CHECK(occurrences(sum, "= nest(") == 0);      // ... and so is the sequence it built
  CHECK(occurrences(sum, "= *(%0, %0)") == 1);  // x read once, though x * x reads it twice
  std::string scan = flattened("function h(s) = plus_scan({2 * x : x in s}) $ h([5, 6]) $");
  CHECK(occurrences(scan, "scan_kernel plus_scan(") == 1);  // a single primitive fuses too
  CHECK(occurrences(scan, "= const 2") == 1);               // the literal became a constant
  CHECK(occurrences(scan, "lit 2") == 0);
  // Nested: the inner sum per sequence is one segmented reduce kernel.
  std::string nested = flattened("function h(s) = {sum({x * x : x in e}) : e in s} $ h([[1], [2, 3]]) $");
  CHECK(occurrences(nested, "reduce_kernel sum(") == 1);
}

TEST_CASE("fuse_consumers: a filter's flags fuse into its pack, the unused count goes first") {
  std::string f = flattened("function h(s) = {x in s | x > 0} $ h([1, -2]) $");
  CHECK(occurrences(f, "= pack(") == 0);
  CHECK(occurrences(f, "= count(") == 0);  // drop_dead: nothing read it
  CHECK(occurrences(f, "= kernel(") == 0);
  // The pack kernel and the lengths of the kept sequences (the flags as ints summed per
  // segment, a reduce kernel) read the same input: group_filters makes them one filter group
  // (Note [Filter groups]) that computes the flags once.
  CHECK(occurrences(f, "filter_group(") == 1);
  CHECK(occurrences(f, ": count flags 0 in segments") == 1);
  CHECK(occurrences(f, " by flags 0") == 1);  // the pack member
  CHECK(occurrences(f, "pack_kernel(") == 0);
  CHECK(occurrences(f, "reduce_kernel sum(") == 0);
}

TEST_CASE("fuse_consumers leaves maps whose values are also read elsewhere") {
  // The squares are both summed and returned: fusing would compute them twice for nothing.
  std::string f = flattened("function h(s) = let q = {x * x + 1 : x in s} in (sum(q), q) $ h([1, 2]) $");
  CHECK(occurrences(f, "reduce_kernel") == 0);
  CHECK(occurrences(f, "prim sum(") == 1);
  // A reduction of a sequence no map computed stays the primitive.
  CHECK(occurrences(flattened("function g(s) = sum(s) $ g([1, 2]) $"), "reduce_kernel") == 0);
}

TEST_CASE("fuse_consumers: maps that can fail or need local memory on the GPU stay kernels") {
  // exp fuses into the sum; sin (libdevice's argument reduction keeps a local array) and sqrt
  // (it can fail: Note [Kernels that can fail]) do not.
  CHECK(occurrences(flattened("function h(s) = sum({exp(x) * 2.0 : x in s}) $ h([1.0, 2.0]) $"), "reduce_kernel sum(") == 1);
  std::string trig = flattened("function h(s) = sum({sin(x) * 2.0 : x in s}) $ h([1.0, 2.0]) $");
  CHECK(occurrences(trig, "reduce_kernel") == 0);
  CHECK(occurrences(trig, "= kernel(") == 1);
  std::string root = flattened("function h(s) = sum({sqrt(x) * 2.0 : x in s}) $ h([1.0, 2.0]) $");
  CHECK(occurrences(root, "reduce_kernel") == 0);
  CHECK(occurrences(root, "= kernel(") == 1);
}

TEST_CASE("fuse_consumers: a count reads its producer's stored flags, not the wider values they come from") {
  // Note [Stored outputs read back]: quickhull's shape. The flags `c > 0.0` are stored for a
  // pack of points (pairs, which no pack kernel takes), so the count of the kept points sums
  // the flags (a byte an element) instead of recomputing them from the cross products (eight),
  // and group_filters makes the count and the pack one filter group over the stored flags.
  std::string f = flattened(
      "function h(ps, q) = let c = {x * q - 1.0 : (x, y) in ps}; k = {p in ps; d in c | d > 0.0} "
      "in if #k < 2 then [(q, q)] else k $ "
      "function g(s) = {h(ps, 2.0) : ps in s} $ g([[(1.0, 2.0), (0.1, 0.2)], [(3.0, 1.0)]]) $");
  CHECK(occurrences(f, "reduce_kernel sum(") == 0);
  CHECK(occurrences(f, "filter_group(") >= 1);
  CHECK(occurrences(f, ": count p_") == 1);  // a member counting a stored flags vector
  // Flags that a pack of flat values takes in are not stored: the plain filter keeps its one
  // filter group computing the flags (the previous case's checks).
  std::string plain = flattened("function h(s) = {x in s | x > 0} $ h([1, -2]) $");
  CHECK(occurrences(plain, "= kernel(") == 0);
  CHECK(occurrences(plain, ": count flags 0 in segments") == 1);
}
