// Vectorisation: the shape of the Flat IR produced for representative Core programs.
#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "flatten/flat_ir.h"
#include "flatten/pipeline.h"
#include "flatten/vectorise.h"
#include "frontend/frontend.h"

namespace {

using namespace ndp;

/// Checks every form of `src` and flattens the last one (an expression).
struct Flattened {
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::DiagnosticEngine diags;
  lang::core::Program prog;
  flat::Program flat;
  std::string text;

  /// `all_passes`: the whole pipeline (flat::flatten), else vectorisation alone.
  explicit Flattened(const std::string& src, bool all_passes = false) {
    frontend::Checker checker(prog, diags);
    uint32_t file = sm.add("t.ndp", src);
    const lang::core::Expr* body = nullptr;
    for (const auto* form : frontend::parse_program(ast, sm, file, diags)) {
      auto cf = checker.check(*form);
      REQUIRE_MESSAGE(cf.has_value(), lang::format_diagnostics(sm, diags.all()));
      body = cf->top.body;
    }
    REQUIRE(body);
    flat = all_passes ? flat::flatten(prog, body) : flat::vectorise(prog, body);
    text = flat::print_program(flat);
  }
  size_t count(const std::string& needle) const {
    size_t n = 0;
    for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
  }
};

}  // namespace

TEST_CASE("a scalar expression is one lifted block in a context of one instance") {
  Flattened f("1 + 2 $");
  CHECK(f.flat.functions.size() == 1);
  CHECK(f.count("prim +") == 1);
  CHECK(f.count("lit 1") == 1);
}

TEST_CASE("apply-to-each works on the concatenated elements, free variables replicated") {
  Flattened f("let k = 10 in {x + k : x in [1, 2, 3]} $");
  CHECK(f.count("elements") == 1);
  CHECK(f.count("replicate") == 1);  // k enters the apply-to-each
  CHECK(f.count("nest") == 1);
}

TEST_CASE("a filter packs the instances before the body runs") {
  Flattened f("{10 / x : x in [0, 1, 2] | x > 0} $");
  size_t pack = f.text.find("pack(");
  size_t div = f.text.find("prim /");
  REQUIRE(pack != std::string::npos);
  CHECK(pack < div);
}

TEST_CASE("if runs both branches on packed subsets and merges") {
  Flattened f("{if i > 0 then 10 / i else 0 : i in [0, 1, 2]} $");
  CHECK(f.count("if_nonempty") == 2);
  CHECK(f.count("merge") == 1);
}

TEST_CASE("quicksort: one lifted instance per element type, recursion as a lifted call") {
  Flattened f(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  CHECK(f.flat.functions.size() == 2);
  CHECK(f.count("function qs<int>") == 1);
  CHECK(f.count("call qs<int>") == 2);  // from main, and the recursive call
}

TEST_CASE("polymorphic functions are instantiated per type") {
  Flattened f("function id(x) = x $ (id(1), id(1.5), id(2)) $");
  CHECK(f.count("function id<int>") == 1);
  CHECK(f.count("function id<float>") == 1);
}

TEST_CASE("a function passed by name specialises the callee; calls through it are direct") {
  Flattened f("function sq(x) = x * x $ function ap(g, x) = g(x) $ (ap(sq, 3), ap(sq, 4), ap(negate, 5)) $");
  CHECK(f.count("function ap<int, int>[sq]") == 1);
  CHECK(f.count("function ap<int, int>[negate]") == 1);
  CHECK(f.count("call sq") == 1);
}

TEST_CASE("a call through a function chosen at run time is reported as unsupported") {
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::DiagnosticEngine diags;
  lang::core::Program prog;
  frontend::Checker checker(prog, diags);
  uint32_t file = sm.add("t.ndp", "function sq(x) = x * x $ function ch(b, x) = (if b then sq else negate)(x) $ ch(t, 3) $");
  const lang::core::Expr* body = nullptr;
  for (const auto* form : frontend::parse_program(ast, sm, file, diags)) body = checker.check(*form)->top.body;
  CHECK_THROWS_AS(flat::vectorise(prog, body), flat::Unsupported);
}

#include "flatten/passes/merge_calls.h"
#include "flatten/passes/recursion_to_loops.h"

namespace {

std::string after_passes(Flattened& f) {
  f.flat = flat::recursion_to_loops(flat::merge_calls(std::move(f.flat)));
  return flat::print_program(f.flat);
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("merge_calls: fib's two recursive calls become one call on concatenated arguments") {
  Flattened f("function fib(n) = if n < 2 then n else fib(n-1) + fib(n-2) $ {fib(i) : i in [0:25]} $");
  CHECK(f.count("call fib") == 3);  // main + two recursive
  f.flat = flat::merge_calls(std::move(f.flat));
  std::string text = flat::print_program(f.flat);
  CHECK(occurrences(text, "call fib") == 2);
  CHECK(occurrences(text, "concat(") == 1);
  CHECK(occurrences(text, "slice(") == 2);
}

TEST_CASE("merge_calls leaves a call alone when its result feeds the next call") {
  Flattened f("function g(n) = if n < 1 then 0 else g(g(n - 1) - 1) $ g(3) $");
  f.flat = flat::merge_calls(std::move(f.flat));
  CHECK(occurrences(flat::print_program(f.flat), "concat(") == 0);
}

TEST_CASE("recursion_to_loops: quicksort and fib run as one loop over recursion levels") {
  Flattened q(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  std::string qt = after_passes(q);
  CHECK(occurrences(qt, " = while(") == 1);
  CHECK(occurrences(qt, "call qs") == 1);  // only main's call remains
  Flattened f("function fib(n) = if n < 2 then n else fib(n-1) + fib(n-2) $ {fib(i) : i in [0:25]} $");
  std::string ft = after_passes(f);
  CHECK(occurrences(ft, " = while(") == 1);
  CHECK(occurrences(ft, "call fib") == 1);
}

TEST_CASE("recursion_to_loops keeps host recursion where the shape does not fit") {
  // Two self-calls that depend on each other cannot be merged into one per level.
  Flattened f("function g(n) = if n < 1 then 0 else g(g(n - 1) - 1) $ g(3) $");
  CHECK(occurrences(after_passes(f), " = while(") == 0);
}

TEST_CASE("merge_calls keeps calls that can run an effect in order") {
  Flattened f("function d(s) = let ok = rand_seed(s) in {rand(10) : i in [0:3]} $ (d(1), d(1)) $");
  f.flat = flat::merge_calls(std::move(f.flat));
  CHECK(occurrences(flat::print_program(f.flat), "concat(") == 0);
  Flattened g("function p(s) = s + 1 $ (p(1), p(2)) $");
  g.flat = flat::merge_calls(std::move(g.flat));
  CHECK(occurrences(flat::print_program(g.flat), "concat(") == 1);
}

#include "flatten/passes/cse.h"

TEST_CASE("cse: three filters over one sequence replicate the pivot once") {
  Flattened f("let a = [3, 1, 2]; p = 2 in ({e in a | e < p}, {e in a | e == p}, {e in a | e > p}) $");
  CHECK(f.count("= replicate(lit") == 3);
  f.flat = flat::cse(std::move(f.flat));
  std::string text = flat::print_program(f.flat);
  CHECK(occurrences(text, "= replicate(lit") == 1);
  CHECK(flat::verify(f.flat).empty());
}

TEST_CASE("cse keeps effects and calls apart") {
  Flattened f("function g(x) = x + 1 $ (rand(10), rand(10), g(1), g(1)) $");
  f.flat = flat::cse(std::move(f.flat));
  std::string text = flat::print_program(f.flat);
  CHECK(occurrences(text, "prim rand") == 2);
  CHECK(occurrences(text, "call g") == 2);
}

#include "flatten/passes/fuse_elementwise.h"
#include "flatten/passes/fuse_siblings.h"
#include "flatten/passes/ir_walk.h"

namespace {

/// The number of outputs of every Kernel statement of a program, in walk order.
std::vector<size_t> kernel_outputs(const flat::Program& p) {
  std::vector<size_t> out;
  std::function<void(const flat::Block&)> walk = [&](const flat::Block& b) {
    for (const flat::Stmt& s : b.stmts) {
      if (s.op == flat::Op::Kernel) out.push_back(s.outs.size());
      flat::for_each_sub_block(s, walk);
    }
  };
  for (const flat::Function& fn : p.functions) walk(fn.body);
  return out;
}

}  // namespace

TEST_CASE("fuse_siblings: quicksort's three comparisons with the pivot become one kernel") {
  Flattened q(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  q.flat = flat::fuse_elementwise(flat::recursion_to_loops(flat::merge_calls(flat::cse(std::move(q.flat)))));
  std::string before = flat::print_program(q.flat);
  size_t kernels_before = occurrences(before, "= kernel(");
  q.flat = flat::fuse_siblings(std::move(q.flat));
  CHECK(flat::verify(q.flat).empty());
  std::string after = flat::print_program(q.flat);
  CHECK(occurrences(after, "= kernel(") == kernels_before - 2);
  // The merged kernel reads the elements and the replicated pivot once, and has all six
  // results (three flags, three counts as ints).
  size_t at = after.find("= <(%0, %1)");
  REQUIRE(at != std::string::npos);
  CHECK(after.find("= ==(%0, %1)", at) != std::string::npos);
  CHECK(after.find("= >(%0, %1)", at) != std::string::npos);
  std::vector<size_t> outs = kernel_outputs(q.flat);
  CHECK(std::find(outs.begin(), outs.end(), 6) != outs.end());
}

TEST_CASE("fuse_siblings leaves a kernel whose input is computed after the earlier kernel") {
  // After cse both kernels read the same elements, but the second also reads s, which needs
  // the first kernel's results: it cannot move before it.
  Flattened f("function h(x) = let s = sum({v : v in x | v * 3 > 1}) in {v * 2 + s : v in x} $ h([1, -2, 3]) $");
  f.flat = flat::fuse_elementwise(flat::cse(std::move(f.flat)));
  std::string before = flat::print_program(f.flat);
  REQUIRE(occurrences(before, "= kernel(") == 2);
  size_t first = before.find("= kernel(");
  REQUIRE(before.find("= kernel(", first + 1) != std::string::npos);
  f.flat = flat::fuse_siblings(std::move(f.flat));
  CHECK(flat::verify(f.flat).empty());
  std::string after = flat::print_program(f.flat);
  CHECK(after == before);  // nothing merged, nothing moved
}


namespace {

/// The whole pipeline (flat::flatten) on the last form of src, printed.
std::string flattened(const std::string& src) {
  Flattened f(src, true);
  CHECK(flat::verify(f.flat).empty());
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
