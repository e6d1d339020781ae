// find_partition_levels (Note [Partition levels] in flatten/flat_ir.h): which laid-out loops get
// a plan and what it says, after the whole pipeline.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

const flatten::PartitionLevels* plan_in(const flatten::Block& b) {
  for (const flatten::Stmt& s : b.stmts) {
    if (s.loop && s.loop->partition) return &*s.loop->partition;
    for (const flatten::Block* sub : {s.then_block.get(), s.else_block.get()})
      if (sub != nullptr)
        if (const flatten::PartitionLevels* r = plan_in(*sub)) return r;
  }
  return nullptr;
}

/// The program's partition loop's plan, if any, with the program it belongs to.
struct Planned {
  std::unique_ptr<Flattened> f;
  const flatten::PartitionLevels* plan = nullptr;
  explicit operator bool() const { return plan != nullptr; }
  const flatten::PartitionLevels* operator->() const { return plan; }
};
Planned plan_of(const std::string& src) {
  Planned p{std::make_unique<Flattened>(src, true)};
  for (const flatten::Function& fn : p.f->flat.functions)
    if (!p.plan) p.plan = plan_in(fn.body);
  return p;
}

/// Quicksort with the pivot `pivot`, the parts by `lt`, `eq`, `gt` and the result `result`.
std::string qsort(const std::string& pivot, const std::string& result, const std::string& call) {
  return "function qs(a) = if #a < 2 then a else let p = " + pivot +
         "; l = {e in a | e < p}; q = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in " + result +
         " $ " + call + " $";
}

}  // namespace

TEST_CASE("find_partition_levels: quicksort's scalars, predicates and parts in the result's order") {
  Planned r = plan_of(qsort("a[#a / 2]", "r[0] ++ q ++ r[1]", "qs([3, 1, 2])"));
  REQUIRE(r);
  REQUIRE(r->parts.size() == 3);
  CHECK(r->parts[0].child);
  CHECK(!r->parts[1].child);
  CHECK(r->parts[2].child);
  CHECK(r->parts[0].output != r->parts[2].output);
  REQUIRE(r->predicate_scalars.size() == 1);
  const flatten::PartitionLevels::Scalar& pivot = r->scalars.at(r->predicate_scalars[0]);
  CHECK(pivot.kind == flatten::PartitionLevels::Scalar::Kind::Element);
  REQUIRE(r->predicates != nullptr);
  CHECK(r->predicates->inputs.size() == 2);
  CHECK(r->scalars.at(r->recurse).kind == flatten::PartitionLevels::Scalar::Kind::Kernel);
  CHECK(occurrences(r.f->text, "(partition levels: ") == 1);
  // Floats; the pieces in another order; a pivot from two elements.
  Planned f = plan_of(qsort("a[0]", "q ++ r[1] ++ r[0]", "qs([3.0, 1.0])"));
  REQUIRE(f);
  CHECK(!f->parts[0].child);
  CHECK(f->parts[1].child);
  CHECK(f->parts[2].child);
  CHECK(plan_of(qsort("(a[0] + a[#a - 1]) / 2", "r[0] ++ q ++ r[1]", "qs([3, 1])")));
  // Many instances at once.
  CHECK(plan_of(qsort("a[#a / 2]", "r[0] ++ q ++ r[1]", "{qs(s) : s in [[3, 1], [2]]}")));
}

TEST_CASE("find_partition_levels leaves the loops that are not partitions of their argument") {
  // Chars (not 8 bytes); a pivot from outside the instance; a part that is not a filter of the
  // argument (a map of it); a base case that is not the argument; an effect; a rand path; a
  // recursion whose test reads an element.
  CHECK(!plan_of(qsort("a[#a / 2]", "r[0] ++ q ++ r[1]", "qs(\"cab\")")));
  CHECK(!plan_of("function qs(a) = if #a < 2 then a else let p = a[#a / 2]; l = {e in a | e < p}; q = {e in a | e == p}; "
                 "g = {e + 0 * p : e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ qs([3, 1, 2]) $"));
  CHECK(!plan_of("function qs(a) = if #a < 2 then {e + 1 : e in a} else let p = a[#a / 2]; l = {e in a | e < p}; q = {e in a | e == p}; "
                 "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ qs([3, 1, 2]) $"));
  CHECK(!plan_of("function qs(a) = if #a < 2 then a else let u = print_string(\"x\"); p = a[#a / 2]; l = {e in a | e < p}; "
                 "q = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ qs([3, 1, 2]) $"));
  CHECK(!plan_of(qsort("a[#a / 2]", "r[0] ++ q ++ r[1]", "qs({rand(9) : i in [0:4]})")));
  // More parts than the engine holds; a recursion test that can fail.
  CHECK(!plan_of("function qs(a) = if #a < 2 then a else let p = a[#a / 2]; l = {e in a | e < p}; q = {e in a | e == p}; "
                 "g = {e in a | e > p}; u = {e in a | e - 9 == p}; v = {e in a | e + 9 == p}; r = {qs(s) : s in [l, g]} "
                 "in r[0] ++ q ++ r[1] ++ u ++ v $ qs([3, 1, 2]) $"));
  CHECK(!plan_of("function qs(a) = if #a < 2 + 0 * (1 / (#a - 1)) then a else let p = a[#a / 2]; l = {e in a | e < p}; "
                 "q = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ qs([3, 1, 2]) $"));
  CHECK(!plan_of("function qs(a) = if #a < 2 or a[0] == 7 then a else let p = a[#a / 2]; l = {e in a | e < p}; "
                 "q = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ qs([3, 1, 2]) $"));
}
