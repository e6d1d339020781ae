// Elementwise fusion at memory bandwidth (issue: LLVM code generation and the cuda backend):
// a chain of six elementwise ops over 2^28 f32 values, fused by the cuda backend into one
// kernel, against a device-to-device copy of the same bytes in the same run on the same GPU.
// Then the same map fused into the reduction and the scan it feeds, and a filter's flags into
// their pack (Note [Consumer kernels]), each against the unfused kernel + primitive and
// against the primitive alone on a stored input (the bytes a fused pass reads).
//   build/bench/gpu_fusion_bandwidth [log2 elements, default 28] [repetitions, default 20]
// Prints the median times, the effective bandwidths (bytes read + written) and the ratios.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "driver/llvm_kernels.h"
#include "exec/cuda/device_vec_ops.h"
#include "exec/cuda/kernels.h"
#include "runtime/gpu/primitives.h"
#include "lang/types.h"

using namespace ndp;
using exec::cuda::DVec;
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
  ndp::driver::install_llvm_kernels();  // the fused kernels come from LLVM (Note [Kernel compilers])
  exec::cuda::Gpu* g = exec::cuda::Gpu::get(&why);
  if (g == nullptr) {
    std::fprintf(stderr, "no GPU: %s\n", why.c_str());
    return 2;
  }
  lang::TypeContext T;
  const lang::Type* f = T.f32();
  // y = ((x * 1.5 + 2) * x - 0.5) * (x + 3): six ops, one input, one output.
  flatten::KernelBody k;
  k.inputs = {f};
  auto node = [&](flatten::KernelNode::Kind kind) {
    flatten::KernelNode nd;
    nd.kind = kind;
    nd.type = f;
    k.nodes.push_back(nd);
    return static_cast<uint32_t>(k.nodes.size() - 1);
  };
  auto cst = [&](float v) {
    uint32_t i = node(flatten::KernelNode::Kind::Const);
    k.nodes[i].value = lang::Value::f32(v);
    return i;
  };
  auto op = [&](PrimId p, uint32_t a, uint32_t b) {
    uint32_t i = node(flatten::KernelNode::Kind::Prim);
    k.nodes[i].prim = p;
    k.nodes[i].args = {a, b};
    return i;
  };
  uint32_t x = node(flatten::KernelNode::Kind::Input);
  uint32_t y = op(PrimId::Mul, op(PrimId::Sub, op(PrimId::Mul, op(PrimId::Add, op(PrimId::Mul, x, cst(1.5f)), cst(2.0f)), x), cst(0.5f)),
                  op(PrimId::Add, x, cst(3.0f)));
  k.outputs = {y};
  int ops = 0;
  for (const auto& nd : k.nodes) ops += nd.kind == flatten::KernelNode::Kind::Prim;

  // Input: non-zero, varied values (never time on zeros).
  std::vector<float> host(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) host[static_cast<size_t>(i)] = static_cast<float>((i * 7919) % 1000) * 0.001f + 0.25f;
  exec::cuda::DBuf in = g->alloc(n * 4), copy_out = g->alloc(n * 4);
  g->check(g->pool().upload(in->pointer(), host.data(), static_cast<size_t>(n) * 4));
  DVec xin = DVec::scalar(f, n, in);
  exec::cuda::GpuKernels kernels(*g);
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
  // ---- consumer kernels: the map fused into a reduction and a scan, a filter into a pack ----
  using runtime::gpu::DSegs;
  runtime::gpu::Primitives& prims = g->prims();
  using runtime::gpu::ConsumerUse;
  const runtime::cuda::Module* reduce_m =
      kernels.consumer_module(k, runtime::gpu::consumer_kernels(ConsumerUse::ReduceOne, NDP_OP_PLUS, NDP_F32));
  const runtime::cuda::Module* scan_m = kernels.consumer_module(k, runtime::gpu::consumer_kernels(ConsumerUse::ScanOne, NDP_OP_PLUS, NDP_F32));
  flatten::KernelBody pred;  // x * 1.5 > 1.0: about a third of the values in [0.25, 1.25)
  pred.inputs = {f};
  {
    flatten::KernelNode in, c15, mul, c1, gt;
    in.kind = flatten::KernelNode::Kind::Input;
    in.type = f;
    c15.kind = c1.kind = flatten::KernelNode::Kind::Const;
    c15.type = c1.type = f;
    c15.value = lang::Value::f32(1.5f);
    c1.value = lang::Value::f32(1.0f);
    mul.kind = gt.kind = flatten::KernelNode::Kind::Prim;
    mul.prim = PrimId::Mul;
    mul.type = f;
    mul.args = {0, 1};
    gt.prim = PrimId::Gt;
    gt.type = T.bool_();
    gt.args = {2, 3};
    pred.nodes = {in, c15, mul, c1, gt};
    pred.outputs = {4};
  }
  const runtime::cuda::Module* pack_m = kernels.consumer_module(pred, runtime::gpu::consumer_kernels(ConsumerUse::Pack, NDP_OP_OR, NDP_F32));
  if (reduce_m == nullptr || scan_m == nullptr || pack_m == nullptr) {
    std::fprintf(stderr, "the consumer kernels could not be compiled\n");
    return 1;
  }
  runtime::gpu::Primitives::FusedInputs fin;
  fin.p[0] = in->pointer();
  exec::cuda::DBuf sum_out = g->alloc(8), scan_out = g->alloc(n * 4), pack_out = g->alloc(n * 4);
  const DSegs one = DSegs::flat(n);
  double t_reduce_fused = time([&] { g->check(prims.seg_reduce_fused(*reduce_m, NDP_OP_PLUS, NDP_F32, fin, one, sum_out->pointer())); });
  float fused_sum = 0;
  g->check(g->pool().download(&fused_sum, sum_out->pointer(), 4));
  double t_reduce_unfused = time([&] {
    DVec v = kernels.run(k, ins, out_t)[0];
    g->check(prims.seg_reduce(NDP_OP_PLUS, NDP_F32, v.data(), one, sum_out->pointer()));
  });
  double t_reduce_plain = time([&] { g->check(prims.seg_reduce(NDP_OP_PLUS, NDP_F32, in->pointer(), one, sum_out->pointer())); });
  double t_scan_fused = time([&] { g->check(prims.seg_scan_fused(*scan_m, NDP_OP_PLUS, false, NDP_F32, fin, one, scan_out->pointer())); });
  double t_scan_unfused = time([&] {
    DVec v = kernels.run(k, ins, out_t)[0];
    g->check(prims.seg_scan(NDP_OP_PLUS, false, NDP_F32, v.data(), one, scan_out->pointer()));
  });
  double t_scan_plain = time([&] { g->check(prims.seg_scan(NDP_OP_PLUS, false, NDP_F32, in->pointer(), one, scan_out->pointer())); });
  int64_t kept = 0;
  auto give_out = [&](int64_t) -> runtime::cuda::Result<runtime::cuda::CUdeviceptr> { return pack_out->pointer(); };
  double t_pack_fused = time([&] { kept = g->check(prims.pack_fused(*pack_m, NDP_F32, in->pointer(), fin, n, give_out)); });
  const lang::Type* bool_t[1] = {T.bool_()};
  double t_pack_unfused = time([&] {
    DVec flags = kernels.run(pred, ins, bool_t)[0];
    int64_t c = g->check(prims.count_true(flags.data(), n));
    g->check(prims.pack(NDP_F32, in->pointer(), flags.data(), n, pack_out->pointer()));
    kept = c;
  });

  // Check the fused results against the host: the sum (f32, in another order: relative 1e-3),
  // the scan at element `probe` (an f32 running sum of 2^28 values loses the small ones at the
  // end, in every scan: the early part shows whether the values are right), the pack's count.
  const int64_t probe = std::min<int64_t>(n - 1, 100000);
  double want_sum = 0, want_probe = 0;
  int64_t want_kept = 0;
  for (int64_t i = 0; i < n; ++i) {
    float v = host[static_cast<size_t>(i)];
    double y = ((v * 1.5f + 2.0f) * v - 0.5f) * (v + 3.0f);
    if (i == probe) want_probe = want_sum;
    want_sum += y;
    want_kept += v * 1.5f > 1.0f;
  }
  g->check(prims.seg_scan_fused(*scan_m, NDP_OP_PLUS, false, NDP_F32, fin, one, scan_out->pointer()));
  kept = g->check(prims.pack_fused(*pack_m, NDP_F32, in->pointer(), fin, n, give_out));
  float first_kept = 0, want_first = 0;
  g->check(g->pool().download(&first_kept, pack_out->pointer(), 4));
  for (int64_t i = 0; i < n; ++i)
    if (host[static_cast<size_t>(i)] * 1.5f > 1.0f) {
      want_first = host[static_cast<size_t>(i)];
      break;
    }
  float got_probe = 0;
  g->check(g->pool().download(&got_probe, scan_out->pointer() + static_cast<runtime::cuda::CUdeviceptr>(probe) * 4, 4));
  if (std::abs(fused_sum - want_sum) > 1e-3 * want_sum || std::abs(got_probe - want_probe) > 1e-3 * want_probe ||
      kept != want_kept || first_kept != want_first) {
    std::fprintf(stderr, "wrong consumer result: sum %g (want %g), scan[%lld] %g (want %g), kept %lld (want %lld)\n",
                 fused_sum, want_sum, static_cast<long long>(probe), got_probe, want_probe, static_cast<long long>(kept),
                 static_cast<long long>(want_kept));
    return 1;
  }

  double bytes = 2.0 * static_cast<double>(n) * 4;  // one f32 read and one written per element
  std::printf("device: %s\n", g->device().properties().name.c_str());
  std::printf("elements: 2^%d f32, %d fused elementwise ops, median of %d\n", log2n, ops, reps);
  std::printf("fused kernel: %.3f ms, %.1f GB/s\n", t_kernel * 1e3, bytes / t_kernel / 1e9);
  std::printf("device copy:  %.3f ms, %.1f GB/s\n", t_copy * 1e3, bytes / t_copy / 1e9);
  std::printf("ratio (kernel bandwidth / copy bandwidth): %.3f\n", t_copy / t_kernel);
  // A fused reduction reads n·4 bytes; a fused scan reads and writes n·4; a fused pack reads
  // the values twice (count, compact) and writes the kept ones.
  double copy_bw = bytes / t_copy;
  auto line = [&](const char* what, double t_fused, double t_unfused, double t_plain, double moved) {
    std::printf("%s: fused %.3f ms (%.1f GB/s, %.3f of copy bandwidth), unfused %.3f ms (fused %.2fx faster)", what,
                t_fused * 1e3, moved / t_fused / 1e9, moved / t_fused / copy_bw, t_unfused * 1e3, t_unfused / t_fused);
    if (t_plain > 0) std::printf(", the primitive alone on a stored input %.3f ms", t_plain * 1e3);
    std::printf("\n");
  };
  line("map -> sum", t_reduce_fused, t_reduce_unfused, t_reduce_plain, static_cast<double>(n) * 4);
  line("map -> plus_scan", t_scan_fused, t_scan_unfused, t_scan_plain, bytes);
  line("filter -> pack", t_pack_fused, t_pack_unfused, -1, static_cast<double>(n) * 4 + kept * 4.0);
  return 0;
}
