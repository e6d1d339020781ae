// Sequential C++ baseline for muladd.ndp: r[i] = a[i] * b[i] + c[i] over 10^7 doubles, into a
// result allocated once outside the timing (as ndp writes a fresh vector each run). The inputs
// are small integers, so the checksum (the sum, truncated) is exact in any order.
#include <cstdint>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 10000000);
  const size_t n = static_cast<size_t>(args.size);
  std::vector<double> a(n), b(n), c(n), r(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(i);
    a[i] = static_cast<double>(bench::hash(k) % 16);
    b[i] = static_cast<double>(bench::hash(k + 4294967296LL) % 16);
    c[i] = static_cast<double>(bench::hash(k + 8589934592LL) % 16);
  }
  double secs = bench::best_of(args.runs, [] {}, [&] {
    for (size_t i = 0; i < n; ++i) r[i] = a[i] * b[i] + c[i];
  });
  double sum = 0.0;
  for (double v : r) sum += v;
  bench::report("algorithm", static_cast<int64_t>(sum), secs);
}
