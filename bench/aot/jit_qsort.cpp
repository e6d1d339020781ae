// The same rows as aot_qsort.cpp, with the program compiled at run time by the embedding API.
//   build/bench/jit_qsort [cpu|cuda] SOURCE_ROOT
#include <ndp/ndp.hpp>

#include <cstring>
#include <string>

#include "bench/aot/qsort_timing.h"

int main(int argc, char** argv) {
  auto start = std::chrono::steady_clock::now();
  ndp::Backend b = argc > 1 && !std::strcmp(argv[1], "cpu") ? ndp::Backend::Cpu : ndp::Backend::Cuda;
  std::string root = argc > 2 ? argv[2] : ".";
  ndp::Context context(ndp::Options{b});
  double context_s = bench::seconds_since(start);
  auto t0 = std::chrono::steady_clock::now();
  ndp::Program prog = context.compile_file(root + "/bench/aot/qsort.ndp");
  auto qsort = prog.function<std::vector<int64_t>(std::span<const int64_t>)>("qsort");
  std::vector<int64_t> first = qsort(std::vector<int64_t>{3, 1, 2});
  double first_s = bench::seconds_since(t0);
  if (first != std::vector<int64_t>{1, 2, 3}) return 1;
  std::printf("jit        %s: process start to context %.1f ms; then to the first result %.1f ms\n",
              ndp::backend_name(b), context_s * 1e3, first_s * 1e3);
  bench::time_sorts("jit", [&](const std::vector<int64_t>& v) { return qsort(v); });
}
