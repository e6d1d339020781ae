// Compiled images (flatten/compiled_image.h): Flat IR written as bytes and read back into a
// fresh program prints and runs as the original; damaged images are refused with a reason.
#include <doctest/doctest.h>

#include <stdexcept>

#include "exec/cpu/executor.h"
#include "flatten/compiled_image.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// The image of f's program as the one entry `main` (argument: a fresh global).
std::string image_of(Flattened& f) {
  lang::core::Global* arg = f.prog.new_global(lang::core::Global::Kind::Variable, "<argument>");
  arg->scheme.type = f.prog.types.int_();
  flatten::CompiledEntry e;
  e.name = "main";
  e.argument = static_cast<uint32_t>(f.prog.globals.size() - 1);
  e.arg_type = f.prog.types.int_();
  e.result_type = f.flat.functions[f.flat.entry].result_type;
  e.flat = std::move(f.flat);
  std::vector<flatten::SourceBuffer> sources = {{"t.ndp", std::string(f.sm.text(1)), {1, 1}}};
  const flatten::CompiledEntry* entries[] = {&e};
  std::string bytes = flatten::write_image(f.prog, sources, 0, entries);
  f.flat = std::move(e.flat);
  return bytes;
}

std::string run(lang::core::Program& prog, const flatten::Program& p) {
  exec::cpu::CpuExecutor ex(prog, stdout);
  lang::eval::RunResult r = ex.run(p);
  REQUIRE(r.ok);
  return lang::format_value(r.value, p.functions[p.entry].result_type);
}

const char* kPrograms[] = {
    // recursion, filters, appends, nested sequences
    "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
    "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
    "qs([3, 1, 4, 1, 5, 9, 2, 6]) $",
    // datatypes, pairs, floats, chars and strings
    "datatype point(float, float) $ function norm2(point(x, y)) = x * x + y * y $"
    "({norm2(point(a, b)) : a in [1.5, 2.0]; b in [0.5, -1.0]}, \"text\", `c, [[1, 2], [] int, [3]]) $",
    // random numbers (path hashes), scans and reductions
    "let v = {rand(i) : i in dist(100, 20)} in (sum(v) > 0, plus_scan([1, 2, 3]), max_val({x * 2 : x in [4, 9, 2]})) $",
    // loop kernels (Note [Loop kernels]): a shared table read in place, a sequence of each
    // instance's read by row, one written by rep
    "function find(tb, x, lo, hi) = if hi - lo <= 1 then lo else let m = (lo + hi) / 2 in "
    "if tb[m] <= x then find(tb, x, m, hi) else find(tb, x, lo, m) $ "
    "function count_loop(ds, i, counts) = if i == #ds then counts "
    "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ "
    "let sq = {i * i : i in [0:20]} in ({find(sq, x, 0, #sq) : x in [0, 10, 16]}, "
    "{count_loop(d, 0, dist(0, 4)) : d in [[1, 2, 1], [3]]}) $",
};

}  // namespace

TEST_CASE("an image read back prints and runs as the program written") {
  for (const char* src : kPrograms) {
    CAPTURE(src);
    Flattened f(src, /*all_passes=*/true);
    std::string bytes = image_of(f);
    lang::core::Program core;
    flatten::CompiledImage img = flatten::read_image(bytes, core);
    REQUIRE(img.entries.size() == 1);
    CHECK(img.entries[0].name == "main");
    CHECK(img.sources.at(0).name == "t.ndp");
    CHECK(flatten::print_program(img.entries[0].flat) == f.text);
    CHECK(flatten::verify(img.entries[0].flat).empty());
    CHECK(run(core, img.entries[0].flat) == run(f.prog, f.flat));
    const flatten::CompiledEntry* entries[] = {&img.entries[0]};
    CHECK(flatten::image_kernels(entries).size() >= (std::string(src).find('{') != std::string::npos ? 1u : 0u));
  }
  Flattened loops(kPrograms[3], true);
  CHECK(loops.count("loop_kernel(") == 2);  // what the last program tests
}

TEST_CASE("a damaged image is refused with the reason") {
  Flattened f(kPrograms[0], true);
  std::string bytes = image_of(f);
  auto refused = [](std::string b, const char* why) {
    lang::core::Program core;
    try {
      flatten::read_image(b, core);
      FAIL("read");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()).find(why) != std::string::npos);
    }
  };
  refused("not an image at all", "not a compiled ndp program");
  std::string other = bytes;
  other[9] ^= 1;  // the fingerprint of the primitive and op tables
  refused(other, "another version of ndp");
  for (size_t cut : {size_t{20}, bytes.size() / 3, bytes.size() / 2, bytes.size() - 1})
    refused(bytes.substr(0, cut), "");  // truncated anywhere: an error, never a crash
  refused(bytes + "x", "bytes after the end");
}
