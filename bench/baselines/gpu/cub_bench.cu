// Issue 6's baselines: the rows of bench/gpu/primitives_bench.cpp done with CUB (CCCL, the CUDA
// toolkit's copy) and cudaMemcpy, one JSON object per line, for bench/run_gpu.py.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o cub_bench cub_bench.cu   (meson: bench/cub_bench)
//   cub_bench [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only a,b,...]
// Same inputs as the ndp side (the same splitmix64 hash of the index, generated on the device),
// the same byte counts, except seg_scan's, which counts CUB's per-element int32 segment keys
// instead of ndp's offsets. CUB gets its temporary storage allocated once, outside the timing,
// and 32-bit item counts (its fastest configuration); DeviceSegmentedReduce reads the same int64
// offsets (begin = offsets, end = offsets + 1) ndp does. Times are the median of --reps runs
// after a warm-up, each between two cudaEvents on the default stream, with their minimum and
// maximum (bench_util.cuh).
#include <cub/cub.cuh>

#include "bench_util.cuh"

namespace {

using namespace bench_util;

/// CUB's two-phase call: size the temporary storage, allocate it, time the call.
struct Temp {
  void* p = nullptr;
  size_t bytes = 0;
  void ensure() { CK(cudaMalloc(&p, std::max<size_t>(bytes, 1))); }
  ~Temp() { cudaFree(p); }
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = o.parse("cub_bench", argc, argv); rc >= 0) return rc;
  const int64_t n = o.n();
  const int ni = static_cast<int>(n);
  report_device("cub_bench", o);

  if (o.wanted("copy")) {
    float* a = dalloc<float>(n);
    float* b = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(a, n, 1);
    const Times times = time_runs([&] { CK(cudaMemcpyAsync(b, a, static_cast<size_t>(n) * 4, cudaMemcpyDeviceToDevice)); });
    emit("copy", "copy", n, -1, times, 2.0 * n * 4, ", \"via\": \"cudaMemcpyAsync\"");
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  if (o.wanted("scan_f32")) {
    float* in = dalloc<float>(n);
    float* out = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 2);
    Temp t;
    CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni));
    t.ensure();
    const Times times = time_runs([&] { CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni)); });
    emit("scan_f32", "cub", n, -1, times, 2.0 * n * 4);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (o.wanted("scan_i64")) {
    int64_t* in = dalloc<int64_t>(n);
    int64_t* out = dalloc<int64_t>(n);
    gen_i64<<<kGrid, kBlock>>>(in, n);
    Temp t;
    CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni));
    t.ensure();
    const Times times = time_runs([&] { CK(cub::DeviceScan::InclusiveSum(t.p, t.bytes, in, out, ni)); });
    emit("scan_i64", "cub", n, -1, times, 2.0 * n * 8);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (o.wanted("reduce_f32")) {
    float* in = dalloc<float>(n);
    float* out = dalloc<float>(1);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 3);
    Temp t;
    CK(cub::DeviceReduce::Sum(t.p, t.bytes, in, out, ni));
    t.ensure();
    const Times times = time_runs([&] { CK(cub::DeviceReduce::Sum(t.p, t.bytes, in, out, ni)); });
    emit("reduce_f32", "cub", n, -1, times, n * 4.0 + 4);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  for (int64_t L0 : kSegLengths) {
    bool do_reduce = o.wanted("seg_reduce_f32"), do_scan = o.wanted("seg_scan_f32");
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
      const Times times = time_runs([&] { CK(cub::DeviceSegmentedReduce::Sum(t.p, t.bytes, in, out, count, off, off + 1)); });
      emit("seg_reduce_f32", "cub", total, L, times, 4.0 * total + 4.0 * count + 8.0 * (count + 1));
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
      const Times times = time_runs([&] { CK(cub::DeviceScan::InclusiveSumByKey(t.p, t.bytes, keys, in, out, static_cast<int>(total))); });
      emit("seg_scan_f32", "cub", total, L, times, 8.0 * total + 4.0 * total, ", \"note\": \"int32 key per element\"");
      CK(cudaFree(keys));
      CK(cudaFree(out));
    }
    CK(cudaFree(in));
  }
  if (o.wanted("pack_f32")) {
    float* in = dalloc<float>(n);
    uint8_t* flags = dalloc<uint8_t>(n);
    float* out = dalloc<float>(n);
    int* count = dalloc<int>(1);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 5);
    gen_flags<<<kGrid, kBlock>>>(flags, n);
    Temp t;
    CK(cub::DeviceSelect::Flagged(t.p, t.bytes, in, flags, out, count, ni));
    t.ensure();
    const Times times = time_runs([&] { CK(cub::DeviceSelect::Flagged(t.p, t.bytes, in, flags, out, count, ni)); });
    int kept = 0;
    CK(cudaMemcpy(&kept, count, sizeof kept, cudaMemcpyDeviceToHost));
    emit("pack_f32", "cub", n, -1, times, 4.0 * n + 1.0 * n + 4.0 * kept + 8);
    CK(cudaFree(in));
    CK(cudaFree(flags));
    CK(cudaFree(out));
    CK(cudaFree(count));
  }
  const int64_t ns = o.sort_n();
  for_each_sort_row(o, [&](const char* name, auto* keys) {
    using Key = std::remove_pointer_t<decltype(keys)>;
    Key* out = dalloc<Key>(ns);
    Temp t;
    auto run = [&] { CK(cub::DeviceRadixSort::SortKeys(t.p, t.bytes, keys, out, static_cast<int>(ns))); };
    run();
    t.ensure();
    const Times times = time_runs(run);
    emit(name, "cub", ns, -1, times, 2.0 * ns * 4,
         std::is_same_v<Key, uint32_t> ? ", \"note\": \"u32 keys in [0, 2^31), all 32 bits sorted\"" : "");
    CK(cudaFree(out));
  });
  CK(cudaDeviceSynchronize());
  return 0;
}
