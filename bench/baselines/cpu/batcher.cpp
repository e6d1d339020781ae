// Sequential C++ baseline for batcher.ndp: the same bitonic network, recursive as in NESL.
#include <algorithm>

#include "common.h"

// Merges a bitonic run of power-of-two length n: element i of the first half against element
// i of the second (min stays low, max goes high), then both halves, exactly NESL's network.
static void bitonic_merge(int64_t* a, size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  for (size_t i = 0; i < h; ++i) {
    int64_t x = a[i], y = a[i + h];
    a[i] = std::min(x, y);
    a[i + h] = std::max(x, y);
  }
  bitonic_merge(a, h);
  bitonic_merge(a + h, h);
}

// Sorts both halves, reverses the second to make the whole bitonic, and merges.
static void bitonic_sort(int64_t* a, size_t n) {
  if (n < 2) return;
  size_t h = n / 2;
  bitonic_sort(a, h);
  bitonic_sort(a + h, h);
  std::reverse(a + h, a + n);
  bitonic_merge(a, n);
}

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 1 << 20);
  if (args.size & (args.size - 1)) {
    std::fprintf(stderr, "batcher: size %lld is not a power of two\n", static_cast<long long>(args.size));
    return 2;
  }
  std::vector<int64_t> input(args.size), work;
  for (int64_t i = 0; i < args.size; ++i) input[i] = bench::hash(i);
  double secs = bench::best_of(args.runs, [&] { work = input; }, [&] { bitonic_sort(work.data(), work.size()); });
  bench::report("algorithm", bench::weighted_checksum(work), secs);
}
