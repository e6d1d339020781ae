// Baselines of issue 21's math-heavy programs, timed in the same run as ndp's:
//   black-scholes N: bench/programs/blackscholes.ndp's formula as a hand-written CUDA kernel over
//     the same N options (one thread an option, doubles, the CUDA SDK's sample's formula);
//   copy N: a device-to-device copy of N doubles, the roof of bench/programs/dotp.ndp (which
//     reads 2N doubles: compare its time with copying N, which reads N and writes N);
//   launch-readback 1: one kernel launch on one element and the copy of its 8 bytes back to
//     the host, timed on the host clock: the least a statement costs that waits for its result
//     (bench/programs/scalar_loop.ndp's statements work on one element).
// Prints one line per baseline: `NAME n N median MS min MS max MS checksum X`.
//
//   nvcc -O3 -arch=sm_90 -o math_baselines bench/baselines/gpu/math_baselines.cu
//   ./math_baselines [N]   (default 10^7)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../cpu/common.h"
#include "bench_util.cuh"

namespace {

/// bench_uniform of blackscholes.ndp, from bench_hash (bench::hash).
__device__ double uniform(int64_t i, int64_t k, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(bench::hash(i + k * 4294967296ll)) / 1073741824.0;
}

__global__ void gen_options(double* s, double* x, double* t, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    s[i] = uniform(i, 1, 5.0, 30.0);
    x[i] = uniform(i, 2, 1.0, 100.0);
    t[i] = uniform(i, 3, 0.25, 10.0);
  }
}

/// The cumulative normal distribution (Abramowitz and Stegun 26.2.17), as blackscholes.ndp's cnd.
__device__ double cnd(double d) {
  double k = 1.0 / (1.0 + 0.2316419 * fabs(d));
  double c = 0.398942280401432678 * exp(-0.5 * d * d) *
             (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429)))));
  return d > 0.0 ? 1.0 - c : c;
}

__global__ void black_scholes(const double* __restrict__ s, const double* __restrict__ x, const double* __restrict__ t,
                              double* __restrict__ price, int64_t n) {
  const double r = 0.02, v = 0.30;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    double sqt = sqrt(t[i]);
    double d1 = (log(s[i] / x[i]) + (r + 0.5 * v * v) * t[i]) / (v * sqt);
    double d2 = d1 - v * sqt;
    price[i] = s[i] * cnd(d1) - x[i] * exp(-r * t[i]) * cnd(d2);
  }
}

__global__ void bump(int64_t* v) { v[0] += 1; }

void report(const char* name, int64_t n, bench_util::Times t, double checksum) {
  std::printf("%s n %lld median %.4f min %.4f max %.4f checksum %.15g\n", name, static_cast<long long>(n), t.median, t.min,
              t.max, checksum);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 10000000;
  bench_util::reps = 20;
  double *s = bench_util::dalloc<double>(n), *x = bench_util::dalloc<double>(n), *t = bench_util::dalloc<double>(n);
  double* price = bench_util::dalloc<double>(n);
  gen_options<<<1024, 256>>>(s, x, t, n);
  CK(cudaGetLastError());
  const int threads = 256;
  const int blocks = static_cast<int>((n + threads - 1) / threads);
  bench_util::Times bs = bench_util::time_runs([&] { black_scholes<<<blocks, threads>>>(s, x, t, price, n); });
  std::vector<double> host(static_cast<size_t>(n));
  CK(cudaMemcpy(host.data(), price, static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (double p : host) sum += p;
  report("black-scholes", n, bs, sum);
  bench_util::Times copy = bench_util::time_runs(
      [&] { CK(cudaMemcpyAsync(price, s, static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToDevice)); });
  report("copy", n, copy, 0);
  int64_t* one = bench_util::dalloc<int64_t>(1);
  CK(cudaMemset(one, 0, 8));
  int64_t back = 0;
  std::vector<double> rounds;
  for (int r = 0; r < 2000; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    bump<<<1, 1>>>(one);
    CK(cudaMemcpy(&back, one, 8, cudaMemcpyDeviceToHost));
    rounds.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(rounds.begin() + 1000, rounds.end());  // the first 1000 warm up
  report("launch-readback", 1, bench_util::Times{rounds[1500], rounds[1000], rounds.back()}, static_cast<double>(back));
  return 0;
}
