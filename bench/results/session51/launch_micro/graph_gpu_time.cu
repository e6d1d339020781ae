// Whether kernels sent as graphs keep the GPU as busy as plain launches: rounds of 11 kernels
// that each spin ~8 µs, plain against a chain graph whose arguments are set each round (GPU-bound:
// the whole time a round is the GPU's); and the round trip of one tiny kernel and a wait.
// nvcc -O2 -arch=sm_90 graph_gpu_time.cu -o graph_gpu_time -lcuda
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
  for (long long cycles : {0LL, 4000LL, 16000LL}) {
    const int K = 11, R = 300;
    long long ks[K]; void* args[K][3];
    for (int i = 0; i < K; ++i) { args[i][0] = &out; args[i][1] = &ks[i]; args[i][2] = &cycles; }
    cuStreamSynchronize(st);
    double t0 = now_us();
    for (int r = 0; r < R; ++r) for (int i = 0; i < K; ++i) { ks[i] = r; cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, st, args[i], nullptr); }
    double t1 = now_us(); cuStreamSynchronize(st); double t2 = now_us();
    std::printf("%6lld cycles: plain  host %.1f, all %.1f us a round of %d\n", cycles, (t1 - t0) / R, (t2 - t0) / R, K);
    CUgraph g; CUgraphExec e; std::vector<CUgraphNode> n(K);
    cuGraphCreate(&g, 0);
    for (int i = 0; i < K; ++i) {
      CUDA_KERNEL_NODE_PARAMS p{}; p.func = f; p.gridDimX = 132; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 256; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args[i];
      cuGraphAddKernelNode(&n[i], g, i ? &n[i - 1] : nullptr, i ? 1 : 0, &p);
    }
    cuGraphInstantiate(&e, g, 0);
    for (int chunk : {11, 4}) {
      cuStreamSynchronize(st);
      t0 = now_us();
      for (int r = 0; r < R; ++r) {
        for (int i = 0; i < K; ++i) {
          ks[i] = r;
          CUDA_KERNEL_NODE_PARAMS p{}; p.func = f; p.gridDimX = 132; p.gridDimY = p.gridDimZ = 1; p.blockDimX = 256; p.blockDimY = p.blockDimZ = 1; p.kernelParams = args[i];
          cuGraphExecKernelNodeSetParams(e, n[i], &p);
        }
        cuGraphLaunch(e, st);
        if (chunk == 4) for (int i = 0; i < 3; ++i) cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, st, args[i], nullptr);
      }
      t1 = now_us(); cuStreamSynchronize(st); t2 = now_us();
      std::printf("%6lld cycles: graph%s host %.1f, all %.1f us a round\n", cycles, chunk == 4 ? " + 3 plain" : "", (t1 - t0) / R, (t2 - t0) / R);
    }
    cuGraphExecDestroy(e); cuGraphDestroy(g);
  }
  // Round trips.
  {
    long long k = 1, c = 0; void* a[3] = {&out, &k, &c};
    const int R = 2000;
    double t0 = now_us();
    for (int r = 0; r < R; ++r) { cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, st, a, nullptr); cuStreamSynchronize(st); }
    double t1 = now_us();
    std::printf("round trip, plain launch + wait: %.1f us\n", (t1 - t0) / R);
    CUgraph g; CUgraphExec e; CUgraphNode nd[2];
    cuGraphCreate(&g, 0);
    CUDA_KERNEL_NODE_PARAMS p{}; p.func = f; p.gridDimX = p.gridDimY = p.gridDimZ = 1; p.blockDimX = 32; p.blockDimY = p.blockDimZ = 1; p.kernelParams = a;
    cuGraphAddKernelNode(&nd[0], g, nullptr, 0, &p);
    cuGraphAddKernelNode(&nd[1], g, &nd[0], 1, &p);
    cuGraphInstantiate(&e, g, 0);
    t0 = now_us();
    for (int r = 0; r < R; ++r) { cuGraphExecKernelNodeSetParams(e, nd[0], &p); cuGraphLaunch(e, st); cuStreamSynchronize(st); }
    t1 = now_us();
    std::printf("round trip, graph of 2 (set) + wait: %.1f us\n", (t1 - t0) / R);
  }
  return 0;
}
