// mark_releases: each vector's last reader (Note [Releasing dead vectors]).
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

#include "flatten/passes/ir_walk.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

// (Its `++` keeps it a recursion loop rather than a loop kernel: Note [Loop kernels].)
const char* kCountLoop =
    "function count_loop(ds, i, counts) = if i == #ds then counts ++ counts "
    "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ "
    "{count_loop(d, 0, dist(0, 4)) : d in [[1, 2, 1], [3]]} $";

const flatten::Stmt* find_prim(const flatten::Block& b, lang::core::PrimId id) {
  for (const flatten::Stmt& s : b.stmts) {
    if (s.op == flatten::Op::Prim && s.prim == id) return &s;
    const flatten::Stmt* found = nullptr;
    flatten::for_each_sub_block(s, [&](const flatten::Block& sub) {
      if (!found) found = find_prim(sub, id);
    });
    if (found) return found;
  }
  return nullptr;
}

/// Every release in `b` (nested blocks included), with the statement that makes it.
void releases(const flatten::Block& b, std::multimap<flatten::VarId, const flatten::Stmt*>& out) {
  for (const flatten::Stmt& s : b.stmts) {
    for (flatten::VarId v : s.releases) out.emplace(v, &s);
    flatten::for_each_sub_block(s, [&](const flatten::Block& sub) { releases(sub, out); });
  }
}

void loop_named(const flatten::Block& b, std::set<flatten::VarId>& out) {
  out.insert(b.result);
  for (const flatten::Stmt& s : b.stmts) {
    flatten::for_each_sub_block(s, [&](const flatten::Block& sub) { loop_named(sub, out); });
    if (const flatten::RecursionLoop* l = s.loop.get()) {
      out.insert(l->saved.begin(), l->saved.end());
      out.insert({l->call_result, l->branch});
    }
  }
}

}  // namespace

TEST_CASE("mark_releases: a counting loop hands its sequence to rep at every level") {
  Flattened f(kCountLoop, true);
  const flatten::Function* loop_fn = nullptr;
  for (const flatten::Function& fn : f.flat.functions)
    if (fn.name.find("count_loop") == 0) loop_fn = &fn;
  REQUIRE(loop_fn != nullptr);
  const flatten::Stmt* rep = find_prim(loop_fn->body, lang::core::PrimId::Rep);
  REQUIRE(rep != nullptr);
  // The sequence rep updates is read there for the last time, and so are the level's
  // parameter and the values taken apart from it (the text shows the parameter's release).
  CHECK(std::count(rep->releases.begin(), rep->releases.end(), rep->uses[0]) == 1);
  CHECK(f.count("-- last read of v_0") == 1);
}

TEST_CASE("mark_releases: each variable is released once, never a block result or what a loop keeps") {
  for (const char* src :
       {kCountLoop, "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
                    "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
                    "qs([3, 1, 2, 5, 4]) $",
        "let s = [1, 2, 3]; u = rep(s, 9, 0) in (s, u, {x + 1 : x in s}) $",
        "{if x > 1 then [x] ++ [x] else [x] : x in [1, 2, 3]} $"}) {
    Flattened f(src, true);
    for (const flatten::Function& fn : f.flat.functions) {
      std::multimap<flatten::VarId, const flatten::Stmt*> rel;
      releases(fn.body, rel);
      std::set<flatten::VarId> kept;
      loop_named(fn.body, kept);
      for (const auto& [v, s] : rel) {
        CHECK_MESSAGE(rel.count(v) == 1, fn.name << ": " << fn.vars[v].hint << " released twice");
        CHECK_MESSAGE(!kept.count(v), fn.name << ": " << fn.vars[v].hint << " is kept but released");
        std::set<flatten::VarId> read;
        flatten::collect_uses(*s, read);
        CHECK_MESSAGE(read.count(v) == 1, fn.name << ": " << fn.vars[v].hint << " released where it is not read");
      }
    }
  }
}

TEST_CASE("mark_releases: a sequence read after the rep that updates it is released by its last reader") {
  Flattened f("let s = [1, 2, 3]; u = rep(s, 9, 0) in (u, s) $", true);
  CHECK(f.count("prim rep(lit_2, lit_3, lit_4)  -- last read of lit_3, lit_4\n") == 1);
  CHECK(f.count("tuple(p_5, lit_2)  -- last read of lit_2, p_5\n") == 1);
}
