// Issue 6's baselines: the rows of bench/gpu/primitives_bench.cpp done with CUB (CCCL, the CUDA
// toolkit's copy) and cudaMemcpy, one JSON object per line, for bench/run_gpu.py.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o cub_bench cub_bench.cu   (meson: bench/cub_bench)
//   cub_bench [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only a,b,...]
// Same inputs as the ndp side (the same splitmix64 hash of the index, generated on the device),
// the same byte counts, except seg_scan's, which counts CUB's per-element int32 segment keys
// instead of ndp's offsets. CUB gets its temporary storage allocated once, outside the timing,
// and 32-bit item counts (its fastest configuration); DeviceSegmentedReduce reads the same int64
// offsets (begin = offsets, end = offsets + 1) ndp does. Times are the median of --reps runs
// after a warm-up, each between two cudaEvents on the default stream.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.cuh"

namespace {

using namespace bench_util;

// ---- input generators (the same values as the ndp side) ----
__global__ void gen_small_floats(float* out, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<float>(static_cast<int>(mix(seed ^ (static_cast<uint64_t>(i) * 0x632BE59BD9B4E019ull)) % 17) - 8);
}
__global__ void gen_i64(int64_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<int64_t>(mix(static_cast<uint64_t>(i) + 77));
}
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

void emit(const char* bench, const char* impl, int64_t n, int64_t seg_len, double ms, double bytes, const char* extra = "") {
  std::printf("{\"bench\": \"%s\", \"impl\": \"%s\", \"elements\": %lld, \"seg_len\": %s, \"ms\": %.6f, \"bytes\": %.0f, "
              "\"gbps\": %.3f%s}\n",
              bench, impl, static_cast<long long>(n), seg_len < 0 ? "null" : std::to_string(seg_len).c_str(), ms, bytes,
              bytes / (ms * 1e-3) / 1e9, extra);
  std::fflush(stdout);
}

/// CUB's two-phase call: size the temporary storage, allocate it, time the call.
struct Temp {
  void* p = nullptr;
  size_t bytes = 0;
  void ensure() { CK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Temp() { cudaFree(p); }
};

bool wanted(const std::set<std::string>& only, const std::string& name) { return only.empty() || only.count(name) > 0; }

}  // namespace

int main(int argc, char** argv) {
  int log2n = 28, sort_log2 = -1;
  std::set<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc && a != "--help") {
      std::fprintf(stderr, "cub_bench: bad argument %s\n", a.c_str());
      return 2;
    }
    if (a == "--log2") log2n = std::atoi(argv[++i]);
    else if (a == "--sort-log2") sort_log2 = std::atoi(argv[++i]);
    else if (a == "--reps") reps = std::atoi(argv[++i]);
    else if (a == "--only") {
      std::stringstream ss(argv[++i]);
      for (std::string s; std::getline(ss, s, ',');) only.insert(s);
    } else if (a == "--help") {
      std::printf("usage: cub_bench [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only NAME,...]\n");
      return 0;
    } else {
      std::fprintf(stderr, "cub_bench: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (sort_log2 < 0) sort_log2 = std::max(1, log2n - 2);
  if (log2n < 1 || log2n > 30 || reps < 1) {
    std::fprintf(stderr, "cub_bench: bad --log2 or --reps\n");
    return 2;
  }
  const int64_t n = int64_t{1} << log2n;
  const int ni = static_cast<int>(n);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(stderr, "cub_bench: %s, n = 2^%d, sort n = 2^%d, median of %d\n", prop.name, log2n, sort_log2, reps);

  if (wanted(only, "copy")) {
    float* a = dalloc<float>(n);
    float* b = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(a, n, 1);
    double ms = time_ms([&] { CK(cudaMemcpyAsync(b, a, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToDevice)); });
    emit("copy", "copy", n, -1, ms, 2.0 * n * 4, ", \"via\": \"cudaMemcpyAsync\"");
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  if (wanted(only, "scan_f32")) {
    float* in = dalloc<float>(n);
    float* out = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 2);
    Temp t;
    CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni));
    t.ensure();
    double ms = time_ms([&] { CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni)); });
    emit("scan_f32", "cub", n, -1, ms, 2.0 * n * 4);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (wanted(only, "scan_i64")) {
    int64_t* in = dalloc<int64_t>(n);
    int64_t* out = dalloc<int64_t>(n);
    gen_i64<<<kGrid, kBlock>>>(in, n);
    Temp t;
    CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni));
    t.ensure();
    double ms = time_ms([&] { CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni)); });
    emit("scan_i64", "cub", n, -1, ms, 2.0 * n * 8);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (wanted(only, "reduce_f32")) {
    float* in = dalloc<float>(n);
    float* out = dalloc<float>(1);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 3);
    Temp t;
    CK(cub::DeviceReduce::Sum(t.p, t.bytes, in, out, ni));
    t.ensure();
    double ms = time_ms([&] { CK(cub::DeviceReduce::Sum(t.p, t.bytes, in, out, ni)); });
    emit("reduce_f32", "cub", n, -1, ms, n * 4.0 + 4);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  for (int64_t L0 : {int64_t{1}, int64_t{4}, int64_t{32}, int64_t{1024}, int64_t{32768}, int64_t{1} << 20}) {
    bool do_reduce = wanted(only, "seg_reduce_f32"), do_scan = wanted(only, "seg_scan_f32");
    if (!do_reduce && !do_scan) break;
    const int64_t L = std::min(L0, n), count = n / L, total = count * L;
    float* in = dalloc<float>(total);
    gen_small_floats<<<kGrid, kBlock>>>(in, total, 4 + static_cast<uint64_t>(L));
    if (do_reduce) {
      int64_t* off = dalloc<int64_t>(count + 1);
      float* out = dalloc<float>(count);
      gen_offsets<<<kGrid, kBlock>>>(off, count + 1, L);
      Temp t;
      CK(cub::DeviceSegmentedReduce::Sum(t.p, t.bytes, in, out, count, off, off + 1));
      t.ensure();
      double ms = time_ms([&] { CK(cub::DeviceSegmentedReduce::Sum(t.p, t.bytes, in, out, count, off, off + 1)); });
      emit("seg_reduce_f32", "cub", total, L, ms, 4.0 * total + 4.0 * count + 8.0 * (count + 1));
      CK(cudaFree(off));
      CK(cudaFree(out));
    }
    if (do_scan) {
      int32_t* keys = dalloc<int32_t>(total);
      float* out = dalloc<float>(total);
      gen_keys<<<kGrid, kBlock>>>(keys, total, L);
      Temp t;
      CK(cub::DeviceScan::InclusiveSumByKey(t.p, t.bytes, keys, in, out, static_cast<int>(total)));
      t.ensure();
      double ms = time_ms([&] { CK(cub::DeviceScan::InclusiveSumByKey(t.p, t.bytes, keys, in, out, static_cast<int>(total))); });
      emit("seg_scan_f32", "cub", total, L, ms, 8.0 * total + 4.0 * total, ", \"note\": \"int32 key per element\"");
      CK(cudaFree(keys));
      CK(cudaFree(out));
    }
    CK(cudaFree(in));
  }
  if (wanted(only, "pack_f32")) {
    float* in = dalloc<float>(n);
    uint8_t* flags = dalloc<uint8_t>(n);
    float* out = dalloc<float>(n);
    int* count = dalloc<int>(1);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 5);
    gen_flags<<<kGrid, kBlock>>>(flags, n);
    Temp t;
    CK(cub::DeviceSelect::Flagged(t.p, t.bytes, in, flags, out, count, ni));
    t.ensure();
    double ms = time_ms([&] { CK(cub::DeviceSelect::Flagged(t.p, t.bytes, in, flags, out, count, ni)); });
    int kept = 0;
    CK(cudaMemcpy(&kept, count, sizeof kept, cudaMemcpyDeviceToHost));
    emit("pack_f32", "cub", n, -1, ms, 4.0 * n + 1.0 * n + 4.0 * kept + 8);
    CK(cudaFree(in));
    CK(cudaFree(flags));
    CK(cudaFree(out));
    CK(cudaFree(count));
  }
  const int64_t ns = int64_t{1} << sort_log2;
  for (int f = 0; f < 2; ++f) {
    const char* name = f == 0 ? "sort_u32" : "sort_f32";
    if (!wanted(only, name)) continue;
    void* in = dalloc<uint32_t>(ns);
    void* out = dalloc<uint32_t>(ns);
    if (f == 0) gen_sort_u32<<<kGrid, kBlock>>>(static_cast<uint32_t*>(in), ns);
    else gen_sort_f32<<<kGrid, kBlock>>>(static_cast<float*>(in), ns);
    Temp t;
    auto run = [&] {
      if (f == 0)
        CK(cub::DeviceRadixSort::SortKeys(t.p, t.bytes, static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out),
                                          static_cast<int>(ns)));
      else
        CK(cub::DeviceRadixSort::SortKeys(t.p, t.bytes, static_cast<const float*>(in), static_cast<float*>(out),
                                          static_cast<int>(ns)));
    };
    run();
    t.ensure();
    double ms = time_ms(run);
    emit(name, "cub", ns, -1, ms, 2.0 * ns * 4, f == 0 ? ", \"note\": \"u32 keys in [0, 2^31), all 32 bits sorted\"" : "");
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
