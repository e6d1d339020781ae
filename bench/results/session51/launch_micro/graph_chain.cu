// Host cost of a linear chain of k kernel nodes, instantiated once, whose every node gets a new
// function, grid and arguments before each launch (cuGraphExecKernelNodeSetParams), against
// plain launches; and a check that every launch ran with its own arguments.
// nvcc -O2 -arch=sm_90 graph_chain.cu -o graph_chain -lcuda
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void kA(unsigned long long* sum, long long* a, long long* b, long long* c, long long* d, long long* e,
                   long long* f, long long* g, long long n, long long m) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(sum, (unsigned long long)(n * 3 + m));
}
__global__ void kB(unsigned long long* sum, long long* a, long long* b, long long* c, long long* d, long long* e,
                   long long* f, long long* g, long long n, long long m) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicAdd(sum, (unsigned long long)(n * 5 + m));
}
__global__ void kC(unsigned long long* sum, long long* a, long long* b, long long* c, long long* d, long long* e,
                   long long* f, long long* g, long long n, long long m) {
  if (threadIdx.x == 0) atomicAdd(sum, (unsigned long long)(n * 7 + m) * (blockIdx.x == 0));
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s; cuGetErrorName(r_, &s); std::printf("%s: %s\n", #x, s); return 1; } } while (0)

int main() {
  cudaFree(0);
  CUstream st; CK(cuStreamCreate(&st, CU_STREAM_NON_BLOCKING));
  CUfunction fs[3];
  cudaGetFuncBySymbol((cudaFunction_t*)&fs[0], (const void*)kA);
  cudaGetFuncBySymbol((cudaFunction_t*)&fs[1], (const void*)kB);
  cudaGetFuncBySymbol((cudaFunction_t*)&fs[2], (const void*)kC);
  const long long mul[3] = {3, 5, 7};
  size_t off = 0, sz = 0; int count = 0;
  while (cuFuncGetParamInfo(fs[0], count, &off, &sz) == CUDA_SUCCESS) { std::printf("param %d offset %zu size %zu\n", count, off, sz); ++count; }
  std::printf("kA has %d params\n", count);
  CUdeviceptr sum; CK(cuMemAlloc(&sum, 8)); CK(cuMemsetD32(sum, 0, 2));
  CUdeviceptr dummy; CK(cuMemAlloc(&dummy, 1 << 20));
  struct Args { CUdeviceptr s, p[7]; long long n, m; void* v[10]; };
  auto fill = [&](Args& a, long long n, long long m) {
    a.s = sum; for (auto& x : a.p) x = dummy; a.n = n; a.m = m;
    a.v[0] = &a.s; for (int i = 0; i < 7; ++i) a.v[1 + i] = &a.p[i]; a.v[8] = &a.n; a.v[9] = &a.m;
  };
  const int N = 4000;
  unsigned long long expect = 0;
  // Plain launches.
  {
    std::vector<Args> args(16);
    double t0 = now_us();
    for (int it = 0; it < N; ++it)
      for (int i = 0; i < 8; ++i) {
        Args& a = args[i]; fill(a, it, i); int f = (it + i) % 3;
        CK(cuLaunchKernel(fs[f], 100 + (i * 37 + it) % 200, 1, 1, 256, 1, 1, 0, st, a.v, nullptr));
        expect += it * mul[f] + i;
      }
    double t1 = now_us(); CK(cuStreamSynchronize(st));
    std::printf("plain launches             host %.2f us/kernel\n", (t1 - t0) / N / 8);
  }
  for (int k : {2, 4, 8, 16}) {
    CUgraph g; CK(cuGraphCreate(&g, 0));
    std::vector<CUgraphNode> nodes(k);
    std::vector<Args> args(k);
    for (int i = 0; i < k; ++i) {
      fill(args[i], 0, 0);
      CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[0]; p.gridDimX = 1; p.gridDimY = 1; p.gridDimZ = 1;
      p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
      CK(cuGraphAddKernelNode(&nodes[i], g, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
    }
    CUgraphExec ex; CK(cuGraphInstantiate(&ex, g, 0));
    double t0 = now_us();
    for (int it = 0; it < N; ++it) {
      for (int i = 0; i < k; ++i) {
        int f = (it + i) % 3; fill(args[i], it, i);
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[f]; p.gridDimX = 100 + (i * 37 + it) % 200; p.gridDimY = 1; p.gridDimZ = 1;
        p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
        CK(cuGraphExecKernelNodeSetParams(ex, nodes[i], &p));
        expect += it * mul[f] + i;
      }
      CK(cuGraphLaunch(ex, st));
    }
    double t1 = now_us(); CK(cuStreamSynchronize(st)); double t2 = now_us();
    std::printf("chain of %2d, set + launch  host %.2f us/kernel (%.2f with the drain)\n", k, (t1 - t0) / N / k, (t2 - t0) / N / k);
    // The set params alone.
    t0 = now_us();
    for (int it = 0; it < N; ++it)
      for (int i = 0; i < k; ++i) {
        int f = (it + i) % 3;
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[f]; p.gridDimX = 100 + (i * 37 + it) % 200; p.gridDimY = 1; p.gridDimZ = 1;
        p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
        CK(cuGraphExecKernelNodeSetParams(ex, nodes[i], &p));
      }
    t1 = now_us();
    std::printf("chain of %2d, set alone    host %.2f us/kernel\n", k, (t1 - t0) / N / k);
    t0 = now_us();
    for (int it = 0; it < N; ++it) CK(cuGraphLaunch(ex, st));
    t1 = now_us(); CK(cuStreamSynchronize(st));
    std::printf("chain of %2d, launch alone host %.2f us/graph\n", k, (t1 - t0) / N);
    for (int i = 0; i < k; ++i) expect += (unsigned long long)N * ((N - 1) * mul[((N - 1) + i) % 3] + i);
    // Each node keeps its function and grid; only the arguments change (a repeated sequence).
    for (int i = 0; i < k; ++i) {
      CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[i % 3]; p.gridDimX = 100 + (i * 37) % 200; p.gridDimY = 1; p.gridDimZ = 1;
      p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
      CK(cuGraphExecKernelNodeSetParams(ex, nodes[i], &p));
    }
    t0 = now_us();
    for (int it = 0; it < N; ++it) {
      for (int i = 0; i < k; ++i) {
        fill(args[i], it, i);
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[i % 3]; p.gridDimX = 100 + (i * 37) % 200; p.gridDimY = 1; p.gridDimZ = 1;
        p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
        CK(cuGraphExecKernelNodeSetParams(ex, nodes[i], &p));
        expect += it * mul[i % 3] + i;
      }
      CK(cuGraphLaunch(ex, st));
    }
    t1 = now_us(); CK(cuStreamSynchronize(st));
    std::printf("chain of %2d, same shapes, new arguments: host %.2f us/kernel\n", k, (t1 - t0) / N / k);
    cuGraphExecDestroy(ex); cuGraphDestroy(g);
    // Building and instantiating a chain.
    t0 = now_us();
    for (int it = 0; it < 200; ++it) {
      CUgraph g2; CK(cuGraphCreate(&g2, 0));
      for (int i = 0; i < k; ++i) {
        CUDA_KERNEL_NODE_PARAMS p{}; p.func = fs[i % 3]; p.gridDimX = 100; p.gridDimY = 1; p.gridDimZ = 1;
        p.blockDimX = 256; p.blockDimY = 1; p.blockDimZ = 1; p.kernelParams = args[i].v;
        CK(cuGraphAddKernelNode(&nodes[i], g2, i ? &nodes[i - 1] : nullptr, i ? 1 : 0, &p));
      }
      CUgraphExec e2; CK(cuGraphInstantiate(&e2, g2, 0));
      cuGraphExecDestroy(e2); cuGraphDestroy(g2);
    }
    t1 = now_us();
    std::printf("chain of %2d, build + instantiate: host %.1f us\n", k, (t1 - t0) / 200);
  }
  unsigned long long got = 0; CK(cuMemcpyDtoH(&got, sum, 8));
  std::printf("sum %llu expected %llu: %s\n", got, expect, got == expect ? "agree" : "DIFFER");
  return 0;
}
