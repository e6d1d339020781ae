// find_regular_levels (Note [Regular levels] in flatten/flat_ir.h): which recursion loops get a
// plan and what it says, after the whole pipeline; and the lengths' chain the executors compute
// from a plan (exec/host/regular_chain.h).
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/host/regular_chain.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

const flatten::RegularLevels* plan_in(const flatten::Block& b) {
  for (const flatten::Stmt& s : b.stmts) {
    if (s.loop && s.loop->regular) return &*s.loop->regular;
    for (const flatten::Block* sub : {s.then_block.get(), s.else_block.get()})
      if (sub != nullptr)
        if (const flatten::RegularLevels* r = plan_in(*sub)) return r;
  }
  return nullptr;
}

/// The program's regular loop's plan, if any, with the program it belongs to (its kernels' types).
struct Planned {
  std::unique_ptr<Flattened> f;
  const flatten::RegularLevels* plan = nullptr;
  explicit operator bool() const { return plan != nullptr; }
  const flatten::RegularLevels* operator->() const { return plan; }
  const flatten::RegularLevels& operator*() const { return *plan; }
  bool has_value() const { return plan != nullptr; }
};
Planned plan_of(const std::string& src) {
  Planned p{std::make_unique<Flattened>(src, true)};
  for (const flatten::Function& fn : p.f->flat.functions)
    if (!p.plan) p.plan = plan_in(fn.body);
  return p;
}

/// Whether some loop of the program is an ascent (Note [Regular ascents]).
bool has_ascent(const std::string& src) {
  Flattened f(src, true);
  for (const flatten::Function& fn : f.flat.functions)
    if (const flatten::RegularLevels* p = plan_in(fn.body); p && p->callee) return true;
  return false;
}

const char* kMerge =
    "function bm(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; "
    "hi = {select(x > y, x, y) : x in h[0]; y in h[1]} in flatten({bm(c) : c in [lo, hi]}) $ ";

}  // namespace

TEST_CASE("find_regular_levels: Batcher's merge, its parts, the map's inputs and the children") {
  Planned r = plan_of(std::string(kMerge) + "bm([1, 4, 3, 2]) $");
  REQUIRE(r.has_value());
  CHECK(r->parts.size() == 2);
  CHECK(r->input_parts == std::vector<uint32_t>{0, 1});
  REQUIRE(r->map != nullptr);
  CHECK(r->map->outputs.size() == 2);
  CHECK(r->child_outputs.size() == 2);
  CHECK(r->child_outputs[0] != r->child_outputs[1]);
  CHECK(r->base_when);
  // The printed plan, under the loop (--dump=flat).
  Flattened f(std::string(kMerge) + "bm([1, 4, 3, 2]) $", true);
  CHECK(occurrences(f.text, "(regular levels: ") == 1);
  // The map reading the second half first, the children in the other order; three parts of floats.
  Planned d = plan_of(
      "function md(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); hi = {select(y > x, y, x) : y in h[1]; x in h[0]}; "
      "lo = {select(y < x, y, x) : y in h[1]; x in h[0]} in flatten({md(c) : c in [hi, lo]}) $ md([1, 2]) $");
  REQUIRE(d.has_value());
  CHECK(d->input_parts == std::vector<uint32_t>{1, 0});
  Planned t = plan_of(
      "function r3(a) = if #a < 3 then a else let n = #a / 3; p = partition(a, [n, n, n]); "
      "x = {u + w : u in p[0]; v in p[1]; w in p[2]}; y = {u * v : u in p[0]; v in p[1]; w in p[2]}; "
      "z = {v - w : u in p[0]; v in p[1]; w in p[2]} in flatten({r3(c) : c in [z, x, y]}) $ r3([1.0, 2.0, 3.0]) $");
  REQUIRE(t.has_value());
  CHECK(t->parts.size() == 3);
  CHECK(t->child_outputs.size() == 3);
}

TEST_CASE("find_regular_levels leaves the loops whose levels are not one map over equal parts") {
  // Quicksort (filters); the halves themselves as children (the sort's own recursion); a map
  // that can fail; flags from the elements; an effect; a child that is
  // a part, not a map output; a rand path.
  CHECK(!plan_of("function qs(a) = if #a < 2 then a else let p = a[#a/2]; r = {qs(v) : v in [{e in a | e < p}, "
                 "{e in a | e > p}]} in r[0] ++ r[1] $ qs([3, 1, 2]) $"));
  CHECK(!plan_of("function hs(a) = if #a < 2 then a else flatten({hs(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])}) $ hs([3, 1]) $"));
  CHECK(!plan_of("function dv(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); q = {x / y : x in h[0]; y in h[1]}; "
                 "s = {x + y : x in h[0]; y in h[1]} in flatten({dv(c) : c in [q, s]}) $ dv([4, 2]) $"));
  CHECK(!plan_of("function fe(a) = if a[0] < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; "
                 "hi = {select(x > y, x, y) : x in h[0]; y in h[1]} in flatten({fe(c) : c in [lo, hi]}) $ fe([4, 2]) $"));
  CHECK(!plan_of("function ef(a) = if #a < 2 then a else let u = print_string(\"x\"); h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); "
                 "lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; hi = {select(x > y, x, y) : x in h[0]; y in h[1]} "
                 "in flatten({ef(c) : c in [lo, hi]}) $ ef([4, 2]) $"));
  CHECK(!plan_of("function pc(a) = if #a < 2 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); lo = {select(x < y, x, y) : x in h[0]; y in h[1]} "
                 "in flatten({pc(c) : c in [lo, h[1]]}) $ pc([4, 2]) $"));
  CHECK(!plan_of(std::string(kMerge) + "bm({rand(9) : i in [0:4]}) $"));
}

TEST_CASE("regular_chain: the lengths of the levels that recurse, or nothing where one does not split evenly") {
  Planned r = plan_of(std::string(kMerge) + "bm([1, 4, 3, 2]) $");
  REQUIRE(r.has_value());
  CHECK(exec::host::regular_chain(*r, 8) == std::vector<int64_t>{8, 4, 2});
  CHECK(exec::host::regular_chain(*r, 2) == std::vector<int64_t>{2});
  CHECK(exec::host::regular_chain(*r, 1) == std::vector<int64_t>{});
  CHECK(exec::host::regular_chain(*r, 0) == std::vector<int64_t>{});
  CHECK(!exec::host::regular_chain(*r, 6));  // 3 splits into 2 and 1: the zip's error, level by level
  CHECK(!exec::host::regular_chain(*r, 3));
  // A base case of one element: empty instances never reach it (the loop runs level by level).
  Planned one = plan_of("function m1(a) = if #a == 1 then a else let h = partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2]); "
                        "lo = {select(x < y, x, y) : x in h[0]; y in h[1]}; hi = {select(x > y, x, y) : x in h[0]; y in h[1]} "
                        "in flatten({m1(c) : c in [lo, hi]}) $ m1([1, 2]) $");
  REQUIRE(one.has_value());
  CHECK(exec::host::regular_chain(*one, 4) == std::vector<int64_t>{4, 2});
  CHECK(!exec::host::regular_chain(*one, 0));
  std::optional<std::vector<int64_t>> big = exec::host::regular_chain(*r, int64_t{1} << 40);
  REQUIRE(big.has_value());
  CHECK(big->size() == 40);
  Planned t = plan_of(
      "function r3(a) = if #a < 3 then a else let n = #a / 3; p = partition(a, [n, n, n]); "
      "x = {u + w : u in p[0]; v in p[1]; w in p[2]} in flatten({r3(c) : c in [x, x, x]}) $ r3([1, 2, 3]) $");
  REQUIRE(t.has_value());
  CHECK(exec::host::regular_chain(*t, 27) == std::vector<int64_t>{27, 9, 3});
  CHECK(!exec::host::regular_chain(*t, 12));  // 4 cuts into 1, 1, 1: the partition's error
}

TEST_CASE("find_regular_levels: Batcher's sort is an ascent that calls the merge on its pieces") {
  const std::string sort = std::string(kMerge) +
                           "function bs(a) = if #a < 2 then a else let s = {bs(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])} "
                           "in bm(s[0] ++ prim_reverse(s[1])) $ bs([3, 1, 4, 2]) $";
  Flattened f(sort, true);
  const flatten::RegularLevels* ascent = nullptr;
  for (const flatten::Function& fn : f.flat.functions)
    if (const flatten::RegularLevels* p = plan_in(fn.body); p && p->callee) ascent = p;
  REQUIRE(ascent != nullptr);
  CHECK(ascent->map == nullptr);
  REQUIRE(ascent->pieces.size() == 2);
  CHECK((ascent->pieces[0].child == 0 && !ascent->pieces[0].reversed));
  CHECK((ascent->pieces[1].child == 1 && ascent->pieces[1].reversed));
  CHECK(ascent->callee->map != nullptr);
  CHECK(exec::host::regular_chain(*ascent, 8) == std::vector<int64_t>{8, 4, 2});
  CHECK(occurrences(f.text, "the ascent calls a regular loop on child 0, child 1 reversed") == 1);
  // Not an ascent: a child's result used twice, work on a result before the call, a callee
  // that is not regular.
  CHECK(!has_ascent(std::string(kMerge) + "function b2(a) = if #a < 2 then a else let s = {b2(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])} "
                 "in bm(s[0] ++ s[0]) $ b2([3, 1, 4, 2]) $"));
  CHECK(!has_ascent(std::string(kMerge) + "function b3(a) = if #a < 2 then a else let s = {b3(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])} "
                 "in bm(s[0] ++ {x + 1 : x in s[1]}) $ b3([3, 1, 4, 2]) $"));
  CHECK(!has_ascent(std::string(kMerge) + "function b5(a) = if #a < 2 then a else let s = {b5(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])}; "
                    "u = bm(s[0] ++ prim_reverse(s[1])) in flatten(s) $ b5([3, 1, 4, 2]) $"));  // the call's result unread
  CHECK(!has_ascent("function id(a) = a $ function b4(a) = if #a < 2 then a else let s = {b4(h) : h in partition(a, [(#a + 1) / 2, #a - (#a + 1) / 2])} "
                 "in id(s[0] ++ s[1]) $ b4([3, 1, 4, 2]) $"));
}
