// How long one launch costs on this machine: host time to enqueue, and GPU time per launch when
// the queue is full, for an empty kernel and a kernel with a 1 KB parameter block.
#include <cstdio>
#include <chrono>
#include <cuda_runtime.h>
__global__ void empty() {}
struct Big { long long v[128]; };
__global__ void big(Big b, long long* out) { if (threadIdx.x == 0 && blockIdx.x == 0 && b.v[0] == 12345) *out = 1; }
__global__ void touch(const long long* in, long long* out, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) out[i] = in[i] + 1; }
int main() {
  cudaStream_t s; cudaStreamCreate(&s);
  long long *a, *b; int n = 1000000; cudaMalloc(&a, n * 8); cudaMalloc(&b, n * 8);
  Big bg{}; 
  for (int rep = 0; rep < 3; ++rep) {
    const int N = 2000;
    for (int kind = 0; kind < 3; ++kind) {
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < N; ++i) {
        if (kind == 0) empty<<<1, 256, 0, s>>>();
        else if (kind == 1) big<<<1, 256, 0, s>>>(bg, a);
        else touch<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
      }
      auto t1 = std::chrono::steady_clock::now();
      cudaStreamSynchronize(s);
      auto t2 = std::chrono::steady_clock::now();
      double enq = std::chrono::duration<double, std::micro>(t1 - t0).count() / N;
      double all = std::chrono::duration<double, std::micro>(t2 - t0).count() / N;
      printf("round %d %-22s enqueue %.2f us/launch, end to end %.2f us/launch\n", rep,
             kind == 0 ? "empty" : kind == 1 ? "1KB params" : "touch 1e6 int64", enq, all);
    }
  }
  // The same 22 empty launches captured as a graph and replayed.
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < 22; ++i) touch<<<(n + 255) / 256, 256, 0, s>>>(a, b, n);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  for (int rep = 0; rep < 3; ++rep) {
    cudaStreamSynchronize(s);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) cudaGraphLaunch(ge, s);
    cudaStreamSynchronize(s);
    auto t2 = std::chrono::steady_clock::now();
    printf("graph of 22 touch launches: %.2f us a replay\n", std::chrono::duration<double, std::micro>(t2 - t0).count() / 100);
  }
  printf("err %s\n", cudaGetErrorString(cudaGetLastError()));
}
