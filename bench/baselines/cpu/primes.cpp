// Sequential C++ baseline for primes.ndp: the same recursive sieve (primes below sqrt(n) first).
#include <cmath>

#include "common.h"

// As in NESL: find the primes below ceil(sqrt(n)) recursively, strike every multiple from 2p
// (step p) in a flag array of length n, and keep the marked positions from 2 up.
static std::vector<int64_t> primes(int64_t n) {
  if (n <= 2) return {};
  std::vector<int64_t> sqr_primes = primes(static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n)))));
  std::vector<char> flags(n, 1);
  for (int64_t p : sqr_primes)
    for (int64_t m = 2 * p; m < n; m += p) flags[m] = 0;
  std::vector<int64_t> out;
  for (int64_t i = 2; i < n; ++i)
    if (flags[i]) out.push_back(i);
  return out;
}

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 10000000);
  std::vector<int64_t> result;
  double secs = bench::best_of(args.runs, [] {}, [&] { result = primes(args.size); });
  bench::report("algorithm", bench::weighted_checksum(result), secs);
}
