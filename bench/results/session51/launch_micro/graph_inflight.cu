// Whether setting a graph's node parameters waits for the graph's earlier launch to finish:
// a chain of 4 kernels that each spin ~50 µs, launched again and again with new arguments,
// against plain launches of the same kernels (host µs per round, and the whole time).
// nvcc -O2 -arch=sm_90 graph_inflight.cu -o graph_inflight -lcuda
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void spin(unsigned long long* out, long long k, long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {}
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(out, (unsigned long long)k);
}
static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main() {
  cudaFree(0);
  CUstream st; cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
  CUfunction f; cudaGetFuncBySymbol((cudaFunction_t*)&f, (const void*)spin);
  CUdeviceptr out; cuMemAlloc(&out, 8); cuMemsetD32(out, 0, 2);
  long long cycles = 100000;  // ~50 µs at 1.98 GHz
  const int K = 4, R = 100;
  long long ks[K]; void* args[K][3];
  for (int i = 0; i < K; ++i) { args[i][0] = &out; args[i][1] = &ks[i]; args[i][2] = &cycles; }
  double t0 = now_us();
  for (int r = 0; r < R; ++r) for (int i = 0; i < K; ++i) { ks[i] = r; cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, st, args[i], nullptr); }
  double t1 = now_us(); cuStreamSynchronize(st); double t2 = now_us();
  std::printf("plain: host %.1f us a round, all %.1f us a round\n", (t1 - t0) / R, (t2 - t0) / R);
  for (int copies : {1, 2, 4}) {
    std::vector<CUgraph> gs(copies); std::vector<CUgraphExec> es(copies); std::vector<std::vector<CUgraphNode>> ns(copies, std::vector<CUgraphNode>(K));
    for (int c = 0; c < copies; ++c) {
      cuGraphCreate(&gs[c], 0);
      for (int i = 0; i < K; ++i) {
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = f; p.gridDimX = p.gridDimY = p.gridDimZ = 1; p.blockDimX = 32; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args[i];
        cuGraphAddKernelNode(&ns[c][i], gs[c], i ? &ns[c][i - 1] : nullptr, i ? 1 : 0, &p);
      }
      cuGraphInstantiate(&es[c], gs[c], 0);
    }
    double set_us = 0, launch_us = 0;
    t0 = now_us();
    for (int r = 0; r < R; ++r) {
      int c = r % copies;
      double a = now_us();
      for (int i = 0; i < K; ++i) {
        ks[i] = r;
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = f; p.gridDimX = p.gridDimY = p.gridDimZ = 1; p.blockDimX = 32; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args[i];
        cuGraphExecKernelNodeSetParams(es[c], ns[c][i], &p);
      }
      double b = now_us();
      cuGraphLaunch(es[c], st);
      launch_us += now_us() - b; set_us += b - a;
    }
    t1 = now_us(); cuStreamSynchronize(st); t2 = now_us();
    std::printf("graph, %d copies: host %.1f us a round (set %.1f, launch %.1f), all %.1f us a round\n", copies, (t1 - t0) / R,
                set_us / R, launch_us / R, (t2 - t0) / R);
  }
  unsigned long long got; cuMemcpyDtoH(&got, out, 8);
  unsigned long long want = 4ull * K * (R * (R - 1) / 2);
  std::printf("sum %llu expected %llu: %s\n", got, want, got == want ? "agree" : "DIFFER");
}
