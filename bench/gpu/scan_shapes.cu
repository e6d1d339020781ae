// A tuning tool for the single-pass scans (Note [Scan tile shape] in
// runtime/gpu/device/tile/pass_shape.cuh): runs ndp's scan_pass with several tile shapes
// (threads × items, resident blocks asked of __launch_bounds__) against
// cub::DeviceScan::InclusiveSum in the same process, on the same input, and checks every output
// against CUB's. One line a shape.
//   nvcc -O3 -arch=sm_90 -std=c++17 -I runtime/gpu/device -o scan_shapes bench/gpu/scan_shapes.cu
//   scan_shapes [--log2 28] [--reps 10]
// (meson: bench/scan_shapes; tools/gpu-test.sh shapes runs it.)
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../baselines/gpu/bench_util.cuh"
#include "tile/reduce_fixup.cuh"
#include "tile/reduce_segments.cuh"
#include "tile/scan.cuh"

namespace {

using namespace ndp::runtime::gpu::device;
using namespace bench_util;

/// Small integers as floats (every sum exact), random 64-bit ints (wrapping sums).
template <class T>
__global__ void generate(T* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n; i += int64_t{gridDim.x} * blockDim.x) {
    const uint64_t h = mix(static_cast<uint64_t>(i) + 77);
    if constexpr (sizeof(T) == 4) out[i] = static_cast<T>(static_cast<int>(h % 17) - 8);
    else out[i] = static_cast<T>(h);
  }
}

template <class F, class S, int kMinBlocks>
__global__ void __launch_bounds__(S::kBlock, kMinBlocks)
    flat_scan(const typename F::value_type* in, long long n, unsigned long long* scratch,
              typename F::value_type* out) {
  scan_pass<F, false, S>(ArrayIn<typename F::value_type>{in}, Segs{1, n, nullptr, n}, nullptr, true, scratch, out);
}

/// The tile pass of a segmented reduction with shape S, and what its host does around it
/// (seg_reduce.cpp): the tiles' first boundaries, then the pass, then the fix-up.
template <class F, class S, int kMinBlocks>
__global__ void __launch_bounds__(S::kBlock, kMinBlocks)
    seg_reduce_tiles(const typename F::value_type* in, Segs s, const long long* bounds,
                     SegPair<typename F::value_type>* agg, long long* fix, typename F::value_type* out) {
  reduce_seg_tiles<F, S>(ArrayIn<typename F::value_type>{in}, s, bounds, agg, fix, out);
}

__global__ void tile_bounds(Segs s, long long tile, long long* bounds) {
  const long long ntiles = (s.total + tile - 1) / tile;
  for (long long t = blockIdx.x * 256ll + threadIdx.x; t <= ntiles; t += 256ll * gridDim.x)
    bounds[t] = upper_bound_off(s, t * tile < s.total ? t * tile : s.total);
}

template <class F>
__global__ void __launch_bounds__(kCarryBlock)
    seg_reduce_fixup_near(const SegPair<typename F::value_type>* agg, long long* fix, long long ntiles,
                          typename F::value_type* out) {
  reduce_seg_fixup_near<F>(agg, fix, ntiles, out);
}

template <class F>
__global__ void __launch_bounds__(kCarryBlock)
    seg_reduce_chunks(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                      SegPair<typename F::value_type>* chunk_agg) {
  reduce_seg_chunks<F>(agg, fix, ntiles, chunk_agg);
}

template <class F>
__global__ void __launch_bounds__(kCarryBlock)
    seg_reduce_fixup(const SegPair<typename F::value_type>* agg, const long long* fix, long long ntiles,
                     const SegPair<typename F::value_type>* chunk_agg, typename F::value_type* out) {
  reduce_seg_fixup<F>(agg, fix, ntiles, chunk_agg, out);
}

/// n elements in segments of `length` (which divides n), as an offsets descriptor on the device
/// (freed with cudaFree(s.offsets)).
Segs segments_every(int64_t n, int64_t length) {
  const int64_t m = n / length;
  long long* offsets;
  CK(cudaMalloc(&offsets, (m + 1) * 8));
  gen_offsets<<<1024, 256>>>(reinterpret_cast<int64_t*>(offsets), m + 1, length);
  return Segs{m, n, offsets, 0};
}

/// A kernel's resident blocks an SM, its registers, and the grid of at most `tiles` blocks
/// that is resident at once.
struct Residency {
  int per_sm, registers;
  unsigned grid;
};
template <class Kernel>
Residency residency(Kernel kernel, int block, int64_t tiles) {
  int per_sm = 0, sms = 0, device = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, kernel));
  return Residency{per_sm, attr.numRegs, static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{per_sm} * sms))};
}

template <class T>
struct Run {
  int64_t n;
  T* in;
  T* expected;
  T* out;
  unsigned long long* scratch;
  float cub_ms;
};

template <class T>
Run<T> prepare(int64_t n) {
  Run<T> r{n};
  CK(cudaMalloc(&r.in, n * sizeof(T)));
  CK(cudaMalloc(&r.expected, n * sizeof(T)));
  CK(cudaMalloc(&r.out, n * sizeof(T)));
  CK(cudaMalloc(&r.scratch, (2 + 2 * (n / 256 + 1)) * 8));
  generate<<<1024, 256>>>(r.in, n);
  size_t temp_bytes = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, r.in, r.expected, static_cast<int>(n)));
  void* temp = nullptr;
  CK(cudaMalloc(&temp, temp_bytes));
  r.cub_ms = time_ms([&] { CK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, r.in, r.expected, static_cast<int>(n))); });
  CK(cudaFree(temp));
  return r;
}

template <class T, class S, int kMinBlocks>
void shape(const char* type, const Run<T>& r) {
  using F = Fn<Op::plus, T>;
  auto kernel = flat_scan<F, S, kMinBlocks>;
  const int64_t ntiles = (r.n + S::kTile - 1) / S::kTile;
  const Residency at = residency(kernel, S::kBlock, ntiles);
  cudaFuncAttributes attr;
  CK(cudaFuncGetAttributes(&attr, kernel));
  const float ms = time_ms([&] {
    CK(cudaMemsetAsync(r.scratch, 0, (2 + 2 * ntiles) * 8));
    kernel<<<at.grid, S::kBlock>>>(r.in, r.n, r.scratch, r.out);
  });
  std::vector<T> got(r.n), want(r.n);
  CK(cudaMemcpy(got.data(), r.out, r.n * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(want.data(), r.expected, r.n * sizeof(T), cudaMemcpyDeviceToHost));
  const bool same = std::memcmp(got.data(), want.data(), r.n * sizeof(T)) == 0;
  std::printf("%-4s %4d x %2d  min blocks %2d  regs %3d  resident %2d/SM  smem %6d  ndp %.3f ms  cub %.3f ms  "
              "ratio %.2f  %s\n",
              type, S::kBlock, S::kItems, kMinBlocks, at.registers, at.per_sm, static_cast<int>(attr.sharedSizeBytes),
              ms, r.cub_ms, r.cub_ms / ms, same ? "same" : "DIFFERENT");
}

template <class F, class S, int kMinBlocks>
__global__ void __launch_bounds__(S::kBlock, kMinBlocks)
    seg_scan(const typename F::value_type* in, Segs s, const long long* bounds, unsigned long long* scratch,
             typename F::value_type* out) {
  scan_pass<F, true, S>(ArrayIn<typename F::value_type>{in}, s, bounds, true, scratch, out);
}

/// A segmented inclusive + scan of n f32 over segments of `length` (offsets) with shape S,
/// checked against the host.
template <class S, int kMinBlocks>
void seg_scan_shape(const float* in, const std::vector<float>& host_in, int64_t n, int64_t length) {
  using F = Fn<Op::plus, float>;
  const Segs s = segments_every(n, length);
  const int64_t ntiles = (n + S::kTile - 1) / S::kTile;
  long long* bounds;
  unsigned long long* scratch;
  float* out;
  CK(cudaMalloc(&bounds, (ntiles + 1) * 8));
  CK(cudaMalloc(&scratch, (2 + 2 * ntiles) * 8));
  CK(cudaMalloc(&out, n * 4));
  auto kernel = seg_scan<F, S, kMinBlocks>;
  const Residency at = residency(kernel, S::kBlock, ntiles);
  const float ms = time_ms([&] {
    tile_bounds<<<static_cast<unsigned>(std::min<int64_t>((ntiles + 256) / 256, 65535)), 256>>>(s, S::kTile, bounds);
    CK(cudaMemsetAsync(scratch, 0, (2 + 2 * ntiles) * 8));
    kernel<<<at.grid, S::kBlock>>>(in, s, bounds, scratch, out);
  });
  std::vector<float> got(n);
  CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
  bool same = true;
  float acc = 0;
  for (int64_t i = 0; i < n && same; ++i) {
    acc = (i % length == 0 ? 0.0f : acc) + host_in[i];
    same = got[i] == acc;
  }
  std::printf("seg_scan len %-8lld %4d x %2d  min blocks %2d  resident %2d/SM  ndp %.3f ms  %s\n",
              static_cast<long long>(length), S::kBlock, S::kItems, kMinBlocks, at.per_sm, ms,
              same ? "same" : "DIFFERENT");
  CK(cudaFree(const_cast<long long*>(s.offsets)));
  CK(cudaFree(bounds));
  CK(cudaFree(scratch));
  CK(cudaFree(out));
}

template <class S, int kMinBlocks>
void seg_scan_lengths(const float* in, const std::vector<float>& host_in, int64_t n) {
  for (int64_t length : {int64_t{4}, int64_t{32}, int64_t{1} << 10})
    seg_scan_shape<S, kMinBlocks>(in, host_in, n, length);
}

float copy_ms(int64_t n) {
  float *a, *b;
  CK(cudaMalloc(&a, n * 4));
  CK(cudaMalloc(&b, n * 4));
  const float ms = time_ms([&] { CK(cudaMemcpyAsync(b, a, n * 4, cudaMemcpyDeviceToDevice)); });
  CK(cudaFree(a));
  CK(cudaFree(b));
  return ms;
}

/// A segmented + reduction of n f32 over segments of `length` (an offsets descriptor) with shape
/// S: its time and its share of the device copy's bandwidth (data, offsets and sums counted),
/// checked against the host's sums.
template <class S, int kMinBlocks>
void seg_reduce_shape(const float* in, const std::vector<float>& host_in, int64_t n, int64_t length, float copy) {
  using F = Fn<Op::plus, float>;
  const int64_t m = n / length;
  const Segs s = segments_every(n, length);
  const int64_t ntiles = (n + S::kTile - 1) / S::kTile;
  const int64_t nchunks = (ntiles + kCarryChunk - 1) / kCarryChunk;
  long long *bounds, *fix;
  SegPair<float> *agg, *chunk_agg;
  float* out;
  CK(cudaMalloc(&bounds, (ntiles + 1) * 8));
  CK(cudaMalloc(&fix, ntiles * 8));
  CK(cudaMalloc(&agg, ntiles * sizeof(SegPair<float>)));
  CK(cudaMalloc(&chunk_agg, nchunks * sizeof(SegPair<float>)));
  CK(cudaMalloc(&out, m * 4));
  auto kernel = seg_reduce_tiles<F, S, kMinBlocks>;
  const Residency at = residency(kernel, S::kBlock, ntiles);
  const float ms = time_ms([&] {
    tile_bounds<<<static_cast<unsigned>(std::min<int64_t>((ntiles + 256) / 256, 65535)), 256>>>(s, S::kTile, bounds);
    kernel<<<at.grid, S::kBlock>>>(in, s, bounds, agg, fix, out);
    if (ntiles > 1) {
      seg_reduce_fixup_near<F><<<static_cast<unsigned>((ntiles + kCarryBlock - 1) / kCarryBlock), kCarryBlock>>>(
          agg, fix, ntiles, out);
      if (nchunks > 1) seg_reduce_chunks<F><<<nchunks, kCarryBlock>>>(agg, fix, ntiles, chunk_agg);
      seg_reduce_fixup<F><<<nchunks, kCarryBlock>>>(agg, fix, ntiles, chunk_agg, out);
    }
  });
  std::vector<float> got(m);
  CK(cudaMemcpy(got.data(), out, m * 4, cudaMemcpyDeviceToHost));
  bool same = true;
  for (int64_t k = 0; k < m && same; ++k) {
    float sum = 0;
    for (int64_t i = k * length; i < (k + 1) * length; ++i) sum += host_in[i];
    same = sum == got[k];
  }
  const double bytes = n * 4.0 + m * 4.0 + (m + 1) * 8.0;
  std::printf("seg_reduce len %-8lld %4d x %2d  min blocks %2d  regs %3d  resident %2d/SM  ndp %.3f ms  %3.0f%% of copy  %s\n",
              static_cast<long long>(length), S::kBlock, S::kItems, kMinBlocks, at.registers, at.per_sm, ms,
              100.0 * (bytes / ms) / (n * 8.0 / copy), same ? "same" : "DIFFERENT");
  CK(cudaFree(const_cast<long long*>(s.offsets)));
  CK(cudaFree(bounds));
  CK(cudaFree(fix));
  CK(cudaFree(agg));
  CK(cudaFree(chunk_agg));
  CK(cudaFree(out));
}

template <class S, int kMinBlocks>
void seg_reduce_lengths(const float* in, const std::vector<float>& host_in, int64_t n, float copy) {
  for (int64_t length : {int64_t{1}, int64_t{4}, int64_t{32}, int64_t{1} << 10, int64_t{1} << 15, int64_t{1} << 20})
    seg_reduce_shape<S, kMinBlocks>(in, host_in, n, length, copy);
}

}  // namespace

int main(int argc, char** argv) {
  int log2 = 28;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--log2")) log2 = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
  }
  const int64_t n = int64_t{1} << log2;
  // The shapes in use (ScanShape: 256 x 32 of 4 bytes, 128 x 40 of 8; the segmented reductions'
  // PassShape and WideReduceShape, 128 x 32 of 4 bytes), the default pass shape and the
  // runners-up of the session-6 search (Notes [Scan tile shape], [Segmented reduction shape]).
  {
    Run<float> r = prepare<float>(n);
    shape<float, Shape<256, 32>, 4>("f32", r);
    shape<float, Shape<256, 16>, 6>("f32", r);
    shape<float, Shape<128, 32>, 8>("f32", r);
    shape<float, Shape<256, 40>, 3>("f32", r);
  }
  {
    Run<long long> r = prepare<long long>(n);
    shape<long long, Shape<128, 40>, 4>("i64", r);
    shape<long long, Shape<256, 8>, 6>("i64", r);
    shape<long long, Shape<128, 32>, 5>("i64", r);
  }
  {
    const float copy = copy_ms(n);
    std::printf("device copy of %lld f32: %.3f ms\n", static_cast<long long>(n), copy);
    Run<float> r = prepare<float>(n);
    std::vector<float> host_in(n);
    CK(cudaMemcpy(host_in.data(), r.in, n * 4, cudaMemcpyDeviceToHost));
    seg_scan_lengths<Shape<256, 32>, 4>(r.in, host_in, n);
    seg_scan_lengths<Shape<256, 16>, 6>(r.in, host_in, n);
    seg_reduce_lengths<Shape<256, 16>, 4>(r.in, host_in, n, copy);
    seg_reduce_lengths<Shape<256, 16>, 5>(r.in, host_in, n, copy);
    seg_reduce_lengths<Shape<256, 16>, 6>(r.in, host_in, n, copy);
    seg_reduce_lengths<Shape<128, 32>, 6>(r.in, host_in, n, copy);
  }
  return 0;
}
