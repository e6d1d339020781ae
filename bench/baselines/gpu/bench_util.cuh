// What the nvcc-built GPU benchmarks share (cub_bench.cu here, bench/gpu/scan_shapes.cu): CUDA
// error checks, the inputs' hash, device allocation, event timing and offsets of equal segments.
// Each program is one translation unit, which includes this once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace bench_util {

/// Timed runs per measurement (--reps).
inline int reps = 10;

inline void cuda_check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
    std::exit(2);
  }
}
#define CK(x) ::bench_util::cuda_check((x), #x, __FILE__, __LINE__)

/// splitmix64's finaliser, as bench/gpu/primitives_bench.cpp hashes its inputs.
__host__ __device__ inline uint64_t mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// Room for n elements of T on the device (at least one).
template <class T>
T* dalloc(int64_t n) {
  void* p = nullptr;
  CK(cudaMalloc(&p, static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(T)));
  return static_cast<T*>(p);
}

/// Median milliseconds of `body` over `reps` runs after a warm-up, each run between two events
/// on the default stream.
template <class F>
double time_ms(F&& body) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  body();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a));
    body();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// out[i] = i·L for i < m: the offsets of segments of L elements.
__global__ void gen_offsets(int64_t* out, int64_t m, int64_t L) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < m; i += int64_t{gridDim.x} * blockDim.x) out[i] = i * L;
}

}  // namespace bench_util
