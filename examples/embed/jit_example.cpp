// A C++ program that compiles ndp source at run time and calls its functions.
//
//   c++ -std=c++20 jit_example.cpp $(pkg-config --cflags --libs ndp) -o jit_example
//   ./jit_example [interp|cpu|cuda]
#include <ndp/ndp.hpp>

#include <cstdio>
#include <cstring>
#include <random>

int main(int argc, char** argv) {
  ndp::Options options;
  if (argc > 1) {
    if (!std::strcmp(argv[1], "interp")) options.backend = ndp::Backend::Interp;
    if (!std::strcmp(argv[1], "cpu")) options.backend = ndp::Backend::Cpu;
    if (!std::strcmp(argv[1], "cuda")) options.backend = ndp::Backend::Cuda;
  }
  try {
    ndp::Context ctx(options);
    ndp::Program prog = ctx.compile(R"(
      function dot(a, b) = sum({x * y : x in a; y in b});
      function qsort(a) =
        if (#a < 2) then a
        else let pivot = a[#a / 2];
                 lesser = {e in a | e < pivot};
                 equal = {e in a | e == pivot};
                 greater = {e in a | e > pivot};
                 result = {qsort(v) : v in [lesser, greater]}
             in result[0] ++ equal ++ result[1];
      function row_sums(m) = {sum(row) : row in m};
    )", "example.ndp");

    auto dot = prog.function<double(std::span<const double>, std::span<const double>)>("dot");
    auto sort = prog.function<std::vector<int64_t>(std::vector<int64_t>)>("qsort");
    auto row_sums = prog.function<std::vector<double>(ndp::Nested<double>)>("row_sums");

    std::vector<double> x(1000), y(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = y[i] = static_cast<double>(i);
    std::printf("backend %s\n", ndp::backend_name(ctx.backend()));
    std::printf("dot = %.1f\n", dot(x, y));  // sum of i^2 for i < 1000

    std::mt19937_64 rng(1);
    std::vector<int64_t> keys(20);
    for (int64_t& k : keys) k = static_cast<int64_t>(rng() % 100);
    std::vector<int64_t> sorted = sort(keys);
    std::printf("sorted =");
    for (int64_t k : sorted) std::printf(" %lld", static_cast<long long>(k));
    std::printf("\n");

    // [[1, 2], [], [3, 4, 5]] as values plus lengths.
    std::vector<double> sums = row_sums({{1, 2, 3, 4, 5}, {2, 0, 3}});
    std::printf("row sums = %.0f %.0f %.0f\n", sums[0], sums[1], sums[2]);

    sort(std::vector<int64_t>{});  // the empty sequence is fine
    auto nth = ctx.compile("function nth(v, i) = v[i];", "nth.ndp").function<int64_t(std::vector<int64_t>, int64_t)>("nth");
    nth({1, 2, 3}, 7);  // a runtime error: thrown with its place in the source
  } catch (const ndp::Error& e) {
    std::printf("ndp::Error at %s:%u:%u: %s\n", e.file().c_str(), e.line(), e.column(), e.message().c_str());
    return 0;
  }
  std::printf("the error was not raised\n");
  return 1;
}
