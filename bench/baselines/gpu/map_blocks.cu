// Baselines of issue 25's map-block benchmarks, timed in the same run as ndp's
// (bench/run_gpu_map_blocks.py). Each input is generated from bench::hash exactly as the
// matching bench/programs/*.ndp generates it, so the checksums compare:
//   allpairs N: {sum({inter(x, y) : x in xs}) : y in xs} over N 3-D points in doubles
//     (bench/programs/allpairs.ndp), a thread a point with the points tiled in shared memory;
//   fractal N: the escape-time loop (at most 2000 iterations, doubles) per pixel of N x N
//     (bench/programs/fractal.ndp), a thread a pixel;
//   sgemm N: cuBLAS SGEMM of N x N f32 matrices (bench/programs/matmul.ndp's product);
//   segsum N L: CUB DeviceSegmentedReduce::Sum of N int64 in segments of L
//     (bench/programs/segsum.ndp), and copy N: a device copy of N int64, its roof;
//   segsort COUNT L: CUB DeviceSegmentedSort::SortKeys of COUNT segments of L int64 keys
//     (bench/programs/segsort.ndp);
//   radixsort N: CUB DeviceRadixSort::SortKeys of N int64 keys on 32 bits
//     (bench/programs/radix_blocks.ndp's sort).
// Prints one line a row: `NAME n N median MS min MS max MS checksum X`. A last `--batch B`
// times B calls back to back a run and counts a B-th of their time (bench_util::batch).
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -o map_blocks bench/baselines/gpu/map_blocks.cu -lcublas
//   ./map_blocks allpairs 16384 | fractal 2000 | sgemm 2048 | segsum 16777216 32 | copy 16777216
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../cpu/common.h"
#include "bench_util.cuh"

namespace {

constexpr int64_t kTwo32 = 4294967296ll;
constexpr int kThreads = 256;

void report(const char* name, int64_t n, bench_util::Times t, double checksum) {
  std::printf("%s n %lld median %.4f min %.4f max %.4f checksum %.17g\n", name, static_cast<long long>(n), t.median, t.min,
              t.max, checksum);
}

int blocks_for(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

// ---- all pairs ----

__device__ double inter(double3 p, double3 q) {
  double dx = p.x - q.x, dy = p.y - q.y, dz = p.z - q.z;
  return 1.0 / sqrt(dx * dx + dy * dy + dz * dz + 0.01);
}

/// Thread j sums inter(x, y_j) over every x, the points a tile of kTile at a time in shared
/// memory. Blocks of 128 threads: 16384 points make 128 blocks, one on each SM of an H100 (132).
constexpr int kTile = 128;
__global__ void allpairs(const double3* __restrict__ pts, double* __restrict__ out, int64_t n) {
  __shared__ double3 tile[kTile];
  const int64_t j = blockIdx.x * int64_t{kTile} + threadIdx.x;
  const double3 y = pts[j < n ? j : 0];
  double acc = 0.0;
  for (int64_t base = 0; base < n; base += kTile) {
    if (base + threadIdx.x < n) tile[threadIdx.x] = pts[base + threadIdx.x];
    __syncthreads();
    const int64_t m = n - base < kTile ? n - base : kTile;
    for (int64_t t = 0; t < m; ++t) acc += inter(tile[t], y);
    __syncthreads();
  }
  if (j < n) out[j] = acc;
}

void run_allpairs(int64_t n) {
  std::vector<double3> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    host[static_cast<size_t>(i)] = double3{(bench::hash(i) % 1000) / 1000.0, (bench::hash(i + kTwo32) % 1000) / 1000.0,
                                           (bench::hash(i + 2 * kTwo32) % 1000) / 1000.0};
  double3* pts = bench_util::dalloc<double3>(n);
  double* out = bench_util::dalloc<double>(n);
  CK(cudaMemcpy(pts, host.data(), static_cast<size_t>(n) * sizeof(double3), cudaMemcpyHostToDevice));
  bench_util::Times t = bench_util::time_runs([&] { allpairs<<<static_cast<int>((n + kTile - 1) / kTile), kTile>>>(pts, out, n); });
  std::vector<double> r(static_cast<size_t>(n));
  CK(cudaMemcpy(r.data(), out, static_cast<size_t>(n) * sizeof(double), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (double x : r) sum += x;
  report("allpairs", n, t, sum);
}

// ---- escape-time fractal ----

__global__ void fractal(int64_t* __restrict__ out, int64_t n, int64_t limit) {
  const int64_t p = blockIdx.x * int64_t{kThreads} + threadIdx.x;
  if (p >= n * n) return;
  const int64_t x = p % n, y = p / n;
  const double cr = -2.0 + 3.0 * static_cast<double>(x) / static_cast<double>(n);
  const double ci = -1.5 + 3.0 * static_cast<double>(y) / static_cast<double>(n);
  double zr = 0.0, zi = 0.0;
  int64_t k = 0;
  // Rounded after each operation, as fractal.ndp computes it: nvcc would otherwise contract a
  // multiply and an add into one fma, a different function whose counts differ at a few pixels.
  while (k < limit && __dadd_rn(__dmul_rn(zr, zr), __dmul_rn(zi, zi)) <= 4.0) {
    const double t = __dadd_rn(__dsub_rn(__dmul_rn(zr, zr), __dmul_rn(zi, zi)), cr);
    zi = __dadd_rn(__dmul_rn(__dmul_rn(2.0, zr), zi), ci);
    zr = t;
    ++k;
  }
  out[p] = k;
}

void run_fractal(int64_t n) {
  int64_t* out = bench_util::dalloc<int64_t>(n * n);
  bench_util::Times t = bench_util::time_runs([&] { fractal<<<blocks_for(n * n), kThreads>>>(out, n, 2000); });
  std::vector<int64_t> r(static_cast<size_t>(n * n));
  CK(cudaMemcpy(r.data(), out, r.size() * sizeof(int64_t), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int64_t k : r) sum += static_cast<double>(k);
  report("fractal", n, t, sum);
}

// ---- dense matrix product ----

void run_sgemm(int64_t n) {
  std::vector<float> a(static_cast<size_t>(n * n)), bt(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n * n; ++i) {
    a[static_cast<size_t>(i)] = static_cast<float>(bench::hash(i) % 17 - 8);
    bt[static_cast<size_t>(i)] = static_cast<float>(bench::hash(i + kTwo32) % 17 - 8);
  }
  float *da = bench_util::dalloc<float>(n * n), *db = bench_util::dalloc<float>(n * n), *dc = bench_util::dalloc<float>(n * n);
  CK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, bt.data(), bt.size() * 4, cudaMemcpyHostToDevice));
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    std::exit(2);
  }
  const float one = 1.0f, zero = 0.0f;
  const int m = static_cast<int>(n);
  // Column-major: bt's memory is Bt^T and a's is A^T, so C = Bt * A^T = (A * Bt^T)^T, whose
  // memory is matmul.ndp's product row by row.
  bench_util::Times t = bench_util::time_runs(
      [&] { cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, m, m, &one, db, m, da, m, &zero, dc, m); });
  std::vector<float> c(static_cast<size_t>(n * n));
  CK(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float x : c) sum += static_cast<double>(x);
  report("sgemm", n, t, sum);
  cublasDestroy(h);
}

// ---- segmented sum and copy ----

__global__ void gen_values(int64_t* v, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    v[i] = bench::hash(i) % 1000;
}

__global__ void gen_offsets(int64_t* off, int64_t count, int64_t len) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i <= count; i += int64_t{gridDim.x} * blockDim.x)
    off[i] = i * len;
}

void run_segsum(int64_t n, int64_t len) {
  const int64_t count = n / len, total = count * len;
  int64_t *in = bench_util::dalloc<int64_t>(total), *out = bench_util::dalloc<int64_t>(count),
          *off = bench_util::dalloc<int64_t>(count + 1);
  gen_values<<<1024, kThreads>>>(in, total);
  gen_offsets<<<1024, kThreads>>>(off, count, len);
  void* temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, count, off, off + 1));
  CK(cudaMalloc(&temp, bytes ? bytes : 1));
  bench_util::Times t = bench_util::time_runs([&] { CK(cub::DeviceSegmentedReduce::Sum(temp, bytes, in, out, count, off, off + 1)); });
  std::vector<int64_t> r(static_cast<size_t>(count));
  CK(cudaMemcpy(r.data(), out, r.size() * 8, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int64_t x : r) sum += static_cast<double>(x);
  std::printf("segsum n %lld len %lld median %.4f min %.4f max %.4f checksum %.17g\n", static_cast<long long>(total),
              static_cast<long long>(len), t.median, t.min, t.max, sum);
}

__global__ void gen_keys(int64_t* v, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    v[i] = bench::hash(i);
}

/// CUB's segmented sort of `count` segments of `len` 64-bit keys (bench/programs/segsort.ndp);
/// the checksum weighs each key by its position within its segment.
void run_segsort(int64_t count, int64_t len) {
  const int64_t total = count * len;
  int64_t *in = bench_util::dalloc<int64_t>(total), *out = bench_util::dalloc<int64_t>(total),
          *off = bench_util::dalloc<int64_t>(count + 1);
  gen_keys<<<1024, kThreads>>>(in, total);
  gen_offsets<<<1024, kThreads>>>(off, count, len);
  void* temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceSegmentedSort::SortKeys(temp, bytes, in, out, total, count, off, off + 1));
  CK(cudaMalloc(&temp, bytes ? bytes : 1));
  bench_util::Times t = bench_util::time_runs(
      [&] { CK(cub::DeviceSegmentedSort::SortKeys(temp, bytes, in, out, total, count, off, off + 1)); });
  std::vector<int64_t> r(static_cast<size_t>(total));
  CK(cudaMemcpy(r.data(), out, r.size() * 8, cudaMemcpyDeviceToHost));
  uint64_t sum = 0;  // wraps as NESL's ints do
  for (int64_t i = 0; i < total; ++i) sum += static_cast<uint64_t>(r[static_cast<size_t>(i)]) * static_cast<uint64_t>(i % len + 1);
  std::printf("segsort n %lld len %lld median %.4f min %.4f max %.4f checksum %lld\n", static_cast<long long>(total),
              static_cast<long long>(len), t.median, t.min, t.max, static_cast<long long>(static_cast<int64_t>(sum)));
}

/// CUB's radix sort of n 64-bit keys of 30 bits (bench/programs/radix_blocks.ndp's), on the
/// 32 low bits: the digits the NESL program sorts by.
void run_radixsort(int64_t n) {
  int64_t *in = bench_util::dalloc<int64_t>(n), *out = bench_util::dalloc<int64_t>(n);
  gen_keys<<<1024, kThreads>>>(in, n);
  void* temp = nullptr;
  size_t bytes = 0;
  CK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 32));
  CK(cudaMalloc(&temp, bytes ? bytes : 1));
  bench_util::Times t = bench_util::time_runs([&] { CK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 32)); });
  std::vector<int64_t> r(static_cast<size_t>(n));
  CK(cudaMemcpy(r.data(), out, r.size() * 8, cudaMemcpyDeviceToHost));
  uint64_t sum = 0;  // wraps as NESL's ints do
  for (int64_t i = 0; i < n; ++i) sum += static_cast<uint64_t>(r[static_cast<size_t>(i)]) * static_cast<uint64_t>(i + 1);
  std::printf("radixsort n %lld median %.4f min %.4f max %.4f checksum %lld\n", static_cast<long long>(n), t.median, t.min,
              t.max, static_cast<long long>(static_cast<int64_t>(sum)));
}

void run_copy(int64_t n) {
  int64_t *a = bench_util::dalloc<int64_t>(n), *b = bench_util::dalloc<int64_t>(n);
  gen_values<<<1024, kThreads>>>(a, n);
  bench_util::Times t = bench_util::time_runs([&] { CK(cudaMemcpyAsync(b, a, static_cast<size_t>(n) * 8, cudaMemcpyDeviceToDevice)); });
  report("copy", n, t, 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: map_blocks (allpairs N | fractal N | sgemm N | segsum N L | copy N | segsort COUNT L | radixsort N) [--batch B]\n");
    return 2;
  }
  bench_util::reps = 10;
  if (argc >= 5 && !std::strcmp(argv[argc - 2], "--batch")) {
    bench_util::batch = std::max(1, std::atoi(argv[argc - 1]));
    argc -= 2;
  }
  const char* what = argv[1];
  const int64_t n = std::atoll(argv[2]);
  if (!std::strcmp(what, "allpairs")) run_allpairs(n);
  else if (!std::strcmp(what, "fractal")) run_fractal(n);
  else if (!std::strcmp(what, "sgemm")) run_sgemm(n);
  else if (!std::strcmp(what, "segsum") && argc > 3) run_segsum(n, std::atoll(argv[3]));
  else if (!std::strcmp(what, "copy")) run_copy(n);
  else if (!std::strcmp(what, "segsort") && argc > 3) run_segsort(n, std::atoll(argv[3]));
  else if (!std::strcmp(what, "radixsort")) run_radixsort(n);
  else return 2;
  return 0;
}
