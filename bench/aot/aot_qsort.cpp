// Quicksort compiled ahead of time (bench/aot/qsort.ndp by `ndp compile`), linked with the runtime
// library alone. Prints the time to the first result beyond the CUDA context's creation, then
// the sort times (qsort_timing.h); jit_qsort prints the same rows for the JIT.
//   build/bench/aot_qsort [cpu|cuda]
#include <cstring>

#include "bench/aot/qsort_timing.h"
#include "qsort_aot.h"

int main(int argc, char** argv) {
  auto start = std::chrono::steady_clock::now();
  ndp::Backend b = argc > 1 && !std::strcmp(argv[1], "cpu") ? ndp::Backend::Cpu : ndp::Backend::Cuda;
  qsort_aot::options().backend = b;
  ndp::Context context(qsort_aot::options());  // creates the CUDA context (on cuda)
  double context_s = bench::seconds_since(start);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<int64_t> first = qsort_aot::qsort(std::vector<int64_t>{3, 1, 2});  // loads the program
  double first_s = bench::seconds_since(t0);
  if (first != std::vector<int64_t>{1, 2, 3}) return 1;
  std::printf("aot        %s: process start to context %.1f ms; then to the first result %.1f ms\n",
              ndp::backend_name(b), context_s * 1e3, first_s * 1e3);
  bench::time_sorts("aot", [](const std::vector<int64_t>& v) { return qsort_aot::qsort(v); });
}
