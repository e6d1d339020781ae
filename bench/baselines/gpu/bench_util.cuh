// What the nvcc-built GPU benchmarks share (cub_bench.cu and thrust_bench.cu here,
// bench/gpu/scan_shapes.cu): CUDA error checks, the inputs' hash and generators, device
// allocation, event timing with its spread, the JSON rows and the command line.
// Each program is one translation unit, which includes this once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace bench_util {

/// Timed runs per measurement (--reps).
inline int reps = 10;
/// Calls of the body a timed run makes back to back, its time divided among them: 1, or more
/// to measure a call as it runs in a loop of calls, its launch hidden behind the one before
/// (the runners give the ndp programs the same number: bench/run_gpu_map_blocks.py --batch).
inline int batch = 1;

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

/// The times of one row: the median of `reps` runs after a warm-up, and their spread.
struct Times {
  double median, min, max;
};

/// Times `body` over `reps` runs after a warm-up, each between two events on the default stream;
/// `setup` runs before each, untimed (a sort's fresh copy of its input). With `batch` > 1 a run
/// is that many calls back to back, a timing their mean, and `setup` runs once a run, before
/// them all (so a body that changes its input, a sort in place, times sorted input after its
/// first call).
template <class F, class Setup>
Times time_runs(F&& body, Setup&& setup) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  setup();
  body();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    setup();
    CK(cudaEventRecord(a));
    for (int k = 0; k < batch; ++k) body();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    CK(cudaGetLastError());
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / batch);
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::sort(t.begin(), t.end());
  return Times{t[t.size() / 2], t.front(), t.back()};
}
template <class F>
Times time_runs(F&& body) {
  return time_runs(body, [] {});
}
/// Median milliseconds of `body` (time_runs).
template <class F>
double time_ms(F&& body) {
  return time_runs(body).median;
}

/// out[i] = i·L for i < m: the offsets of segments of L elements.
__global__ void gen_offsets(int64_t* out, int64_t m, int64_t L) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < m; i += int64_t{gridDim.x} * blockDim.x) out[i] = i * L;
}

// ---- the baselines' inputs: the same values as bench/gpu/primitives_bench.cpp's ----

__global__ void gen_small_floats(float* out, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<float>(static_cast<int>(mix(seed ^ (static_cast<uint64_t>(i) * 0x632BE59BD9B4E019ull)) % 17) - 8);
}
__global__ void gen_i64(int64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<int64_t>(mix(static_cast<uint64_t>(i) + 77));
}
/// The segment number of every element, for segments of L (CUB's and Thrust's by-key passes).
__global__ void gen_keys(int32_t* out, int64_t n, int64_t L) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<int32_t>(i / L);
}
__global__ void gen_flags(uint8_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<uint8_t>(mix(static_cast<uint64_t>(i) ^ 0xF1A65ull) >> 63);
}
__global__ void gen_sort_u32(uint32_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<uint32_t>(mix(static_cast<uint64_t>(i) + 999) >> 33);
}
__global__ void gen_sort_f32(float* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<float>(static_cast<int32_t>(mix(static_cast<uint64_t>(i) + 4242) >> 32)) * (1.0f / 256);
}
constexpr unsigned kGrid = 4096, kBlock = 256;
/// The segment lengths of the segmented rows.
constexpr int64_t kSegLengths[] = {1, 4, 32, 1024, 32768, int64_t{1} << 20};

/// One row, as bench/run_gpu.py reads it.
inline void emit(const char* bench, const char* impl, int64_t n, int64_t seg_len, Times t, double bytes,
                 const char* extra = "") {
  std::printf("{\"bench\": \"%s\", \"impl\": \"%s\", \"elements\": %lld, \"seg_len\": %s, \"ms\": %.6f, "
              "\"min_ms\": %.6f, \"max_ms\": %.6f, \"bytes\": %.0f, \"gbps\": %.3f%s}\n",
              bench, impl, static_cast<long long>(n), seg_len < 0 ? "null" : std::to_string(seg_len).c_str(), t.median,
              t.min, t.max, bytes, bytes / (t.median * 1e-3) / 1e9, extra);
  std::fflush(stdout);
}

/// The baselines' command line: [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only a,b,...].
struct Options {
  int log2n = 28, sort_log2 = -1;
  std::set<std::string> only;
  /// -1 to go on, else the exit status.
  int parse(const char* program, int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--help") {
        std::printf("usage: %s [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only NAME,...]\n", program);
        return 0;
      }
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: bad argument %s\n", program, a.c_str());
        return 2;
      }
      if (a == "--log2") log2n = std::atoi(argv[++i]);
      else if (a == "--sort-log2") sort_log2 = std::atoi(argv[++i]);
      else if (a == "--reps") reps = std::atoi(argv[++i]);
      else if (a == "--only") {
        std::stringstream ss(argv[++i]);
        for (std::string s; std::getline(ss, s, ',');) only.insert(s);
      } else {
        std::fprintf(stderr, "%s: unknown argument %s\n", program, a.c_str());
        return 2;
      }
    }
    if (sort_log2 < 0) sort_log2 = std::max(1, log2n - 2);
    if (log2n < 1 || log2n > 30 || sort_log2 < 1 || sort_log2 > 30 || reps < 1) {
      std::fprintf(stderr, "%s: bad --log2, --sort-log2 or --reps\n", program);
      return 2;
    }
    return -1;
  }
  bool wanted(const std::string& name) const { return only.empty() || only.count(name) > 0; }
  int64_t n() const { return int64_t{1} << log2n; }
  int64_t sort_n() const { return int64_t{1} << sort_log2; }
};

/// The sort rows: for each of sort_u32 and sort_f32 that `o` wants, o.sort_n() generated keys on
/// the device, handed to body(name, keys) as uint32_t* or float*, and freed after.
template <class Body>
void for_each_sort_row(const Options& o, Body&& body) {
  const int64_t ns = o.sort_n();
  if (o.wanted("sort_u32")) {
    uint32_t* keys = dalloc<uint32_t>(ns);
    gen_sort_u32<<<kGrid, kBlock>>>(keys, ns);
    body("sort_u32", keys);
    CK(cudaFree(keys));
  }
  if (o.wanted("sort_f32")) {
    float* keys = dalloc<float>(ns);
    gen_sort_f32<<<kGrid, kBlock>>>(keys, ns);
    body("sort_f32", keys);
    CK(cudaFree(keys));
  }
}

/// The device and sizes, on stderr.
inline void report_device(const char* program, const Options& o) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "%s: %s, n = 2^%d, sort n = 2^%d, median of %d\n", program, prop.name, o.log2n, o.sort_log2, reps);
}

}  // namespace bench_util
