// Note [Levels in a block] (runtime/gpu/block_levels.h): the translation of laid-out loops into
// the engine's programs, and the engine itself run by one host thread (its logic, not the
// CUDA block's barriers, which the cuda backend's program tests check on the GPU).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "exec/cuda/block_levels_program.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;
namespace bl = ndp::runtime::gpu::block_levels;

namespace {

/// The engine's team of one host thread.
struct SerialTeam {
  int rank() const { return 0; }
  void sync() const {}
  template <class F>
  void each(int64_t n, F f) const {
    for (int64_t i = 0; i < n; ++i) f(i);
  }
  int64_t scan(int64_t* a, int64_t n) const {
    int64_t run = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = a[i];
      a[i] = run;
      run += v;
    }
    a[n] = run;
    return run;
  }
  int64_t sum(int64_t x) const { return x; }
};

const char* kQuicksort =
    "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
    "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $ qs([3, 1, 2]) $";

/// The program of the one recursion loop of `src`'s function `name`, or nothing (`why` says).
std::optional<exec::cuda::BlockLevelsProgram> program_of(const std::string& src, const std::string& name, std::string* why) {
  static std::vector<std::unique_ptr<Flattened>> kept;  // the programs' types outlive the test
  kept.push_back(std::make_unique<Flattened>(src, true));
  for (const flatten::Function& fn : kept.back()->flat.functions) {
    if (fn.name.rfind(name + "<", 0) != 0 && fn.name != name) continue;
    for (const flatten::Stmt& s : fn.body.stmts)
      if (s.op == flatten::Op::Recurse) return exec::cuda::block_levels_program(fn, s, why);
  }
  FAIL("no recursion loop in ", name);
  return std::nullopt;
}

/// Runs `p` on the instances `rows` (ints) with one host thread, instance i's result at
/// places[i] (none: in order); false where the run failed.
bool run_ints(const exec::cuda::BlockLevelsProgram& prog, const std::vector<std::vector<int64_t>>& rows, std::vector<int64_t>& out,
              int64_t cap = 512, const std::vector<int64_t>& places = {}) {
  std::vector<int64_t> off{0}, elems;
  for (const auto& r : rows) {
    elems.insert(elems.end(), r.begin(), r.end());
    off.push_back(static_cast<int64_t>(elems.size()));
  }
  const bl::Program p = prog.on_host(cap);
  std::vector<int64_t> mem(static_cast<size_t>(bl::header_words(p) + p.n_slots * cap));
  out.assign(elems.size(), -1);
  SerialTeam team;
  bl::Engine<SerialTeam> engine(p, team, mem.data());
  return engine.run(off.data(), 0, static_cast<int64_t>(rows.size()), elems.data(), out.data(), places.empty() ? nullptr : places.data());
}

}  // namespace

TEST_CASE("block levels: quicksort's descent translates and sorts every instance in place") {
  std::string why;
  auto prog = program_of(kQuicksort, "qs", &why);
  REQUIRE_MESSAGE(prog.has_value(), why);
  // The argument's offsets and elements take two slots; the rest are shared by liveness.
  CHECK(prog->shape.n_slots < 20);
  MESSAGE("slots: ", prog->shape.n_slots, ", ops: ", prog->shape.n_ops);
  std::mt19937_64 rng(7);
  std::vector<std::vector<int64_t>> rows = {{}, {5}, {2, 1}, {3, 3, 3}};
  for (int len : {10, 57, 200}) {
    std::vector<int64_t> r(static_cast<size_t>(len));
    for (auto& x : r) x = static_cast<int64_t>(rng() % 50) - 25;
    rows.push_back(r);
  }
  std::vector<int64_t> out;
  REQUIRE(run_ints(*prog, rows, out));
  std::vector<int64_t> expect;
  for (auto r : rows) {
    std::sort(r.begin(), r.end());
    expect.insert(expect.end(), r.begin(), r.end());
  }
  CHECK(out == expect);
}

TEST_CASE("block levels: each instance's result goes to the place it is given") {
  auto prog = program_of(kQuicksort, "qs", nullptr);
  REQUIRE(prog.has_value());
  // Three instances of lengths 3, 1 and 2, placed last, first and in the middle.
  std::vector<int64_t> out;
  REQUIRE(run_ints(*prog, {{9, 7, 8}, {5}, {2, 1}}, out, 512, {3, 0, 1}));
  CHECK(out == std::vector<int64_t>{5, 1, 2, 7, 8, 9});
}

TEST_CASE("block levels: a level past the block's capacity fails the run, and nothing else") {
  auto prog = program_of(kQuicksort, "qs", nullptr);
  REQUIRE(prog.has_value());
  std::vector<int64_t> r(300);
  for (size_t i = 0; i < r.size(); ++i) r[i] = static_cast<int64_t>((i * 37) % 101);
  std::vector<int64_t> out;
  CHECK_FALSE(run_ints(*prog, {r}, out, 256));
  CHECK(run_ints(*prog, {r}, out, 1024));
  CHECK(std::is_sorted(out.begin(), out.end()));
}

TEST_CASE("block levels: an error in the descent fails the run (the levels one by one report it)") {
  // A flatten of the children is not laid out: no program.
  CHECK_FALSE(program_of("function hv(a) = if #a < 2 then a else let h = #a / 2 in "
                         "flatten({hv(v) : v in partition(a, [h, #a - h])}) $ hv([1, 2]) $",
                         "hv", nullptr)
                  .has_value());
  // Quicksort whose pivot divides by #a - 3: laid out, and failing at a level with #a = 3.
  std::string why;
  auto prog = program_of(
      "function qz(a) = if #a < 2 then a else let p = a[#a/2] + 0 * (10 / (#a - 3)); "
      "r = {qz(v) : v in [{e in a | e < p}, {e in a | e > p}]} in r[0] ++ {e in a | e == p} ++ r[1] $ qz([3, 1]) $",
      "qz", &why);
  REQUIRE_MESSAGE(prog.has_value(), why);
  std::vector<int64_t> out;
  CHECK(run_ints(*prog, {{4, 3}, {9, 9, 9, 9}}, out));
  CHECK(out == std::vector<int64_t>{3, 4, 9, 9, 9, 9});
  CHECK_FALSE(run_ints(*prog, {{1, 2, 3}}, out));
}

TEST_CASE("block levels: results shorter than their arguments fail the layout's check") {
  auto prog = program_of(
      "function u(a) = if #a < 2 then a else let p = a[#a/2]; r = {u(v) : v in [{e in a | e < p}, {e in a | e > p}]} "
      "in r[0] ++ [p] ++ r[1] $ u([3, 1]) $",
      "u", nullptr);
  REQUIRE(prog.has_value());
  std::vector<int64_t> out;
  CHECK(run_ints(*prog, {{3, 1, 2}}, out));  // no duplicates: every level keeps its length
  CHECK(out == std::vector<int64_t>{1, 2, 3});
  CHECK_FALSE(run_ints(*prog, {{3, 1, 3, 2}}, out));  // a duplicate dropped
}

TEST_CASE("block levels: statements the engine does not run leave the loop to the levels one by one") {
  std::string why;
  auto prog = program_of(
      "function s(a) = if #a < 2 then a else let p = sum(a) / #a; r = {s(v) : v in [{e in a | e < p}, {e in a | e >= p}]} "
      "in r[0] ++ r[1] $ s([3, 1]) $",
      "s", &why);
  CHECK_FALSE(prog.has_value());
  CHECK(!why.empty());
}
