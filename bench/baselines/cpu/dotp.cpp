// Sequential C++ baseline for dotp.ndp: the dot product of two vectors of 10^7 doubles. The
// inputs are small integers, so the sum is exact in any order and equals ndp's.
#include <cstdint>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 10000000);
  const size_t n = static_cast<size_t>(args.size);
  std::vector<double> a(n), b(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t k = static_cast<int64_t>(i);
    a[i] = static_cast<double>(bench::hash(k) % 16);
    b[i] = static_cast<double>(bench::hash(k + 4294967296LL) % 16);
  }
  double sum = 0.0;
  double secs = bench::best_of(args.runs, [] {}, [&] {
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += a[i] * b[i];
    sum = s;
  });
  bench::report_float("algorithm", sum, secs);
}
