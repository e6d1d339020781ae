// Host cost of launching small kernels on this machine: plain launches (few and many
// parameters), alternating kernels, cudaLaunchKernelEx, and a captured graph replayed with each
// node's parameters set anew (what batching a pass's launches into a graph would cost).
// nvcc -O2 -arch=sm_90 launch_micro.cu -o launch_micro -lcuda
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

struct P16 { long long* p[16]; };
__global__ void k1(long long* a) { if (a && threadIdx.x == 1000) a[0] = 1; }
__global__ void k16(P16 s) { if (s.p[0] && threadIdx.x == 1000) s.p[0][0] = 1; }
__global__ void k16b(P16 s) { if (s.p[1] && threadIdx.x == 1000) s.p[1][0] = 2; }
__global__ void k16c(long long* a, long long* b, long long* c, long long* d, long long* e, long long* f, long long* g,
                     long long* h, long long n, long long m, long long o, long long q) {
  if (a && threadIdx.x == 1000) a[0] = n + m + o + q;
}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main() {
  cudaStream_t st;
  cudaStreamCreate(&st);
  long long* buf;
  cudaMalloc(&buf, 1 << 20);
  P16 s{};
  for (int i = 0; i < 16; ++i) s.p[i] = buf + i;
  const int N = 20000;
  auto bench = [&](const char* name, auto&& body, int per) {
    body(); cudaStreamSynchronize(st);
    double t0 = now_us();
    for (int i = 0; i < N; ++i) body();
    double t1 = now_us();
    cudaStreamSynchronize(st);
    double t2 = now_us();
    std::printf("%-48s host %.2f us/launch (incl. drain %.2f)\n", name, (t1 - t0) / N / per, (t2 - t0) / N / per);
  };
  bench("1 param, grid 1", [&] { k1<<<1, 256, 0, st>>>(buf); }, 1);
  bench("1 param, grid 1000", [&] { k1<<<1000, 256, 0, st>>>(buf); }, 1);
  bench("struct of 16 pointers", [&] { k16<<<100, 256, 0, st>>>(s); }, 1);
  bench("12 scalar params", [&] { k16c<<<100, 256, 0, st>>>(buf, buf, buf, buf, buf, buf, buf, buf, 1, 2, 3, 4); }, 1);
  bench("alternating 3 kernels", [&] {
    k1<<<100, 256, 0, st>>>(buf); k16<<<100, 256, 0, st>>>(s); k16b<<<100, 256, 0, st>>>(s); }, 3);
  bench("default stream", [&] { k1<<<100, 256>>>(buf); }, 1);
  {
    cudaLaunchConfig_t cfg{}; cfg.gridDim = 100; cfg.blockDim = 256; cfg.stream = st;
    bench("cudaLaunchKernelEx", [&] { cudaLaunchKernelEx(&cfg, k1, buf); }, 1);
  }
  // A graph of 11 nodes, captured once; each replay sets every node's parameters, then launches.
  const int K = 11;
  cudaGraph_t graph; cudaGraphExec_t exec;
  cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < K; ++i) k16<<<100 + i, 256, 0, st>>>(s);
  cudaStreamEndCapture(st, &graph);
  cudaGraphInstantiate(&exec, graph, 0);
  size_t count = 0; cudaGraphGetNodes(graph, nullptr, &count);
  std::vector<cudaGraphNode_t> nodes(count); cudaGraphGetNodes(graph, nodes.data(), &count);
  std::vector<cudaKernelNodeParams> params(count);
  for (size_t i = 0; i < count; ++i) cudaGraphKernelNodeGetParams(nodes[i], &params[i]);
  bench("graph of 11, launch only", [&] { cudaGraphLaunch(exec, st); }, K);
  P16 s2 = s;
  void* args[] = {&s2};
  bench("graph of 11, set params + launch", [&] {
    for (size_t i = 0; i < count; ++i) { s2.p[0] = buf + (i & 7); params[i].kernelParams = args; cudaGraphExecKernelNodeSetParams(exec, nodes[i], &params[i]); }
    cudaGraphLaunch(exec, st); }, K);
  bench("graph: capture + instantiate + launch each time", [&] {
    cudaGraph_t g2; cudaGraphExec_t e2;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < K; ++i) k16<<<100 + i, 256, 0, st>>>(s);
    cudaStreamEndCapture(st, &g2);
    cudaGraphInstantiate(&e2, g2, 0); cudaGraphLaunch(e2, st); cudaGraphExecDestroy(e2); cudaGraphDestroy(g2); }, K);
  bench("graph: capture + exec update + launch", [&] {
    cudaGraph_t g2;
    cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; i < K; ++i) k16<<<100 + i, 256, 0, st>>>(s);
    cudaStreamEndCapture(st, &g2);
    cudaGraphExecUpdateResultInfo info; cudaGraphExecUpdate(exec, g2, &info); cudaGraphLaunch(exec, st); cudaGraphDestroy(g2); }, K);
  cudaError_t e = cudaGetLastError();
  std::printf("last error: %s\n", cudaGetErrorString(e));
  return 0;
}
