// Sequential C++ baseline for qsort.ndp: the same three-way, middle-pivot quicksort, and std::sort.
#include <algorithm>

#include "common.h"

// The NESL algorithm run sequentially: the pivot is the middle element, and lesser, equal and
// greater are packed stably (as NESL's {e in a | ...} does) through a scratch buffer, so the
// recursion tree and every pivot are the same as in ndp; then lesser and greater are sorted.
static void qsort_nesl(int64_t* a, int64_t* tmp, size_t n) {
  if (n < 2) return;
  int64_t pivot = a[n / 2];
  size_t nl = 0, ne = 0;
  for (size_t i = 0; i < n; ++i) {
    nl += a[i] < pivot;
    ne += a[i] == pivot;
  }
  size_t il = 0, ie = nl, ig = nl + ne;
  for (size_t i = 0; i < n; ++i) {
    int64_t e = a[i];
    if (e < pivot) tmp[il++] = e;
    else if (e == pivot) tmp[ie++] = e;
    else tmp[ig++] = e;
  }
  std::copy(tmp, tmp + n, a);
  qsort_nesl(a, tmp, nl);
  qsort_nesl(a + nl + ne, tmp + nl + ne, n - nl - ne);
}

int main(int argc, char** argv) {
  bench::Args args = bench::parse_args(argc, argv, 1000000);
  std::vector<int64_t> input(args.size);
  for (int64_t i = 0; i < args.size; ++i) input[i] = bench::hash(i);

  std::vector<int64_t> work, tmp(args.size);
  auto prepare = [&] { work = input; };
  double secs = bench::best_of(args.runs, prepare, [&] { qsort_nesl(work.data(), tmp.data(), work.size()); });
  bench::report("algorithm", bench::weighted_checksum(work), secs);

  secs = bench::best_of(args.runs, prepare, [&] { std::sort(work.begin(), work.end()); });
  bench::report("std_sort", bench::weighted_checksum(work), secs);
}
