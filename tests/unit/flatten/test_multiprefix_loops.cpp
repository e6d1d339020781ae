// Which loop kernels are multiprefix loops (Note [Multiprefix loops] in flatten/flat_ir.h):
// the analysis on loops the whole pipeline compiles, and what it gives.
#include <doctest/doctest.h>

#include <string>

#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The loop kernel statement of the flattened `src` (exactly one), and its body's form.
const flatten::Stmt* loop_stmt(const flatten::Block& block) {
  for (const flatten::Stmt& s : block.stmts) {
    if (s.op == flatten::Op::LoopKernel) return &s;
    for (const flatten::Block* inner : {s.then_block.get(), s.else_block.get()})
      if (inner != nullptr)
        if (const flatten::Stmt* found = loop_stmt(*inner)) return found;
  }
  return nullptr;
}

std::optional<flatten::MultiprefixLoop> form_of(const std::string& src) {
  Flattened f(src, true);
  REQUIRE(f.count("loop_kernel(") == 1);
  for (const flatten::Function& fn : f.flat.functions)
    if (const flatten::Stmt* s = loop_stmt(fn.body)) {
      CHECK((f.count("(multiprefix loop: a warp an instance)") == 1) == s->kernel->multiprefix().has_value());
      return s->kernel->multiprefix();
    }
  FAIL("no loop kernel statement");
  return std::nullopt;
}

const std::string kCount =
    "function count_loop(ds, i, counts) = if i == #ds then counts "
    "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ ";

}  // namespace

TEST_CASE("a counting loop is a histogram over its counter") {
  auto m = form_of(kCount + "{count_loop(d, 0, dist(0, 4)) : d in [[0, 1, 1, 3], [2]]} $");
  REQUIRE(m);
  CHECK(m->histograms.size() == 1);
  CHECK(m->order.size() > 0);
}

TEST_CASE("a placing loop: a histogram read for an own-slot write") {
  auto m = form_of(
      "function place_loop(ds, i, next, places) = if i == #ds then places else let d = ds[i] "
      "in place_loop(ds, i + 1, rep(next, next[d] + 1, d), rep(places, next[d], i)) $ "
      "{place_loop(d, 0, [0, 5], dist(0, #d)) : d in [[0, 1, 1], [1]]} $");
  REQUIRE(m);
  REQUIRE(m->histograms.size() == 1);
  // The addend (the constant 1) comes before the histogram's read in the order.
  const auto& h = m->histograms[0];
  auto at = [&](uint32_t node) { return std::find(m->order.begin(), m->order.end(), node) - m->order.begin(); };
  CHECK(at(h.addend) < at(h.read));
  CHECK(at(h.read) < at(h.write));
  // The pure nodes come first (codegen emits them a chunk ahead: Note [Multiprefix chunks a
  // chunk ahead] in codegen/kernel_ir.cpp): the addend, the index and the histogram's guard,
  // not its read nor its write.
  CHECK(m->pure_count > 0);
  CHECK(m->pure_count < m->order.size());
  CHECK(static_cast<size_t>(at(h.addend)) < m->pure_count);
  CHECK(static_cast<size_t>(at(h.read)) >= m->pure_count);
  CHECK(static_cast<size_t>(at(h.write)) >= m->pure_count);
}

TEST_CASE("a loop that only writes at its own index; addends of any int and either side") {
  CHECK(form_of("function twice(xs, i, out) = if i == #xs then out else twice(xs, i + 1, rep(out, 2 * xs[i], i)) $ "
                "{twice(x, 0, dist(0, #x)) : x in [[1, 2], [3]]} $"));
  CHECK(form_of("function weigh(ds, i, h) = if i == #ds then h else weigh(ds, i + 1, rep(h, ds[i] * 3 + h[rem(ds[i], 4)], rem(ds[i], 4))) $ "
                "{weigh(d, 0, dist(0, 4)) : d in [[5, 6], [7]]} $"));
  // A write in one branch: the guard says which iterations add.
  CHECK(form_of("function odd_counts(ds, i, h) = if i == #ds then h "
                "else odd_counts(ds, i + 1, if rem(ds[i], 2) == 1 then rep(h, h[ds[i]] + 1, ds[i]) else h) $ "
                "{odd_counts(d, 0, dist(0, 8)) : d in [[5, 6], [7]]} $"));
}

TEST_CASE("loops whose iterations depend on each other otherwise are not multiprefix loops") {
  // A second read of the histogram at another index.
  CHECK_FALSE(form_of("function two_reads(ds, i, c) = if i == #ds then c "
                      "else two_reads(ds, i + 1, rep(c, c[ds[i]] + c[0], ds[i])) $ "
                      "{two_reads(d, 0, dist(0, 4)) : d in [[0, 1], [2]]} $"));
  // A scalar accumulator beside the counter.
  CHECK_FALSE(form_of("function with_sum(ds, i, c, s) = if i == #ds then (c, s) "
                      "else with_sum(ds, i + 1, rep(c, c[ds[i]] + 1, ds[i]), s + ds[i]) $ "
                      "{with_sum(d, 0, dist(0, 4), 0) : d in [[0, 1], [2]]} $"));
  // A float histogram: its sums would depend on the order.
  CHECK_FALSE(form_of("function weights(ds, i, h) = if i == #ds then h "
                      "else weights(ds, i + 1, rep(h, h[ds[i]] + 0.5, ds[i])) $ "
                      "{weights(d, 0, dist(0.0, 4)) : d in [[0, 1], [2]]} $"));
  // An index that reads the state.
  CHECK_FALSE(form_of("function chase(ds, i, c) = if i == #ds then c "
                      "else chase(ds, i + 1, rep(c, c[c[0]] + 1, c[0])) $ "
                      "{chase(d, 0, dist(0, 4)) : d in [[0, 1], [2]]} $"));
  // A write at another index than the counter's.
  CHECK_FALSE(form_of("function shift(xs, i, out) = if i + 1 >= #xs then out else shift(xs, i + 1, rep(out, xs[i], i + 1)) $ "
                      "{shift(x, 0, dist(0, #x)) : x in [[1, 2, 3], [3]]} $"));
  // A counter that steps by 2.
  CHECK_FALSE(form_of("function evens(xs, i, out) = if i >= #xs then out else evens(xs, i + 2, rep(out, xs[i], i)) $ "
                      "{evens(x, 0, dist(0, #x)) : x in [[1, 2, 3], [3]]} $"));
  // A loop that writes no sequence: a search.
  CHECK_FALSE(form_of("function find(xs, i, v) = if i == #xs or xs[i] == v then i else find(xs, i + 1, v) $ "
                      "{find(x, 0, 3) : x in [[1, 2, 3], [3]]} $"));
}

TEST_CASE("an own-slot element written twice an iteration stays a thread's") {
  // The second write wins in node order; the lanes would store in evaluation order (the write
  // that reads the histogram last).
  CHECK_FALSE(form_of("function mark(ds, i, c, p) = if i == #ds then p else let d = ds[i]; p1 = rep(p, c[d], i) "
                      "in mark(ds, i + 1, rep(c, c[d] + 1, d), if d == 0 then rep(p1, -1, i) else p1) $ "
                      "{mark(d, 0, dist(0, 4), dist(0, #d)) : d in [[0, 1, 0], [2]]} $"));
}
