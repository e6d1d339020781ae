// Elementwise fusion at memory bandwidth (issue: LLVM code generation and the cuda backend):
// a chain of six elementwise ops over 2^28 f32 values, fused by the cuda backend into one
// kernel, against a device-to-device copy of the same bytes in the same run on the same GPU.
//   build/bench/gpu_fusion_bandwidth [log2 elements, default 28] [repetitions, default 20]
// Prints the median times, the effective bandwidths (bytes read + written) and the ratio.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/cuda/dvec_ops.h"
#include "codegen/cuda/kernels.h"
#include "lang/types.h"

using namespace ndp;
using codegen::cuda::DVec;
using lang::core::PrimId;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  int64_t n = int64_t{1} << log2n;
  std::string why;
  codegen::cuda::Gpu* g = codegen::cuda::Gpu::get(&why);
  if (g == nullptr) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 2;
  }
  lang::TypeContext T;
  const lang::Type* f = T.f32();
  // y = ((x * 1.5 + 2) * x - 0.5) * (x + 3): six ops, one input, one output.
  flat::KernelBody k;
  k.inputs = {f};
  auto node = [&](flat::KernelNode::Kind kind) {
    flat::KernelNode nd;
    nd.kind = kind;
    nd.type = f;
    k.nodes.push_back(nd);
    return static_cast<uint32_t>(k.nodes.size() - 1);
  };
  auto cst = [&](float v) {
    uint32_t i = node(flat::KernelNode::Kind::Const);
    k.nodes[i].value = lang::Value::f32(v);
    return i;
  };
  auto op = [&](PrimId p, uint32_t a, uint32_t b) {
    uint32_t i = node(flat::KernelNode::Kind::Prim);
    k.nodes[i].prim = p;
    k.nodes[i].args = {a, b};
    return i;
  };
  uint32_t x = node(flat::KernelNode::Kind::Input);
  uint32_t y = op(PrimId::Mul, op(PrimId::Sub, op(PrimId::Mul, op(PrimId::Add, op(PrimId::Mul, x, cst(1.5f)), cst(2.0f)), x), cst(0.5f)),
                  op(PrimId::Add, x, cst(3.0f)));
  k.outputs = {y};
  int ops = 0;
  for (const auto& nd : k.nodes) ops += nd.kind == flat::KernelNode::Kind::Prim;

  // Input: non-zero, varied values (never time on zeros).
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000) * 0.001f + 0.25f;
  codegen::cuda::DBuf in = g->alloc(n * 4), copy_out = g->alloc(n * 4);
  g->check(g->pool().upload(in->pointer(), host.data(), static_cast<size_t>(n) * 4));
  DVec xin = DVec::scalar(f, n, in);
  codegen::cuda::GpuKernels kernels(*g);
  const lang::Type* out_t[1] = {f};
  DVec ins[1] = {xin};

  auto time = [&](auto&& body) {
    body();  // warm-up (and kernel load)
    g->synchronize();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      body();
      g->synchronize();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(t);
  };
  DVec result;
  double t_kernel = time([&] { result = std::move(kernels.run(k, ins, out_t)[0]); });
  double t_copy = time([&] { g->check(g->pool().copy(copy_out->pointer(), in->pointer(), static_cast<size_t>(n) * 4)); });

  // Check every element against the host (the tail of the last block included).
  std::vector<float> got(static_cast<size_t>(n));
  g->check(g->pool().download(got.data(), result.data(), static_cast<size_t>(n) * 4));
  for (int64_t i = 0; i < n; ++i) {
    float v = host[static_cast<size_t>(i)];
    float want = ((v * 1.5f + 2.0f) * v - 0.5f) * (v + 3.0f);
    if (std::abs(got[static_cast<size_t>(i)] - want) > 1e-4f * std::max(1.0f, std::abs(want))) {
      std::fprintf(stderr, "wrong result at %lld: %g, expected %g\n", static_cast<long long>(i), got[static_cast<size_t>(i)], want);
      return 1;
    }
  }
  double bytes = 2.0 * static_cast<double>(n) * 4;  // one f32 read and one written per element
  std::printf("device: %s\n", g->device().properties().name.c_str());
  std::printf("elements: 2^%d f32, %d fused elementwise ops, median of %d\n", log2n, ops, reps);
  std::printf("fused kernel: %.3f ms, %.1f GB/s\n", t_kernel * 1e3, bytes / t_kernel / 1e9);
  std::printf("device copy:  %.3f ms, %.1f GB/s\n", t_copy * 1e3, bytes / t_copy / 1e9);
  std::printf("ratio (kernel bandwidth / copy bandwidth): %.3f\n", t_copy / t_kernel);
  return 0;
}
