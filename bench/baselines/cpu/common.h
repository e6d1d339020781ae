// Shared pieces of the sequential C++ baselines: the input hash, the checksum, best-of-N timing.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

// The hash is also device code for the GPU baselines (bench/baselines/gpu/math_baselines.cu).
#ifdef __CUDACC__
#define BENCH_HOST_DEVICE __host__ __device__
#else
#define BENCH_HOST_DEVICE
#endif

namespace bench {

// Must stay bit-for-bit equal to bench_hash in bench/programs/*.ndp. The multiplies are done
// unsigned so they wrap as NESL's 64-bit int does; >> on int64_t is arithmetic in C++20, which
// matches NESL's rshift.
BENCH_HOST_DEVICE inline int64_t hash(int64_t i) {
  int64_t a = static_cast<int64_t>(static_cast<uint64_t>(i) * 6364136223846793005ull + 1442695040888963407ull);
  int64_t b = a ^ (a >> 33);
  int64_t c = static_cast<int64_t>(static_cast<uint64_t>(b) * 2685821657736338717ull);
  int64_t d = c ^ (c >> 29);
  return d & 1073741823;
}

// The number of nonzeros of row i of spmv.ndp's matrix for its bench_shape: 0, 5..15; 1, 8..24;
// 2, a power law (bench_row_length there, which must stay equal to this).
inline int64_t spmv_row_length(int64_t i, int shape) {
  const int64_t h = hash(i + (int64_t{1} << 32));
  if (shape == 0) return 5 + h % 11;
  if (shape == 1) return 8 + h % 17;
  return 1 + 1310720 / (1 + h % 1048576);
}

// sum(x_i * (i + 1)) with 64-bit wrap-around, as bench_checksum computes it in NESL.
inline int64_t weighted_checksum(const std::vector<int64_t>& s) {
  uint64_t acc = 0;
  for (size_t i = 0; i < s.size(); ++i) acc += static_cast<uint64_t>(s[i]) * static_cast<uint64_t>(i + 1);
  return static_cast<int64_t>(acc);
}

// Size and run count from the command line (defaults are the benchmark's full size).
struct Args {
  int64_t size;
  int runs;
};

inline Args parse_args(int argc, char** argv, int64_t default_size) {
  Args a{default_size, 5};
  if (argc > 1) a.size = std::strtoll(argv[1], nullptr, 10);
  if (argc > 2) a.runs = std::atoi(argv[2]);
  return a;
}

// Runs prepare() then, timed, run(), `runs` times, and returns the best wall time in seconds.
// prepare() (untimed) restores the input where the algorithm works in place, so only the
// algorithm is timed, as NESL's time(e) times only e.
template <class Prepare, class Run>
double best_of(int runs, Prepare prepare, Run run) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < runs; ++r) {
    prepare();
    auto t0 = std::chrono::steady_clock::now();
    run();
    auto t1 = std::chrono::steady_clock::now();
    double secs = std::chrono::duration<double>(t1 - t0).count();
    if (secs < best) best = secs;
  }
  return best;
}

// One result line, parsed by bench/run_cpu.py: `<variant> <checksum> <best seconds>`.
inline void report(const char* variant, int64_t check, double secs) {
  std::printf("%s %lld %.9f\n", variant, static_cast<long long>(check), secs);
}

// The same line for a floating-point checksum, printed to round-trip (%.17g); run_cpu.py
// compares it with a relative tolerance (the benchmark entry's "checksum": "float").
inline void report_float(const char* variant, double check, double secs) {
  std::printf("%s %.17g %.9f\n", variant, check, secs);
}

}  // namespace bench
