// Micro-benchmark: flat and segmented scan/reduce of the CPU runtime against a sequential loop.
//
// Usage: bench_cpu [elements]   (default 2^25). Prints one row per (operation, segment
// length): the runtime's time, a plain sequential loop's time, the runtime's bandwidth
// (bytes read + written per second) and the speedup. Threads: OMP_NUM_THREADS.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "runtime/cpu/primitives.h"

namespace {

using namespace ndp::runtime;

/// The best of a few runs, in milliseconds.
double time_ms(const std::function<void()>& fn) {
  double best = 1e300;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

void row(const char* op, int64_t seg_len, double ms, double seq_ms, double bytes) {
  std::printf("%-22s %12lld %10.2f %10.2f %9.1f %8.2fx\n", op, static_cast<long long>(seg_len), ms, seq_ms,
              bytes / (ms * 1e6), seq_ms / ms);
}

template <class T>
void bench_type(const char* name, int64_t n, const std::vector<int64_t>& seg_lens) {
  std::vector<T> in(n), out(n);
  for (int64_t p = 0; p < n; ++p) in[p] = T(p % 7 + 1);
  char label[64];
  for (int64_t len : seg_lens) {
    int64_t m = len == 0 ? 1 : n / len;
    int64_t used = len == 0 ? n : m * len;
    // An irregular descriptor (offsets arrays), as flattened programs mostly have.
    Segments segs;
    std::vector<int64_t> lengths(m, len == 0 ? n : len);
    if (!ok(make_segments(lengths, segs))) std::abort();
    SegView s = segs.view();
    std::span<const T> vin(in.data(), used);
    std::span<T> vout(out.data(), used);
    std::vector<T> red(m);
    volatile T sink{};

    double scan_ms = time_ms([&] { seg_scan<T>(Op::plus, ScanKind::exclusive, vin, s, vout); });
    double seq_scan_ms = time_ms([&] {
      const int64_t* off = segs.offsets().data();
      for (int64_t k = 0; k < m; ++k) {
        T acc = 0;
        for (int64_t p = off[k]; p < off[k + 1]; ++p) {
          T x = in[p];
          out[p] = acc;
          acc += x;
        }
      }
      sink = out[used - 1];
    });
    std::snprintf(label, sizeof label, "%s +scan", name);
    row(label, len == 0 ? n : len, scan_ms, seq_scan_ms, 2.0 * used * sizeof(T));

    double red_ms = time_ms([&] { seg_reduce<T>(Op::plus, vin, s, red); });
    double seq_red_ms = time_ms([&] {
      const int64_t* off = segs.offsets().data();
      for (int64_t k = 0; k < m; ++k) {
        T acc = 0;
        for (int64_t p = off[k]; p < off[k + 1]; ++p) acc += in[p];
        red[k] = acc;
      }
      sink = red[m - 1];
    });
    std::snprintf(label, sizeof label, "%s +reduce", name);
    row(label, len == 0 ? n : len, red_ms, seq_red_ms, double(used) * sizeof(T) + double(m) * sizeof(T));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t{1} << 25;
  std::printf("elements %lld, threads %d; segment length 'n' = one flat segment\n", static_cast<long long>(n),
              omp_get_max_threads());
  std::printf("%-22s %12s %10s %10s %9s %9s\n", "operation", "seg length", "ms", "seq ms", "GB/s", "speedup");
  std::vector<int64_t> lens = {1, 4, 32, 1024, 32768, 0};
  bench_type<int64_t>("i64", n, lens);
  bench_type<double>("f64", n, lens);
  return 0;
}
