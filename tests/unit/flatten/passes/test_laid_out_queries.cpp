// What the executors ask of a laid-out loop (flatten/passes/lay_out_results.h): Note [Children one
// after another], which loops end their step in a literal of the children that nothing else
// reads, and which filter groups mark those children's packs as adjacent; and Note [Base rows
// from the argument], which loops make their base results as the argument's own rows.
#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flatten/passes/lay_out_results.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The one recursion loop of `src`'s function `name` (the program is kept alive).
const flatten::RecursionLoop& loop_of(const std::string& src, const std::string& name) {
  static std::vector<std::unique_ptr<Flattened>> kept;
  kept.push_back(std::make_unique<Flattened>(src, true));
  for (const flatten::Function& fn : kept.back()->flat.functions) {
    if (fn.name.rfind(name + "<", 0) != 0 && fn.name != name) continue;
    for (const flatten::Stmt& s : fn.body.stmts)
      if (s.op == flatten::Op::Recurse) return *s.loop;
  }
  FAIL("no recursion loop in ", name);
  throw;
}

/// The outputs a filter group of `loop`'s step lists as adjacent packs, in order (none where no
/// group does).
std::vector<flatten::VarId> adjacent_outputs(const flatten::RecursionLoop& loop) {
  std::vector<flatten::VarId> out;
  for (const flatten::Stmt& s : loop.step.stmts)
    if (s.op == flatten::Op::FilterGroup)
      for (uint32_t m : s.filters->adjacent_packs) out.push_back(s.outs.at(m));
  return out;
}

/// The elements each child of `loop`'s children literal nests.
std::vector<flatten::VarId> literal_elements(const flatten::RecursionLoop& loop) {
  std::vector<flatten::VarId> out;
  const flatten::Stmt* lit = flatten::children_literal(loop);
  REQUIRE(lit != nullptr);
  for (flatten::VarId child : lit->uses)
    for (const flatten::Stmt& s : loop.step.stmts)
      if (s.dst == child && s.op == flatten::Op::Nest) out.push_back(s.uses.at(1));
  return out;
}

/// The number of children in the literal that ends the step of `src`'s laid-out loop of
/// `name`, or 0 where children_literal finds none.
size_t literal_children(const std::string& src, const std::string& name) {
  const flatten::RecursionLoop& loop = loop_of(src, name);
  REQUIRE(loop.laid_out.has_value());
  const flatten::Stmt* lit = flatten::children_literal(loop);
  if (lit == nullptr) return 0;
  CHECK(lit->op == flatten::Op::SeqLit);
  return lit->uses.size();
}

}  // namespace

TEST_CASE("quicksort's step ends in the literal of its two children") {
  CHECK(literal_children(
            "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; e = {e in a | e == p}; "
            "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $",
            "qs") == 2);
}

TEST_CASE("a three-way split's literal of three children") {
  CHECK(literal_children(
            "function tw(a) = if #a < 3 then a else let p = a[0]; lo = {x in a | x < p}; mid = {x in a | x == p}; "
            "hi = {x in a | x > p}; r = {tw(v) : v in [lo, mid, hi]} in r[0] ++ r[1] ++ r[2] $ tw([3, 1, 2, 5]) $",
            "tw") == 3);
}

TEST_CASE("children that are not a literal, or a loop not laid out, keep their order") {
  // The children are the rows of a partition, not a literal.
  CHECK(literal_children("function hs(a) = if #a < 2 then a else let h = #a / 2; "
                         "r = {hs(v) : v in partition(a, [h, #a - h])} in r[1] ++ r[0] $ hs([4, 3, 2, 1]) $",
                         "hs") == 0);
  // Batcher's merge flattens its children's results: not laid out at all.
  const flatten::RecursionLoop& merge = loop_of(
      "function bm(a) = if #a == 1 then a else let h = #a / 2; xs = {a[i] : i in [0:h]}; ys = {a[i + h] : i in [0:h]}; "
      "lo = {if x < y then x else y : x in xs; y in ys}; hi = {if x < y then y else x : x in xs; y in ys} "
      "in flatten({bm(v) : v in [lo, hi]}) $ bm([2, 1, 4, 3]) $",
      "bm");
  CHECK_FALSE(merge.laid_out.has_value());
  CHECK(flatten::children_literal(merge) == nullptr);
}

TEST_CASE("the packs a children literal is made of are adjacent in their filter group, in the literal's order") {
  const std::string qs =
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; e = {e in a | e == p}; "
      "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $";
  const flatten::RecursionLoop& loop = loop_of(qs, "qs");
  const std::vector<flatten::VarId> adjacent = adjacent_outputs(loop);
  CHECK(adjacent.size() == 2);
  CHECK(adjacent == literal_elements(loop));
  // Children in the other order: the packs in that order.
  const flatten::RecursionLoop& swapped = loop_of(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; e = {e in a | e == p}; "
      "g = {e in a | e > p}; r = {qs(v) : v in [g, l]} in r[1] ++ e ++ r[0] $ qs([3, 1, 2]) $",
      "qs");
  CHECK(adjacent_outputs(swapped).size() == 2);
  CHECK(adjacent_outputs(swapped) == literal_elements(swapped));
}

TEST_CASE("children that are not packs of one vector are not marked") {
  // One child is a map of a pack, not a pack.
  const flatten::RecursionLoop& loop = loop_of(
      "function split(a) = if #a < 4 then a else let l = {e in a | e < 2}; "
      "r = {split(v) : v in [l, {e - 1 : e in a | e >= 2}]} in r[0] ++ r[1] $ split([3, 1, 2, 5, 1]) $",
      "split");
  REQUIRE(loop.laid_out.has_value());
  REQUIRE(flatten::children_literal(loop) != nullptr);
  CHECK(adjacent_outputs(loop).empty());
}

TEST_CASE("the dump shows a group's adjacent packs, and the verifier refuses ones that are not packs of one vector") {
  Flattened f("function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; e = {e in a | e == p}; "
              "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $",
              true);
  CHECK(f.count("    adjacent: ") == 1);
  REQUIRE(flatten::verify(f.flat).empty());
  flatten::Stmt* group = nullptr;
  std::function<void(flatten::Block&)> find = [&](flatten::Block& b) {
    for (flatten::Stmt& s : b.stmts) {
      if (s.op == flatten::Op::FilterGroup && !s.filters->adjacent_packs.empty()) group = &s;
      if (s.loop) {
        for (flatten::Block* inner : {&s.loop->prefix, &s.loop->step, &s.loop->finish, &s.loop->combine}) find(*inner);
      }
    }
  };
  for (flatten::Function& fn : f.flat.functions) find(fn.body);
  REQUIRE(group != nullptr);
  const std::shared_ptr<const flatten::FilterGroup> good = group->filters;
  auto with_adjacent = [&](std::vector<uint32_t> members) {
    auto bad = std::make_shared<flatten::FilterGroup>(*good);
    bad->adjacent_packs = std::move(members);
    group->filters = std::move(bad);
    return flatten::verify(f.flat);
  };
  uint32_t count_member = 0;
  while (good->members.at(count_member).kind != flatten::FilterGroup::Kind::Count) ++count_member;
  const uint32_t first = good->adjacent_packs.at(0);
  for (const std::vector<uint32_t>& bad : {std::vector<uint32_t>{first, count_member},  // a count
                                           std::vector<uint32_t>{first, first},         // a pack twice
                                           std::vector<uint32_t>{first, 99}}) {         // no such member
    const std::vector<std::string> problems = with_adjacent(bad);
    CAPTURE(bad[1]);
    REQUIRE(!problems.empty());  // one for each entry at fault (both of a pack twice)
    CHECK(problems.size() == (bad[1] == first ? 2u : 1u));
    for (const std::string& p : problems) CHECK(p.find("adjacent pack") != std::string::npos);
  }
  group->filters = good;
  CHECK(flatten::verify(f.flat).empty());
}

TEST_CASE("a base case that returns its argument makes its base rows from the argument; others do not") {
  // `if #a < 2 then a`, and with a longer base row: the if_nonempty that packs the argument.
  for (const char* src :
       {"function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; e = {e in a | e == p}; "
        "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $",
        "function qs(a) = if #a < 4 then a else let p = a[#a/2]; "
        "r = {qs(v) : v in [{e in a | e < p}, {e in a | e > p}]} in r[0] ++ {e in a | e == p} ++ r[1] $ qs([3, 1, 2]) $"}) {
    CAPTURE(src);
    const flatten::RecursionLoop& loop = loop_of(src, "qs");
    REQUIRE(loop.laid_out.has_value());
    const flatten::Stmt* base = flatten::base_from_argument(loop);
    REQUIRE(base != nullptr);
    CHECK(base->op == flatten::Op::IfNonEmpty);
    CHECK(base->dst == loop.laid_out->base);
    CHECK(base->then_block->stmts.at(0).op == flatten::Op::Pack);
    CHECK(base->then_block->stmts.at(0).uses.at(0) == loop.param);
  }
  // A base case that computes its result (a negation), and one whose base instances are the
  // else branch's: not the argument's rows under the flags.
  const flatten::RecursionLoop& reversed = loop_of(
      "function rs(a) = if #a < 3 then {0 - x : x in a} else let h = #a / 2; "
      "r = {rs(v) : v in [{a[i] : i in [0:h]}, {a[i] : i in [h:#a]}]} in r[1] ++ r[0] $ rs([4, 3, 2, 1]) $",
      "rs");
  REQUIRE(reversed.laid_out.has_value());
  CHECK(flatten::base_from_argument(reversed) == nullptr);
  const flatten::RecursionLoop& second = loop_of(
      "function qe(a) = if #a >= 2 then let p = a[#a/2]; "
      "r = {qe(v) : v in [{e in a | e < p}, {e in a | e > p}]} in r[0] ++ {e in a | e == p} ++ r[1] else a $ qe([3, 1, 2]) $",
      "qe");
  REQUIRE(second.laid_out.has_value());
  CHECK_FALSE(second.laid_out->base_when);
  CHECK(flatten::base_from_argument(second) == nullptr);
}
