// A C++ program that calls ndp functions compiled ahead of time: no compiler at run time.
//
//   ndp compile kernels.ndp -o kernels --target=cpu
//   c++ -std=c++20 aot_example.cpp kernels.o $(pkg-config --cflags --libs ndp-runtime) -o aot_example
#include "kernels.h"

#include <cstdio>

int main() {
  std::vector<double> a = {1, 2, 3}, b = {4, 5, 6};
  std::printf("dot = %g\n", kernels::dot(a, b));

  std::vector<int64_t> keys = {5, 3, 9, 1, 7, 3};
  std::printf("sorted =");
  for (int64_t k : kernels::qsort(keys)) std::printf(" %lld", static_cast<long long>(k));
  std::printf("\n");

  std::printf("scaled =");  // scale_factor, a global of the program, was compiled in
  for (int64_t x : kernels::scaled(std::vector<int64_t>{1, 2, 3})) std::printf(" %lld", static_cast<long long>(x));
  std::printf("\n");

  auto [total, largest, count] = kernels::stats(std::vector<double>{1.5, 2.5, -4.0});
  std::printf("stats = %g %g %lld\n", total, largest, static_cast<long long>(count));

  std::printf("average = %lld\n", static_cast<long long>(kernels::average(std::vector<int64_t>{4, 8, 9})));
  std::printf("joined =");
  for (int64_t x : kernels::joined(std::vector<int64_t>{1, 2}, std::vector<int64_t>{3})) std::printf(" %lld", static_cast<long long>(x));
  std::printf("\n");

  try {
    kernels::nth(std::vector<int64_t>{1, 2}, 5);
  } catch (const ndp::Error& e) {
    std::printf("ndp::Error at %s:%u:%u: %s\n", e.file().c_str(), e.line(), e.column(), e.message().c_str());
  }
}
