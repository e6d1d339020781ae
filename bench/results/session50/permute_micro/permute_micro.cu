// Session 50: what a counting-sort pass's deferred permute costs, and what bounds it. The places
// of one 8-bit pass over 10^6 random keys in blocks of 1000 (each block's keys to its buckets'
// runs, as radix_blocks.ndp's place loop gives them), then kernels that move 8-byte keys there:
//   mark_place     the shipped kernel: atomicOr a bit a target, move where it was clear
//   mark_always    the same, the move not waiting for the atomic's answer
//   red_place      red.or (no answer), move always: duplicates found by a popcount after
//   epoch_exch     a 32-bit stamp a target: atomicExch of this call's number, a duplicate where
//                  the old stamp is this call's (no zeroing, no two targets on one word)
//   scatter        the move alone (no check)
//   copy           out[p] = v[p] (the roof)
// Build: nvcc -O3 -arch=sm_90 -o permute_micro permute_micro.cu
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

__global__ void mark_place(const long long* v, const long long* idx, long long n, unsigned* marks, long long* out, unsigned long long* word) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) {
    long long t = idx[p];
    if (t < 0 || t >= n) { atomicMin(word, (unsigned long long)p); continue; }
    unsigned bit = 1u << (t & 31);
    if (atomicOr(&marks[t >> 5], bit) & bit) atomicMin(word, (unsigned long long)p);
    else out[t] = v[p];
  }
}
__global__ void mark_always(const long long* v, const long long* idx, long long n, unsigned* marks, long long* out, unsigned long long* word) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) {
    long long t = idx[p];
    if (t < 0 || t >= n) { atomicMin(word, (unsigned long long)p); continue; }
    out[t] = v[p];
    unsigned bit = 1u << (t & 31);
    if (atomicOr(&marks[t >> 5], bit) & bit) atomicMin(word, (unsigned long long)p);
  }
}
__global__ void red_place(const long long* v, const long long* idx, long long n, unsigned* marks, long long* out, unsigned long long* word) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) {
    long long t = idx[p];
    if (t < 0 || t >= n) { atomicMin(word, (unsigned long long)p); continue; }
    out[t] = v[p];
    atomicOr(&marks[t >> 5], 1u << (t & 31));  // result unused: red.global.or
  }
}
__global__ void epoch_exch(const long long* v, const long long* idx, long long n, unsigned* stamps, unsigned epoch, long long* out, unsigned long long* word) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) {
    long long t = idx[p];
    if (t < 0 || t >= n) { atomicMin(word, (unsigned long long)p); continue; }
    out[t] = v[p];
    if (atomicExch(&stamps[t], epoch) == epoch) atomicMin(word, (unsigned long long)p);
  }
}
__global__ void scatter(const long long* v, const long long* idx, long long n, long long* out) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) out[idx[p]] = v[p];
}
__global__ void copy(const long long* v, long long n, long long* out) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < n; p += (long long)gridDim.x * blockDim.x) out[p] = v[p];
}
__global__ void zero(unsigned* m, long long w) {
  for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < w; p += (long long)gridDim.x * blockDim.x) m[p] = 0;
}

int main() {
  const long long n = 1000000, block = 1000;
  std::vector<long long> keys(n), places(n);
  unsigned long long s = 12345;
  for (auto& k : keys) { s = s * 6364136223846793005ull + 1442695040888963407ull; k = (long long)(s >> 34); }
  const long long nb = (n + block - 1) / block;
  std::vector<long long> counts(nb * 256, 0), starts(nb * 256);
  for (long long i = 0; i < n; ++i) counts[(i / block) * 256 + (keys[i] & 255)]++;
  long long at = 0;
  for (int j = 0; j < 256; ++j) for (long long b = 0; b < nb; ++b) { starts[b * 256 + j] = at; at += counts[b * 256 + j]; }
  for (long long i = 0; i < n; ++i) places[i] = starts[(i / block) * 256 + (keys[i] & 255)]++;
  long long *v, *idx, *out; unsigned* marks; unsigned long long* word;
  const long long words = (n + 31) / 32;
  cudaMalloc(&v, n * 8); cudaMalloc(&idx, n * 8); cudaMalloc(&out, n * 8); cudaMalloc(&marks, words * 4); cudaMalloc(&word, 8);
  cudaMemcpy(v, keys.data(), n * 8, cudaMemcpyHostToDevice);
  cudaMemcpy(idx, places.data(), n * 8, cudaMemcpyHostToDevice);
  cudaMemset(word, 0xff, 8);
  unsigned* stamps; cudaMalloc(&stamps, n * 4); cudaMemset(stamps, 0, n * 4);
  unsigned epoch = 0;
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  const int threads = 256, grid = (int)((n + threads - 1) / threads), grid_cap = 1056;
  for (int g : {grid, grid_cap}) {
    auto time = [&](const char* name, auto launch) {
      for (int w = 0; w < 3; ++w) launch();
      float best = 1e9;
      for (int r = 0; r < 20; ++r) {
        cudaEventRecord(a); launch(); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
      }
      std::printf("grid %5d %-12s %7.2f us\n", g, name, best * 1000);
    };
    time("mark_place", [&] { zero<<<122, 256>>>(marks, words); mark_place<<<g, threads>>>(v, idx, n, marks, out, word); });
    time("mark_always", [&] { zero<<<122, 256>>>(marks, words); mark_always<<<g, threads>>>(v, idx, n, marks, out, word); });
    time("red_place", [&] { zero<<<122, 256>>>(marks, words); red_place<<<g, threads>>>(v, idx, n, marks, out, word); });
    time("epoch_exch", [&] { epoch_exch<<<g, threads>>>(v, idx, n, stamps, ++epoch, out, word); });
    time("zero only", [&] { zero<<<122, 256>>>(marks, words); });
    time("scatter", [&] { scatter<<<g, threads>>>(v, idx, n, out); });
    time("copy", [&] { copy<<<g, threads>>>(v, n, out); });
  }
  unsigned long long w; cudaMemcpy(&w, word, 8, cudaMemcpyDeviceToHost);
  std::printf("failure word %llx (all ones: none)\n", w);
  return 0;
}
