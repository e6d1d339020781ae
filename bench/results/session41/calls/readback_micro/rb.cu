// Read-back latency on an idle stream: a DtoH copy + sync, a kernel writing to mapped pinned
// memory + sync, and + a spin on the host word; a sync of an idle stream; the host's time in a
// launch with 1 and 12 parameters; 40 launches then a read-back, three ways.
// Build: nvcc -O2 -arch=sm_90 -o rb rb.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
__global__ void tiny(long long* p) { if (threadIdx.x == 0) p[0] += 1; }
__global__ void to_host(const long long* p, volatile long long* h, long long seq) {
  if (threadIdx.x == 0) { h[0] = p[0]; __threadfence_system(); h[1] = seq; }
}
__global__ void many_params(const long long* a, const long long* b, const long long* c, const long long* d, long long e,
                            long long f, long long g, long long h, long long i, long long j, long long k, long long* out) {
  if (threadIdx.x == 0 && e < 0) out[0] = a[0] + b[0] + c[0] + d[0] + f + g + h + i + j + k;
}
double now() { return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main() {
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  long long* d; cudaMalloc(&d, 64); cudaMemset(d, 0, 64);
  long long* pinned; cudaMallocHost(&pinned, 64);
  long long* mapped; cudaHostAlloc(&mapped, 64, cudaHostAllocMapped);
  long long* mapped_dev; cudaHostGetDevicePointer(&mapped_dev, mapped, 0);
  const int N = 2000;
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<double> a, b, c, l, l2, syncidle;
    for (int i = 0; i < N; ++i) {
      tiny<<<1, 32, 0, s>>>(d);
      double t0 = now();
      cudaMemcpyAsync(pinned, d, 8, cudaMemcpyDeviceToHost, s); cudaStreamSynchronize(s);
      a.push_back(now() - t0);
    }
    for (int i = 0; i < N; ++i) {
      tiny<<<1, 32, 0, s>>>(d);
      double t0 = now();
      to_host<<<1, 32, 0, s>>>(d, mapped_dev, i); cudaStreamSynchronize(s);
      b.push_back(now() - t0);
    }
    for (int i = 0; i < N; ++i) {
      tiny<<<1, 32, 0, s>>>(d);
      double t0 = now();
      long long seq = 1000000 + rep * N + i;
      to_host<<<1, 32, 0, s>>>(d, mapped_dev, seq);
      while (((volatile long long*)mapped)[1] != seq) {}
      c.push_back(now() - t0);
    }
    for (int i = 0; i < N; ++i) { double t0 = now(); cudaStreamSynchronize(s); syncidle.push_back(now() - t0); }
    for (int i = 0; i < N; ++i) {
      double t0 = now(); tiny<<<1, 32, 0, s>>>(d); l.push_back(now() - t0);
      if (i % 100 == 99) cudaStreamSynchronize(s);
    }
    for (int i = 0; i < N; ++i) {
      double t0 = now(); many_params<<<1, 32, 0, s>>>(d, d, d, d, 1, 2, 3, 4, 5, 6, 7, d); l2.push_back(now() - t0);
      if (i % 100 == 99) cudaStreamSynchronize(s);
    }
    cudaStreamSynchronize(s);
    printf("round %d: copy+sync %.2f us; to_host kernel+sync %.2f us; to_host kernel+spin %.2f us; idle sync %.2f us; launch(1 param) %.2f us; launch(12 params) %.2f us\n",
           rep, med(a), med(b), med(c), med(syncidle), med(l), med(l2));
  }
  for (int way = 0; way < 3; ++way) {
    std::vector<double> t;
    for (int i = 0; i < 300; ++i) {
      double t0 = now();
      for (int k = 0; k < 40; ++k) tiny<<<1, 32, 0, s>>>(d);
      long long seq = 5000000 + way * 1000 + i;
      if (way == 0) { cudaMemcpyAsync(pinned, d, 8, cudaMemcpyDeviceToHost, s); cudaStreamSynchronize(s); }
      else if (way == 1) { to_host<<<1, 32, 0, s>>>(d, mapped_dev, seq); cudaStreamSynchronize(s); }
      else { to_host<<<1, 32, 0, s>>>(d, mapped_dev, seq); while (((volatile long long*)mapped)[1] != seq) {} }
      t.push_back(now() - t0);
    }
    printf("40 launches + read-back way %d: %.2f us\n", way, med(t));
  }
  return 0;
}
