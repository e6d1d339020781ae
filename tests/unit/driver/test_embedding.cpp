// The embedding API (include/ndp/ndp.hpp) through the installed surface: libndp and the one
// header. Every case runs on every backend available here.
#include <doctest/doctest.h>

#include <cstdio>
#include <thread>

#include <ndp/ndp.hpp>

namespace {

std::vector<ndp::Backend> backends() {
  std::vector<ndp::Backend> all = {ndp::Backend::Interp, ndp::Backend::Cpu};
  try {
    ndp::Context cuda(ndp::Options{ndp::Backend::Cuda});
    all.push_back(ndp::Backend::Cuda);
  } catch (const ndp::Error&) {  // no GPU here
  }
  return all;
}

ndp::Context context(ndp::Backend b) { return ndp::Context(ndp::Options{b}); }

const char* kSource = R"(
function dot(a, b) = sum({x * y : x in a; y in b});
function scale(k, v) = {k * x : x in v};
function qsort(a) =
  if (#a < 2) then a
  else let pivot = a[#a / 2];
           lesser = {e in a | e < pivot};
           equal = {e in a | e == pivot};
           greater = {e in a | e > pivot};
           result = {qsort(v) : v in [lesser, greater]}
       in result[0] ++ equal ++ result[1];
function lengths(s) = {#x : x in s};
function shout(s) = {if (c >= `a) and (c <= `z) then code_char(char_code(c) - 32) else c : c in s};
function halves(v) = (take(v, #v / 2), drop(v, #v / 2));
function count_words(s, c) = (#s, count({x == c : x in s}), s);
function nth(v, i) = v[i];
offset = 100;
function shifted(x) = x + offset;
)";

}  // namespace

TEST_CASE("embedding: functions called with C++ values on every backend") {
  std::vector<double> xs = {1, 2, 3, 4}, ys = {0.5, 0.25, 2, 1};
  for (ndp::Backend b : backends()) {
    CAPTURE(ndp::backend_name(b));
    ndp::Context ctx = context(b);
    CHECK(ctx.backend() == b);
    ndp::Program prog = ctx.compile(kSource, "kernels.ndp");

    auto dot = prog.function<double(std::span<const double>, std::span<const double>)>("dot");
    CHECK(dot(xs, ys) == doctest::Approx(1 * 0.5 + 2 * 0.25 + 3 * 2 + 4 * 1));
    CHECK(dot(std::vector<double>{}, std::vector<double>{}) == 0.0);

    auto scale = prog.function<std::vector<double>(double, std::vector<double>)>("scale");
    CHECK(scale(2.0, xs) == std::vector<double>{2, 4, 6, 8});

    // A polymorphic function, instantiated at the handle's types.
    auto sort_ints = prog.function<std::vector<int64_t>(std::vector<int64_t>)>("qsort");
    CHECK(sort_ints({5, 3, 9, 1, 7, 3, 2, 8}) == std::vector<int64_t>{1, 2, 3, 3, 5, 7, 8, 9});
    auto sort_f32 = prog.function<std::vector<float>(std::span<const float>)>("qsort");
    std::vector<float> fs = {2.5f, -1.0f, 0.0f};
    CHECK(sort_f32(fs) == std::vector<float>{-1.0f, 0.0f, 2.5f});

    // Nested sequences both ways: as ndp::Nested and as vectors of vectors.
    auto lengths = prog.function<std::vector<int64_t>(ndp::Nested<int64_t>)>("lengths");
    CHECK(lengths(ndp::Nested<int64_t>{{1, 2, 3, 4, 5}, {2, 0, 3}}) == std::vector<int64_t>{2, 0, 3});
    auto lengths2 = prog.function<std::vector<int64_t>(std::vector<std::vector<int64_t>>)>("lengths");
    CHECK(lengths2({{1}, {}, {1, 2, 3}}) == std::vector<int64_t>{1, 0, 3});
    auto halves = prog.function<std::pair<std::vector<int32_t>, std::vector<int32_t>>(std::vector<int32_t>)>("halves");
    auto [lo, hi] = halves({1, 2, 3, 4, 5});
    CHECK(lo == std::vector<int32_t>{1, 2});
    CHECK(hi == std::vector<int32_t>{3, 4, 5});

    // Strings, chars, bools and tuples of three.
    auto shout = prog.function<std::string(std::string)>("shout");
    CHECK(shout("Hello, ndp!") == "HELLO, NDP!");
    auto words = prog.function<std::tuple<int64_t, int64_t, std::string>(std::string, char)>("count_words");
    CHECK(words("a b c", ' ') == std::tuple<int64_t, int64_t, std::string>{5, 2, "a b c"});

    // Globals of the program are seen by its functions.
    CHECK(prog.function<int64_t(int64_t)>("shifted")(1) == 101);
    CHECK(prog.eval("qsort([3, 1, 2])") == "[1, 2, 3]");
  }
}

TEST_CASE("embedding: errors carry the place in the source") {
  for (ndp::Backend b : backends()) {
    CAPTURE(ndp::backend_name(b));
    ndp::Context ctx = context(b);
    try {
      ctx.compile("function g(x) = x +;\n", "bad.ndp");
      FAIL("a syntax error compiled");
    } catch (const ndp::Error& e) {
      CHECK(e.file() == "bad.ndp");
      CHECK(e.line() == 1);
      CHECK(e.column() == 19);
      CHECK(std::string(e.what()).find("bad.ndp:1:19: error:") == 0);
    }
    try {
      ctx.compile("function g(x) = x + 1;\nfunction h(x) = g(x) ++ x;\n", "types.ndp");
      FAIL("a type error compiled");
    } catch (const ndp::Error& e) {
      CHECK(e.file() == "types.ndp");
      CHECK(e.line() == 2);
    }

    ndp::Program prog = ctx.compile(kSource, "kernels.ndp");
    auto nth = prog.function<int64_t(std::vector<int64_t>, int64_t)>("nth");
    CHECK(nth({10, 20, 30}, 1) == 20);
    try {
      nth({10, 20, 30}, 5);
      FAIL("an out-of-bounds index ran");
    } catch (const ndp::Error& e) {
      CHECK(e.message() == "Sequence reference (a[i]) out of bounds: index 5, length 3.");
      CHECK(e.file() == "kernels.ndp");
      CHECK(e.line() == 16);
    }
    CHECK(nth({10, 20, 30}, 2) == 30);  // the program still works after an error

    CHECK_THROWS_WITH_AS(prog.function<int64_t(int64_t)>("nope"), "error: the program has no function named 'nope'",
                         ndp::Error);
    CHECK_THROWS_WITH_AS(prog.function<double(std::vector<int64_t>)>("dot"),
                         "error: function 'dot' has type ([a], [a]) -> a :: (a in number), which does not fit the "
                         "handle's [int] -> float",
                         ndp::Error);
    auto lengths = prog.function<std::vector<int64_t>(ndp::Nested<int64_t>)>("lengths");
    CHECK_THROWS_WITH_AS(lengths(ndp::Nested<int64_t>{{1, 2, 3}, {1, 1}}),
                         "error: the lengths of a nested sequence add up to 2, but it holds 3 values", ndp::Error);
    CHECK_THROWS_AS(ctx.compile_file("/nonexistent/file.ndp"), ndp::Error);
  }
}

TEST_CASE("embedding: programs are separate namespaces, and calls are safe from several threads") {
  ndp::Context ctx = context(ndp::Backend::Cpu);
  ndp::Program a = ctx.compile("function g(x) = x + 1;");
  ndp::Program b = ctx.compile("function g(x) = x * 10;");
  auto fa = a.function<int64_t(int64_t)>("g");
  auto fb = b.function<int64_t(int64_t)>("g");
  CHECK(fa(4) == 5);
  CHECK(fb(4) == 40);

  std::vector<int64_t> results(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) results[static_cast<size_t>(t)] = (t % 2 ? fa : fb)(t);
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 8; ++t) CHECK(results[static_cast<size_t>(t)] == (t % 2 ? t + 1 : t * 10));
}

TEST_CASE("embedding: an image that is not a compiled program is refused with the reason") {
  const unsigned char junk[] = "not an image";
  try {
    context(ndp::Backend::Cpu).load(junk, sizeof junk);
    FAIL("junk loaded");
  } catch (const ndp::Error& e) {
    CHECK(e.message() == "compiled ndp program: this is not a compiled ndp program");
    CHECK(e.file().empty());
  }
}

TEST_CASE("embedding: a GPU that does not exist is an error") {
  ndp::Options o;
  o.backend = ndp::Backend::Cuda;
  o.device = 999;
  CHECK_THROWS_AS(ndp::Context{o}, ndp::Error);
}

TEST_CASE("embedding: a cuda context where no GPU is fails clearly") {
  bool has_gpu = backends().size() == 3;
  if (has_gpu) return;
  CHECK_THROWS_AS(ndp::Context(ndp::Options{ndp::Backend::Cuda}), ndp::Error);
  CHECK(ndp::Context().backend() == ndp::Backend::Cpu);
}

TEST_CASE("embedding: arrays stay where the context computes between calls") {
  for (ndp::Backend b : backends()) {
    CAPTURE(ndp::backend_name(b));
    ndp::Context ctx = context(b);
    ndp::Program prog = ctx.compile(kSource, "kernels.ndp");
    std::vector<double> xs = {1, 2, 3, 4};
    ndp::Array<double> a = ctx.upload(xs);
    CHECK(a.size() == 4);
    CHECK(a.to_host() == xs);

    // A chain of calls on an array: on cuda its data never comes back in between.
    auto scale = prog.function<ndp::Array<double>(double, ndp::Array<double>)>("scale");
    ndp::Array<double> b2 = scale(2.0, a);
    ndp::Array<double> b6 = scale(3.0, b2);
    CHECK(b6.size() == 4);
    CHECK(b6.to_host() == std::vector<double>{6, 12, 18, 24});
    CHECK(a.to_host() == xs);  // arguments are not changed

    // Arrays mixed with host values, in and out.
    auto dot = prog.function<double(ndp::Array<double>, std::span<const double>)>("dot");
    CHECK(dot(b2, xs) == doctest::Approx(2 + 8 + 18 + 32));
    auto halves = prog.function<std::pair<ndp::Array<int64_t>, std::vector<int64_t>>(std::vector<int64_t>)>("halves");
    auto [lo, hi] = halves({1, 2, 3, 4, 5});
    CHECK(lo.to_host() == std::vector<int64_t>{1, 2});
    CHECK(hi == std::vector<int64_t>{3, 4, 5});
    auto sort = prog.function<ndp::Array<int64_t>(ndp::Array<int64_t>)>("qsort");
    CHECK(sort(lo).to_host() == std::vector<int64_t>{1, 2});
    CHECK(sort(ctx.upload(std::vector<int64_t>{})).size() == 0);
    CHECK(ndp::Array<double>().size() == 0);
  }
}
