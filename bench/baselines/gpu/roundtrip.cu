// The least a call through the embedding API on cuda can cost (bench/embed_call.cpp's rows):
// copy an argument to the GPU, launch one kernel on it, copy the result back and wait, here
// with the CUDA runtime and nothing else.
//   roundtrip [CALLS]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void inc(long long* x) { *x += 1; }
__global__ void scale(double* v, double k, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= k;
}

template <class F>
double mean_us(int calls, F f) {
  for (int i = 0; i < calls / 10 + 1; ++i) f();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls;
}

int main(int argc, char** argv) {
  int calls = argc > 1 ? std::atoi(argv[1]) : 20000;
  long long x = 0, *dx;
  double v[16] = {}, *dv;
  cudaMalloc(&dx, sizeof x);
  cudaMalloc(&dv, sizeof v);
  std::printf("baseline (CUDA runtime), %d calls a row\n", calls);
  std::printf("%-34s %10.2f us/call\n", "int in, kernel, int out", mean_us(calls, [&] {
                cudaMemcpy(dx, &x, sizeof x, cudaMemcpyHostToDevice);
                inc<<<1, 1>>>(dx);
                cudaMemcpy(&x, dx, sizeof x, cudaMemcpyDeviceToHost);
              }));
  std::printf("%-34s %10.2f us/call\n", "16 floats in, kernel, 16 out", mean_us(calls, [&] {
                cudaMemcpy(dv, v, sizeof v, cudaMemcpyHostToDevice);
                scale<<<1, 32>>>(dv, 1.0, 16);
                cudaMemcpy(v, dv, sizeof v, cudaMemcpyDeviceToHost);
              }));
  std::printf("%-34s %10.2f us/call\n", "kernel on device data, wait", mean_us(calls, [&] {
                scale<<<1, 32>>>(dv, 1.0, 16);
                cudaStreamSynchronize(0);
              }));
  return x > 0 ? 0 : 1;
}
