// unshare_partition_calls (Note [Partition calls unshared] in
// flatten/passes/unshare_partition_calls.h): which calls of a shared variant are rewritten, after
// the whole pipeline.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The Call statements of `b`, nested blocks included.
void calls_in(const flatten::Block& b, std::vector<const flatten::Stmt*>& out) {
  for (const flatten::Stmt& s : b.stmts) {
    if (s.op == flatten::Op::Call) out.push_back(&s);
    for (const flatten::Block* sub : {s.then_block.get(), s.else_block.get()})
      if (sub != nullptr) calls_in(*sub, out);
  }
}

/// The entry function's calls.
std::vector<const flatten::Stmt*> entry_calls(const Flattened& f) {
  std::vector<const flatten::Stmt*> out;
  calls_in(f.flat.functions.at(f.flat.entry).body, out);
  return out;
}

const std::string kQsort =
    "function qs(a) = if #a < 2 then a else let p = a[#a / 2]; l = {e in a | e < p}; q = {e in a | e == p}; "
    "g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ q ++ r[1] $ ";

}  // namespace

TEST_CASE("unshare_partition_calls: a sort of one sequence in every instance calls the loop on gathered rows") {
  Flattened f(kQsort + "let a = [3, 1, 2] in {qs(a) : k in [0:3]} $", true);
  const std::vector<const flatten::Stmt*> calls = entry_calls(f);
  REQUIRE(calls.size() == 1);
  const flatten::Function& callee = f.flat.functions.at(calls[0]->func);
  CHECK(callee.shared_bases.empty());
  REQUIRE(callee.body.stmts.size() == 1);
  REQUIRE(callee.body.stmts[0].loop != nullptr);
  CHECK(callee.body.stmts[0].loop->partition.has_value());
  REQUIRE(calls[0]->uses.size() == 1);
  // The call's argument is the gather of the shared sequence's rows, just before it.
  const flatten::Function& entry = f.flat.functions.at(f.flat.entry);
  bool gathered = false;
  for (const flatten::Stmt& s : entry.body.stmts)
    if (s.op == flatten::Op::Gather && s.dst == calls[0]->uses[0]) gathered = true;
  CHECK(gathered);
  CHECK(entry.vars.at(calls[0]->uses[0]).type == callee.vars.at(callee.param).type);
  // The shared variant, which nothing calls now, is gone.
  size_t variants = 0;
  for (const flatten::Function& fn : f.flat.functions) variants += fn.name == callee.name;
  CHECK(variants == 1);
}

TEST_CASE("unshare_partition_calls: a shared call of a recursion that is no partition loop stays") {
  // Its results are not sequences: no laid-out loop, no partition levels.
  Flattened f("function total(a) = if #a < 2 then sum(a) else let h = #a / 2; "
              "r = {total(v) : v in [{a[i] : i in [0:h]}, {a[i] : i in [h:#a]}]} in r[0] + r[1] $ "
              "let a = [3, 1, 2] in {total(a) : k in [0:3]} $",
              true);
  const std::vector<const flatten::Stmt*> calls = entry_calls(f);
  REQUIRE(calls.size() == 1);
  CHECK(f.flat.functions.at(calls[0]->func).shared_bases.size() == 1);
}

TEST_CASE("unshare_partition_calls: a call on rows of its own stays as it was") {
  Flattened f(kQsort + "{qs(r) : r in [[3, 1, 2], [5, 4]]} $", true);
  const std::vector<const flatten::Stmt*> calls = entry_calls(f);
  REQUIRE(calls.size() == 1);
  CHECK(f.flat.functions.at(calls[0]->func).shared_bases.empty());
  CHECK(f.count("= gather(") == 0);
}
