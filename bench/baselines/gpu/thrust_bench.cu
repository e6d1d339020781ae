// Issue 6's second baseline: the rows of bench/gpu/primitives_bench.cpp done with Thrust (CCCL,
// the CUDA toolkit's copy), as a program written against the library's plain interface would do
// them, one JSON object per line, for bench/run_gpu.py.
//   nvcc -O3 -arch=sm_90 -std=c++17 -o thrust_bench thrust_bench.cu   (meson: bench/thrust_bench)
//   thrust_bench [--log2 28] [--sort-log2 LOG2-2] [--reps 10] [--only a,b,...]
// Same inputs as cub_bench.cu (bench_util.cuh's generators); the bytes counted are what each
// Thrust call reads and writes (keys included), so only GB/s, not ratios, follow. Thrust allocates
// its temporary storage inside each call (its default allocator), and reduce returns its sum to
// the host: both are inside the timing, as in any program that calls it. The segmented rows use
// an int32 key per element (reduce_by_key writes the keys of its segments too, counted in its
// bytes); pack is copy_if with the flags as stencil; sorts are thrust::sort.
#include <thrust/copy.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>

#include <string>

#include "bench_util.cuh"

namespace {

using namespace bench_util;

struct IsSet {
  __device__ bool operator()(uint8_t f) const { return f != 0; }
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (int rc = o.parse("thrust_bench", argc, argv); rc >= 0) return rc;
  const int64_t n = o.n();
  const auto policy = thrust::device;
  report_device("thrust_bench", o);

  if (o.wanted("scan_f32")) {
    float* in = dalloc<float>(n);
    float* out = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 2);
    emit("scan_f32", "thrust", n, -1, time_runs([&] { thrust::inclusive_scan(policy, in, in + n, out); }), 2.0 * n * 4);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (o.wanted("scan_i64")) {
    int64_t* in = dalloc<int64_t>(n);
    int64_t* out = dalloc<int64_t>(n);
    gen_i64<<<kGrid, kBlock>>>(in, n);
    emit("scan_i64", "thrust", n, -1, time_runs([&] { thrust::inclusive_scan(policy, in, in + n, out); }), 2.0 * n * 8);
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
  if (o.wanted("reduce_f32")) {
    float* in = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 3);
    float sum = 0;
    emit("reduce_f32", "thrust", n, -1, time_runs([&] { sum = thrust::reduce(policy, in, in + n, 0.0f); }), n * 4.0 + 4);
    CK(cudaFree(in));
  }
  for (int64_t L0 : kSegLengths) {
    const bool do_reduce = o.wanted("seg_reduce_f32"), do_scan = o.wanted("seg_scan_f32");
    if (!do_reduce && !do_scan) break;
    const int64_t L = std::min(L0, n), count = n / L, total = count * L;
    float* in = dalloc<float>(total);
    int32_t* keys = dalloc<int32_t>(total);
    gen_small_floats<<<kGrid, kBlock>>>(in, total, 4 + static_cast<uint64_t>(L));
    gen_keys<<<kGrid, kBlock>>>(keys, total, L);
    if (do_reduce) {
      int32_t* out_keys = dalloc<int32_t>(count);
      float* out = dalloc<float>(count);
      const Times t = time_runs([&] { thrust::reduce_by_key(policy, keys, keys + total, in, out_keys, out); });
      emit("seg_reduce_f32", "thrust", total, L, t, 8.0 * total + 8.0 * count,
           ", \"note\": \"int32 key per element, keys of the segments written\"");
      CK(cudaFree(out_keys));
      CK(cudaFree(out));
    }
    if (do_scan) {
      float* out = dalloc<float>(total);
      const Times t = time_runs([&] { thrust::inclusive_scan_by_key(policy, keys, keys + total, in, out); });
      emit("seg_scan_f32", "thrust", total, L, t, 12.0 * total, ", \"note\": \"int32 key per element\"");
      CK(cudaFree(out));
    }
    CK(cudaFree(keys));
    CK(cudaFree(in));
  }
  if (o.wanted("pack_f32")) {
    float* in = dalloc<float>(n);
    uint8_t* flags = dalloc<uint8_t>(n);
    float* out = dalloc<float>(n);
    gen_small_floats<<<kGrid, kBlock>>>(in, n, 5);
    gen_flags<<<kGrid, kBlock>>>(flags, n);
    int64_t kept = 0;
    const Times t = time_runs([&] { kept = thrust::copy_if(policy, in, in + n, flags, out, IsSet()) - out; });
    emit("pack_f32", "thrust", n, -1, t, 4.0 * n + 1.0 * n + 4.0 * kept);
    CK(cudaFree(in));
    CK(cudaFree(flags));
    CK(cudaFree(out));
  }
  const int64_t ns = o.sort_n();
  for_each_sort_row(o, [&](const char* name, auto* keys) {
    using Key = std::remove_pointer_t<decltype(keys)>;
    Key* work = dalloc<Key>(ns);
    // thrust::sort sorts in place: each run sorts a fresh copy of the keys, made before the
    // timing starts.
    const Times t = time_runs([&] { thrust::sort(policy, work, work + ns); },
                              [&] { CK(cudaMemcpy(work, keys, static_cast<size_t>(ns) * sizeof(Key), cudaMemcpyDeviceToDevice)); });
    emit(name, "thrust", ns, -1, t, 2.0 * ns * 4);
    CK(cudaFree(work));
  });
  CK(cudaDeviceSynchronize());
  return 0;
}
