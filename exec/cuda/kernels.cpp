// Fused kernels on the GPU with the in-memory and disk caches (Note [Kernel cache]).
#include "exec/cuda/kernels.h"

#include <algorithm>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>

#include "exec/common/kernel_compiler.h"
#include "exec/common/profile.h"
#include "exec/common/switches.h"
#include "exec/common/tuning.h"
#include "exec/cuda/device_vec_ops.h"
#include "exec/kernel_revision.h"  // generated: tools/kernel_revision.py
#include "exec/host/convert.h"
#include "exec/host/kernel_failure.h"
#include "flatten/kernel_abi.h"
#include "lang/diagnostics.h"
#include "lang/eval/interp.h"
#include "lang/eval/prim_call.h"  // EvalError

namespace ndp::exec::cuda {

namespace fs = std::filesystem;

namespace {

/// The target and the generators' revision (kKernelRevision), at the head of every key.
const std::string& target_key() {
  static const std::string key = std::string("sm_90|rev ") + kKernelRevision;
  return key;
}

/// The installed kernel compiler (Note [Kernel compilers] in exec/common/kernel_compiler.h).
exec::KernelCompiler& compiler() {
  exec::KernelCompiler* c = kernel_compiler();
  if (c == nullptr) throw lang::InternalError("internal error: cuda backend: no kernel compiler is installed");
  return *c;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return {};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Writes atomically: a reader sees the old file, no file, or the whole new one.
void write_file(const fs::path& p, const std::string& bytes) {
  std::error_code ec;
  fs::create_directories(p.parent_path(), ec);
  fs::path tmp = p;
  tmp += ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;  // an unwritable cache is only slower
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, p, ec);
  if (ec) fs::remove(tmp, ec);
}

/// The consumer program of `use` with `element` (PTX defining ndp_elements) put in, compiled by
/// the driver's JIT as one program (Note [Consumer programs] in runtime/gpu/consumer_program.h).
runtime::cuda::Result<runtime::cuda::Module> compile_consumer_program(runtime::cuda::Device& device, const runtime::gpu::ConsumerKernels& use,
                                                            const std::string& element) {
  std::string_view consumers = runtime::gpu::consumer_ptx(use.image);
  if (consumers.empty())
    return runtime::cuda::Status::failure("consumer_program", "this ndp was built without the consumer kernels");
  runtime::cuda::Result<std::string> program = runtime::gpu::consumer_program(consumers, element, use.entries);
  if (!program.ok()) return program.status();
  return runtime::cuda::Module::load_ptx(device, program.value());
}

}  // namespace

namespace {

/// Spreads of at most this many elements are read in place whatever their segments' lengths:
/// a kernel over them is a few blocks, whose searches cost less than the copies' launch (some
/// 4 µs of the host's, Note [Small inputs in one launch] in runtime/gpu/primitives.cpp).
constexpr int64_t kSmallSpread = int64_t{1} << 14;

/// Whether a kernel reads a spread over `segs` in place (Note [Spread inputs]): where the
/// segment of an element is a division, or a search over segments of 64 elements or more on
/// average, which costs less than the copies' pass and the 8 bytes an element it saves, or over
/// a small spread.
bool spread_in_place(const runtime::gpu::DSegs& segs) {
  static const bool on = !switched_off("NDP_SPREAD_IN_PLACE");  // =0 reads the copies (for measuring)
  if (!on) return false;
  if (segs.offsets == 0) return segs.regular_length > 0;
  return segs.total >= 64 * segs.count || segs.total <= kSmallSpread;
}

/// Whether a view's divisor is a power of two (GatheredInput::pow2).
bool power_of_two(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// The pending interleave v reads in place (itself, or the source of its view of inner stride
/// 1), or null.
const DVec* interleave_read(const DVec& v) {
  if (v.interleave_source(0) != nullptr) return &v;
  const DVec* source = v.view_source();
  return source != nullptr && v.view_shape().inner == 1 && source->interleave_source(0) != nullptr ? source : nullptr;
}

}  // namespace

KernelArgs kernel_args(std::span<const DVec> ins, size_t max_ptrs, Gpu* guard, bool broadcast) {
  const bool guarded = guard != nullptr;
  KernelArgs a;
  std::vector<CUdeviceptr> positions, bounds;
  // Pointers with one more gathered input: its positions (and guarded, its bound and the flags).
  auto fits = [&] {
    const size_t gathers = positions.size() + 1;
    return ins.size() + (guarded ? 2 * gathers + 1 : gathers) <= max_ptrs;
  };
  // An affine view's four numbers instead (never guarded).
  auto fits_view = [&] { return !guarded && ins.size() + positions.size() + 4 <= max_ptrs; };
  // Unguarded, unchecked gathers are checked before the launch, each check a pass and a
  // read-back; gathers through the same positions from sources of the same length (x[i], y[i]
  // and z[i] of one loop body) pass or fail alike, so the first of them is checked for all.
  std::vector<std::pair<CUdeviceptr, int64_t>> checked;
  // An earlier spread input over segs that has its own (GatheredInput::segments_of), or 0.
  auto same_segments = [&](const runtime::gpu::DSegs& segs) -> uint32_t {
    for (size_t q = 0; q < a.gathered.size(); ++q) {
      if (!a.gathered[q].spread || a.gathered[q].segments_of != 0) continue;
      const runtime::gpu::DSegs theirs = ins[a.gathered[q].input].spread_segments();
      if (theirs.offsets == segs.offsets && theirs.count == segs.count && theirs.regular_length == segs.regular_length)
        return static_cast<uint32_t>(q + 1);
    }
    return 0;
  };
  auto check = [&](const DVec& v) {
    if (!v.gather_unchecked()) return;
    std::pair<CUdeviceptr, int64_t> key{v.gather_index()->data(), v.gather_source()->size()};
    // A check read later clamps its own gather's positions only (Note [Checked gathers]).
    const bool defers = v.gather_defers_check();
    if (!defers && std::find(checked.begin(), checked.end(), key) != checked.end()) {
      v.gather_checked();
      return;
    }
    v.check_gather();
    if (!defers) checked.push_back(key);
  };
  for (size_t j = 0; j < ins.size(); ++j) {
    const DVec& v = ins[j];
    if (broadcast && guard == nullptr && v.pending_iota()) {
      // Instance ids, taken as the instance (Note [Iota inputs] in kernels.h).
      a.gathered.push_back({.input = static_cast<uint32_t>(j), .iota = true});
      a.ptrs.push_back(0);
      a.unchecked.push_back(nullptr);
    } else if (broadcast && guard == nullptr && v.broadcast_source() != nullptr) {
      a.gathered.push_back({static_cast<uint32_t>(j), false, true});
      a.ptrs.push_back(v.broadcast_source()->data());
      a.unchecked.push_back(nullptr);
    } else if (guarded && (v.spread_source() != nullptr || v.pending_rank()) && spread_in_place(v.spread_segments()) &&
               fits()) {
      // The same in an element function: the offsets' address as positions, and as bound their
      // count or (without offsets) their one length; never out of range.
      const runtime::gpu::DSegs segs = v.spread_segments();
      a.gathered.push_back({.input = static_cast<uint32_t>(j), .spread = true, .segments_of = same_segments(segs),
                            .rank = v.pending_rank()});
      a.ptrs.push_back(v.pending_rank() ? 0 : v.spread_source()->data());
      positions.push_back(segs.offsets);
      bounds.push_back(static_cast<CUdeviceptr>(segs.offsets == 0 ? segs.regular_length : segs.count));
      a.unchecked.push_back(nullptr);
    } else if (broadcast && guard == nullptr && (v.spread_source() != nullptr || v.pending_rank()) &&
               spread_in_place(v.spread_segments())) {
      // A value a segment, read at each element's segment, or the element's place in its
      // segment, computed (Note [Spread inputs] in kernels.h).
      const runtime::gpu::DSegs segs = v.spread_segments();
      const uint32_t same = same_segments(segs);
      if (same == 0 && !fits_view()) {
        a.ptrs.push_back(v.data());
        continue;
      }
      a.gathered.push_back({.input = static_cast<uint32_t>(j), .spread = true, .segments_of = same, .rank = v.pending_rank()});
      a.ptrs.push_back(v.pending_rank() ? 0 : v.spread_source()->data());
      if (same == 0)
        for (int64_t x : {static_cast<int64_t>(segs.offsets), segs.count, segs.offsets == 0 ? segs.regular_length : int64_t{0}})
          positions.push_back(static_cast<CUdeviceptr>(x));
      a.unchecked.push_back(nullptr);
    } else if (const DVec* blocks = broadcast && !guarded ? interleave_read(v) : nullptr;
               blocks != nullptr && ins.size() + positions.size() + 5 <= max_ptrs) {
      // Blocks of two sources in turn, read in place (Note [Interleaved blocks] in kernels.h):
      // through a view's shape, or as they lie.
      const DVec::Affine shape = blocks == &v ? DVec::Affine{v.size(), 0, 0} : v.view_shape();
      a.gathered.push_back({.input = static_cast<uint32_t>(j), .interleaved = true,
                            .pow2 = power_of_two(shape.c) && power_of_two(blocks->interleave_block())});
      a.ptrs.push_back(blocks->interleave_source(0)->data());
      for (int64_t x : {shape.c, shape.stride, shape.offset, blocks->interleave_block()})
        positions.push_back(static_cast<CUdeviceptr>(x));
      positions.push_back(blocks->interleave_source(1)->data());
      a.unchecked.push_back(nullptr);
    } else if (broadcast && v.view_source() != nullptr && fits_view()) {
      // A regular elt view, read in place (Note [Regular elt views] in device_vec.h).
      const DVec::Affine shape = v.view_shape();
      a.gathered.push_back({.input = static_cast<uint32_t>(j), .affine = true, .pow2 = power_of_two(shape.c)});
      a.ptrs.push_back(v.view_source()->data());
      for (int64_t x : {shape.c, shape.stride, shape.offset, shape.inner}) positions.push_back(static_cast<CUdeviceptr>(x));
      a.unchecked.push_back(nullptr);
    } else if (v.pending() && v.gather_source() != nullptr && fits()) {
      if (!guarded) check(v);
      // i32 positions widened by i64() are read as they are (Note [Narrow gather positions]).
      const DVec* narrow = v.gather_index()->narrow_source();
      a.gathered.push_back({static_cast<uint32_t>(j), narrow != nullptr});
      a.ptrs.push_back(v.gather_source()->data());
      positions.push_back(narrow != nullptr ? narrow->data() : v.gather_index()->data());
      bounds.push_back(static_cast<CUdeviceptr>(v.gather_source()->size()));
      a.unchecked.push_back(v.gather_unchecked() ? &v : nullptr);
    } else {
      a.ptrs.push_back(v.data());
    }
  }
  a.ptrs.insert(a.ptrs.end(), positions.begin(), positions.end());
  if (guarded && !positions.empty()) {
    a.ptrs.insert(a.ptrs.end(), bounds.begin(), bounds.end());
    a.ptrs.push_back(guard->gather_flags());
  }
  return a;
}

namespace {

std::mutex precompiled_mu;
std::map<std::string, const void*>& precompiled() {
  static std::map<std::string, const void*> modules;
  return modules;
}

const void* find_precompiled(const std::string& key) {
  std::lock_guard<std::mutex> lock(precompiled_mu);
  auto it = precompiled().find(key);
  return it == precompiled().end() ? nullptr : it->second;
}

bool compiler_makes_ptx() {
  exec::KernelCompiler* c = kernel_compiler();
  return c != nullptr && c->compiles_ptx();
}

}  // namespace

void register_precompiled_module(std::string key, const void* image) {
  std::lock_guard<std::mutex> lock(precompiled_mu);
  precompiled()[std::move(key)] = image;
}

std::string kernel_key(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes, flatten::KernelForm form,
                       flatten::RowForms rows) {
  const char* form_key = form == flatten::KernelForm::Tiled ? "|tiled" : form == flatten::KernelForm::SplitRows ? "|split" : "";
  return target_key() + gathered_key(gathered) + (lanes > 1 ? "|lanes " + std::to_string(lanes) : "") + form_key +
         (rows.regular != 0 ? "|regular " + std::to_string(rows.regular) : "") +
         (rows.zeroed != 0 ? "|zeroed " + std::to_string(rows.zeroed) : "") +
         (rows.sourced != 0 ? "|sourced " + std::to_string(rows.sourced) : "") + "|" + k.key();
}

std::string consumer_key(const flatten::KernelBody& k, const runtime::gpu::ConsumerKernels& use,
                         std::span<const GatheredInput> gathered) {
  return target_key() + "|consumer " + use.key() + gathered_key(gathered) + "|" + k.key();
}

std::string regular_levels_module_key(const flatten::RegularLevels& plan, bool in_block) {
  return target_key() + "|" + flatten::regular_levels_key(plan, in_block);
}

std::string partition_levels_module_key(const flatten::PartitionLevels& plan, const lang::Type* elem) {
  return target_key() + "|" + flatten::partition_levels_key(plan, elem);
}

bool GpuKernels::can_load(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes, flatten::KernelForm form,
                          flatten::RowForms rows) const {
  if (compiler_makes_ptx()) return true;
  std::string key = kernel_key(k, gathered, lanes, form, rows);
  return loaded_.count(key) > 0 || find_precompiled(key) != nullptr;
}

std::shared_ptr<runtime::cuda::Module> GpuKernels::load_cached(const std::string& key,
                                                         const std::function<std::string()>& make_cubin) {
  if (const void* image = find_precompiled(key)) {
    ++stats_.precompiled;
    return std::make_shared<runtime::cuda::Module>(gpu_.check(runtime::cuda::Module::load_image(gpu_.device(), image)));
  }
  std::string dir = kernel_cache_dir();
  fs::path file;
  if (!dir.empty()) file = fs::path(dir) / (flatten::stable_hash_hex(key) + ".cubin");
  if (!file.empty()) {
    std::string cubin = read_file(file);
    // The key is stored after the image's end so a hash collision cannot load a wrong kernel.
    size_t n = cubin.size() >= key.size() ? cubin.size() - key.size() : 0;
    if (!cubin.empty() && cubin.compare(n, std::string::npos, key) == 0) {
      cubin.resize(n);
      auto m = runtime::cuda::Module::load_image(gpu_.device(), cubin.data());
      if (m.ok()) {
        ++stats_.disk_hits;
        return std::make_shared<runtime::cuda::Module>(std::move(m.value()));
      }
    }
  }
  std::string cubin = make_cubin();
  if (cubin.empty()) return nullptr;  // (a compiler without such kernels)
  auto module = std::make_shared<runtime::cuda::Module>(gpu_.check(runtime::cuda::Module::load_image(gpu_.device(), cubin.data())));
  if (!file.empty()) write_file(file, cubin + key);
  ++stats_.compiled;
  return module;
}

const runtime::cuda::Kernel* GpuKernels::loaded_kernel(const std::string& key, const char* what,
                                                      const std::function<std::string()>& make_ptx) {
  if (auto it = loaded_.find(key); it != loaded_.end()) {
    ++stats_.memory_hits;
    return &it->second.second;
  }
  CompileTimer timer;  // Note [Compile time apart]
  std::shared_ptr<runtime::cuda::Module> module = load_cached(key, [&] {
    std::string ptx;
    try {
      ptx = make_ptx();
    } catch (const std::exception& e) {
      throw lang::InternalError(std::string("internal error: cuda backend: LLVM failed on ") + what + ": " + e.what());
    }
    return ptx.empty() ? std::string() : gpu_.check(runtime::cuda::Module::compile_to_cubin(gpu_.device(), ptx));
  });
  if (!module) return nullptr;
  runtime::cuda::Kernel kernel = gpu_.check(module->kernel("ndp_kernel"));
  return &loaded_.emplace(key, std::make_pair(std::move(module), kernel)).first->second.second;
}

const runtime::cuda::Kernel& GpuKernels::kernel_for(const flatten::KernelBody& k, std::span<const GatheredInput> gathered,
                                                   int lanes, flatten::KernelForm form, flatten::RowForms rows) {
  const runtime::cuda::Kernel* kernel = loaded_kernel(kernel_key(k, gathered, lanes, form, rows), "a kernel",
                                                      [&] { return compiler().ptx(k, gathered, lanes, form, rows); });
  NDP_ASSERT(kernel != nullptr, "the kernel compiler made no PTX for a kernel");
  return *kernel;
}

const runtime::cuda::Kernel* GpuKernels::regular_levels_kernel(const flatten::RegularLevels& plan, bool in_block) {
  const std::string key = regular_levels_module_key(plan, in_block);
  if (!loaded_.count(key) && !compiler_makes_ptx() && find_precompiled(key) == nullptr) return nullptr;
  return loaded_kernel(key, "regular levels", [&] { return compiler().regular_levels_ptx(plan, in_block); });
}

const GpuKernels::PartitionKernels* GpuKernels::partition_kernels(const flatten::PartitionLevels& plan, const lang::Type* elem) {
  const std::string key = partition_levels_module_key(plan, elem);
  if (auto it = partitions_.find(key); it != partitions_.end()) {
    if (!it->second.module) return nullptr;
    ++stats_.memory_hits;
    return &it->second.kernels;
  }
  std::shared_ptr<runtime::cuda::Module> module;
  if (compiler_makes_ptx() || find_precompiled(key) != nullptr) {
    CompileTimer timer;  // Note [Compile time apart]
    module = load_cached(key, [&] {
      std::string ptx;
      try {
        ptx = compiler().partition_levels_ptx(plan, elem);
      } catch (const std::exception& e) {
        throw lang::InternalError(std::string("internal error: cuda backend: LLVM failed on partition levels: ") + e.what());
      }
      return ptx.empty() ? std::string() : gpu_.check(runtime::cuda::Module::compile_to_cubin(gpu_.device(), ptx));
    });
  }
  PartitionModule& p = partitions_[key];
  if (!module) return nullptr;
  auto entry = [&](const char* name) { return gpu_.check(module->kernel(name)); };
  p.kernels = {entry("ndp_pl_seed"), entry("ndp_pl_count"), entry("ndp_pl_plan"), entry("ndp_pl_scatter"), entry("ndp_pl_block")};
  // The blocks' buffers in shared memory: without asking, a multiprocessor runs fewer of them.
  gpu_.check(runtime::cuda::prefer_shared_memory(gpu_.device(), p.kernels.block));
  p.module = std::move(module);
  return &p.kernels;
}

const runtime::cuda::Module* GpuKernels::consumer_module(const flatten::KernelBody& k, const runtime::gpu::ConsumerKernels& use,
                                                    std::span<const GatheredInput> gathered) {
  const std::string key = consumer_key(k, use, gathered);
  if (auto it = consumers_.find(key); it != consumers_.end()) {
    if (it->second) ++stats_.memory_hits;
    return it->second.get();
  }
  if (const void* image = find_precompiled(key)) {
    ++stats_.precompiled;
    auto module = std::make_shared<runtime::cuda::Module>(gpu_.check(runtime::cuda::Module::load_image(gpu_.device(), image)));
    consumers_.emplace(key, module);
    return module.get();
  }
  if (!compiler_makes_ptx()) {  // runs unfused (Note [Precompiled modules])
    consumers_.emplace(key, nullptr);
    return nullptr;
  }
  CompileTimer timer;  // Note [Compile time apart]
  std::string element;
  try {
    element = compiler().element_ptx(k, gathered);
  } catch (const std::exception& e) {
    throw lang::InternalError(std::string("internal error: cuda backend: LLVM failed on an element function: ") + e.what());
  }
  std::shared_ptr<runtime::cuda::Module> module;
  runtime::cuda::Result<runtime::cuda::Module> m = compile_consumer_program(gpu_.device(), use, element);
  if (m.ok()) {
    module = std::make_shared<runtime::cuda::Module>(std::move(m.value()));
    ++stats_.compiled;
  } else {
    // The consumer then runs unfused (the caller's fallback): slower, the same result. Said once
    // a process, so that the slowdown has a reason; NDP_DEBUG=1 says it for each program.
    static const bool debug = [] {
      const char* d = std::getenv("NDP_DEBUG");
      return d != nullptr && std::atoi(d) >= 1;
    }();
    if (debug || !consumer_failure_told_)
      std::fprintf(stderr, "ndp: cuda: a fused reduction, scan or pack runs unfused (slower, the same results): %s\n",
                   m.status().message().c_str());
    consumer_failure_told_ = true;
  }
  consumers_.emplace(key, module);
  return module.get();
}

namespace {

/// The element arrays of the flat components of `v` (Note [Sequences in loop kernels]).
void component_pointers(const DVec& v, std::vector<CUdeviceptr>& out) {
  if (v.kind() == lang::TypeKind::Pair) {
    component_pointers(v.first(), out);
    component_pointers(v.second(), out);
    return;
  }
  if (v.gather_unchecked()) v.check_gather();
  out.push_back(v.data());
}

/// A copy of `v` (flat scalars and pairs of them) in buffers of its own, for a loop to change.
DVec fresh_copy(Gpu& g, const DVec& v) {
  if (v.kind() == lang::TypeKind::Pair) return DVec::pair(v.type(), fresh_copy(g, v.first()), fresh_copy(g, v.second()));
  if (v.gather_unchecked()) v.check_gather();
  const int64_t bytes = v.size() * elem_bytes(v.type());
  DBuf copy = g.alloc(bytes);
  if (std::optional<uint64_t> bits = v.known_bits(); bits && bytes > 0) {  // a loop's counts from dist(0, m): filled, not copied
    g.check(g.prims().fill(copy->pointer(), v.size(), elem_bytes(v.type()), *bits));
    return DVec::scalar(v.type(), v.size(), std::move(copy));
  }
  if (bytes > 0) g.check(g.pool().copy(copy->pointer(), v.data(), static_cast<size_t>(bytes)));
  return DVec::scalar(v.type(), v.size(), std::move(copy));
}

/// Whether `v` is a flat vector of zeros the host knows of (dist(0, m): Note [Known values]).
bool known_zeros(const DVec& v) {
  if (v.kind() == lang::TypeKind::Pair) return false;
  const std::optional<uint64_t> bits = v.known_bits();
  return bits && *bits == 0;
}

/// Buffers of `v`'s type and size (flat scalars and pairs of them), their contents whatever they
/// were: a zeroed or sourced row's (Notes [Zeroed rows] and [Sourced rows] in
/// codegen/staged_rows.h), which the kernel writes before it reads.
DVec unfilled_like(Gpu& g, const DVec& v) {
  if (v.kind() == lang::TypeKind::Pair) return DVec::pair(v.type(), unfilled_like(g, v.first()), unfilled_like(g, v.second()));
  return DVec::scalar(v.type(), v.size(), g.alloc(v.size() * elem_bytes(v.type())));
}

}  // namespace

namespace {

/// n elements of type t (flat scalars and pairs of them) in fresh device buffers; the pointer
/// of each flat component goes to `ptrs`.
DVec blank(Gpu& g, const lang::Type* t, int64_t n, std::vector<CUdeviceptr>& ptrs) {
  if (t->kind == lang::TypeKind::Pair) {
    DVec a = blank(g, t->a, n, ptrs);
    return DVec::pair(t, std::move(a), blank(g, t->b, n, ptrs));
  }
  DVec v = DVec::scalar(t, n, g.alloc(n * elem_bytes(t)));
  ptrs.push_back(v.data());
  return v;
}

// Note [Staging launches]
// A loop kernel with staged rows (Note [Staged rows] in codegen/staged_rows.h) runs a thread an
// instance whichever way it is launched; the launch decides whether its rows go to shared
// memory. Staged, a step is a few dozen cycles instead of hundreds, but a multiprocessor holds
// only as many instances as their rows fit in its shared memory, where from global memory it
// holds up to 2048 at once and hides their latency by their number. So rows are staged where
// the instances a multiprocessor gets (n over the multiprocessors) mostly fit: a few blocks of
// long loops (a counting loop per block of 1000 keys: 1000 instances, 10 KB each), or many
// instances of small rows; not 10^5 instances of 10 KB each, which would leave each
// multiprocessor 20 at a time. A block holds a power of two of instances, at most 256 and at
// most its share of n, so that they spread over every multiprocessor, and at least 128
// threads, which copy the rows in and out; its shared memory is its instances' records and
// rows at the average length of each sequence's rows, with a quarter more, so that rows of
// uneven lengths mostly fit too (a block whose rows do not uses global memory). A multiprefix
// loop (a warp an instance) is staged wherever a block of its warps' rows fits
// (warp_loop_launch): its instances are few and long, a warp each, and it is one warp's
// latency a chunk that they wait for.
namespace {

/// An instance's record and staged rows at the rows' average lengths, 8 bytes a row for its
/// alignment (Note [Staged rows] in codegen/staged_rows.h).
double staged_bytes(const flatten::KernelBody& k, std::span<const DVec> seqs, int lanes) {
  const std::vector<flatten::KernelBody::StagedSeq>& staged = k.staged_seqs_on(lanes);
  double bytes = 8.0 * static_cast<double>(1 + 2 * staged.size());  // an instance's record
  for (const flatten::KernelBody::StagedSeq& s : staged) {
    const DVec& rows = seqs[s.seq];
    if (rows.size() == 0) continue;
    const double length = static_cast<double>(rows.elems().size()) / static_cast<double>(rows.size());
    for (const lang::Type* t : k.seqs[s.seq].components) bytes += length * static_cast<double>(elem_bytes(t)) + 8;
  }
  return bytes;
}

runtime::cuda::LaunchConfig loop_launch(const flatten::KernelBody& k, std::span<const DVec> seqs, int64_t n,
                                        const runtime::cuda::Device& device) {
  const runtime::cuda::DeviceProperties& p = device.properties();
  runtime::cuda::LaunchConfig plain = device.one_thread_per_element(n);  // blocks of 256 threads, no shared memory
  const double bytes = staged_bytes(k, seqs, 1);
  const int64_t most = std::max(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block);
  if (most <= 0 || p.sm_count <= 0) return plain;
  const double per_instance = 1.25 * bytes;
  const int64_t share = (n + p.sm_count - 1) / p.sm_count;  // the instances of one multiprocessor
  const int64_t staged_at_once = std::min(share, static_cast<int64_t>(static_cast<double>(most - 16) / per_instance));
  if (staged_at_once < 1 || 4 * staged_at_once < std::min<int64_t>(share, p.max_threads_per_sm)) return plain;
  int64_t block = 1;
  while (2 * block <= std::min<int64_t>(staged_at_once, 256)) block *= 2;
  const int64_t threads = std::max<int64_t>(128, block);
  const int64_t shared = std::min<int64_t>(most, static_cast<int64_t>(per_instance * static_cast<double>(block)) + 16);
  return {static_cast<unsigned>((n + block - 1) / block), static_cast<unsigned>(threads), static_cast<unsigned>(shared)};
}

/// A multiprefix loop's launch (a warp an instance): blocks of as many warps, up to 8, as its
/// instances' records and rows fit in a block's shared memory (at the rows' average lengths, a
/// quarter more), each warp an instance; where not one fits, blocks of 8 warps with none, and
/// the rows stay in global memory.
runtime::cuda::LaunchConfig warp_loop_launch(const flatten::KernelBody& k, std::span<const DVec> seqs, int64_t n,
                                             const runtime::cuda::Device& device) {
  const runtime::cuda::DeviceProperties& p = device.properties();
  const int64_t most = std::max(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block);
  const double per_instance = 1.25 * staged_bytes(k, seqs, 32);
  for (int64_t warps = 8; warps >= 1; warps /= 2) {
    const double shared = per_instance * static_cast<double>(warps) + 16;
    if (shared <= static_cast<double>(most))
      return {static_cast<unsigned>((n + warps - 1) / warps), static_cast<unsigned>(32 * warps), static_cast<unsigned>(shared)};
  }
  return device.one_thread_per_element(32 * n);  // as an unstaged warp loop: blocks of 256 threads
}

}  // namespace

// Note [Block rows launches]
// A map kernel with block rows (Note [Block rows] in codegen/block_rows.h) copies a block's
// rows to shared memory only where its launch gives the room. A block gets its instances' rows
// at the rows' average length, a quarter more so that uneven rows mostly fit, and 8 bytes a
// component for alignment; only where a multiprocessor then still holds as many blocks as its
// threads allow (shared memory that cut them would cost more in hidden latency than the copies
// save), and where rows by id come from a sequence of at least as many rows as instances; else
// none, and every block reads global memory.
namespace {

runtime::cuda::LaunchConfig block_rows_launch(const flatten::KernelBody& k, std::span<const flatten::KernelBody::StagedSeq> copied,
                                              std::span<const DVec> seqs, int64_t n, int lanes,
                                              const runtime::cuda::Device& device) {
  runtime::cuda::LaunchConfig shape = device.one_thread_per_element(n * lanes);
  const runtime::cuda::DeviceProperties& p = device.properties();
  if (!block_rows_allowed() || p.max_threads_per_sm <= 0) return shape;
  const double instances = static_cast<double>(shape.block_x / static_cast<unsigned>(lanes));
  double bytes = 16;
  for (const flatten::KernelBody::StagedSeq& s : copied) {
    const DVec& rows = seqs[s.seq];
    // Rows by id from a sequence of fewer rows than instances: the ids repeat, and a block's
    // are rarely consecutive.
    if (k.nodes[s.row].kind == flatten::KernelNode::Kind::Input && rows.size() < n) return shape;
    if (rows.size() == 0) continue;
    const double length = static_cast<double>(rows.elems().size()) / static_cast<double>(rows.size());
    for (const lang::Type* t : k.seqs[s.seq].components) bytes += 1.25 * instances * length * static_cast<double>(elem_bytes(t)) + 8;
  }
  const double blocks_held = static_cast<double>(p.max_threads_per_sm / static_cast<int>(shape.block_x));
  const double most = static_cast<double>(std::max(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block));
  if (bytes * blocks_held <= most && bytes <= static_cast<double>(p.max_shared_memory_per_block))
    shape.shared_bytes = static_cast<unsigned>(bytes);
  return shape;
}

}  // namespace

/// A square of 32 × 32 instances of the grid a block of 256 threads (compile_ptx's tiled kernel).
runtime::cuda::LaunchConfig tiled_launch(int64_t n, int64_t columns) {
  const int64_t square = 32, across = (columns + square - 1) / square, down = (n / columns + square - 1) / square;
  return {static_cast<unsigned>(across * down), 256, 0};
}

/// The room an appended row gets beyond its input row in the first run (Note [Appended
/// sequences in loop kernels]), by kernel: doubled each time a row outgrew its slot.
std::unordered_map<std::string, int64_t>& appended_room() {
  static std::unordered_map<std::string, int64_t> room;
  return room;
}
constexpr int64_t kFirstRoom = 16, kMostRoom = 4096;

/// An appended sequence's slots for one run.
struct Slots {
  DBuf offsets;  // n + 1
  DBuf lengths;  // n, written by the kernel
  DVec elems;
  std::vector<CUdeviceptr> components;
};

/// Raises the error of kernel k's failure record (Note [Kernels that can fail]): the failing
/// instance's inputs and the rows it read, downloaded, evaluated on the host.
[[noreturn]] void raise_failure(Gpu& g, const flatten::KernelBody& k, uint64_t record, std::span<const DVec> ins,
                                std::span<const DVec> seqs) {
  std::vector<lang::Value> at;
  std::vector<std::vector<lang::Value>> rows;
  for (const DVec& v : ins) at.push_back(host::to_value(download(g, v), flatten::failed_instance(record)));
  for (const DVec& v : seqs) rows.push_back(host::to_values(download(g, v)));
  host::raise_kernel_failure(k, record, at, rows);
}

/// About the device bytes that holding `vs` keeps alive (a deferred one counted as stored).
int64_t held_bytes(std::span<const DVec> vs) {
  int64_t bytes = 0;
  for (const DVec& v : vs) {
    switch (v.kind()) {
      case lang::TypeKind::Pair: {
        const DVec parts[] = {v.first(), v.second()};
        bytes += held_bytes(parts);
        break;
      }
      case lang::TypeKind::Data: bytes += held_bytes(std::span<const DVec>(&v.fields(), 1)); break;
      case lang::TypeKind::Seq:  // offsets, but for regular rows (Note [Known values])
        bytes += (v.regular_length() ? 0 : v.size() * 8) + held_bytes(std::span<const DVec>(&v.elems(), 1));
        break;
      default: bytes += v.size() * elem_bytes(v.type()); break;
    }
  }
  return bytes;
}

/// Whether some fold of k counts a range whose bounds a kernel may have computed, not a row's
/// length: after a failed kernel's output such a fold could run for ever (Note [Deferred
/// failure records] in gpu.h).
bool folds_over_ranges(const flatten::KernelBody& k) {
  for (const flatten::KernelNode& n : k.nodes)
    if (n.kind == flatten::KernelNode::Kind::Fold && k.nodes.at(n.args.at(0)).kind != flatten::KernelNode::Kind::SeqLength)
      return true;
  return false;
}

}  // namespace

std::vector<DVec> GpuKernels::run(const flatten::KernelBody& k, std::span<const DVec> ins,
                                  std::span<const lang::Type* const> out_types, std::span<const DVec> seqs,
                                  InstanceThreads threads, std::optional<lang::Span> defer_at) {
  NDP_ASSERT(!ins.empty() && seqs.size() == k.seqs.size(), "kernel operands do not match its body");
  int64_t n = ins[0].size();
  if (n == 0) {
    std::vector<DVec> outs;
    for (const lang::Type* t : out_types) outs.push_back(DVec::scalar(t, 0, gpu_.alloc(0)));
    for (uint32_t q : k.seq_outputs) outs.push_back(seqs[q]);  // no rows
    return outs;
  }
  // A fold over a range whose bounds may come from a failed kernel's output waits for the
  // records first (Note [Deferred failure records] in gpu.h); a loop gives up by its budget.
  if (!k.loop && folds_over_ranges(k)) gpu_.check_deferred_records();
  KernelArgs first_args = kernel_args(ins, SIZE_MAX, nullptr, true);
  // Without the gathering variant, the gathers run first (Note [Precompiled modules]).
  const int lanes = threads.lanes;
  const flatten::KernelForm form = threads.form();
  if (!first_args.gathered.empty() && !can_load(k, first_args.gathered, lanes, form)) first_args = kernel_args(ins, ins.size());
  // Note [Regular rows in kernels]: the sequences it reads or writes in place whose rows have
  // one length. Note [Zeroed rows] in codegen/staged_rows.h: the staged ones it writes that
  // start as zeros (a count's dist(0, m)), which it zeroes itself; Note [Sourced rows] there:
  // the other staged ones it writes, which it copies itself.
  flatten::RowForms rows;
  for (size_t q = 0; q < seqs.size() && q < 64; ++q)
    if (!k.seqs[q].appended && seqs[q].regular_length()) rows.regular |= uint64_t{1} << q;
  if (!k.staged_seqs_on(lanes).empty())  // (a warp's loop starts its unstaged own-slot rows too)
    for (const flatten::KernelBody::StagedSeq& s : k.staged_seqs())
      if (s.seq < 64 && k.seqs[s.seq].written)
        (known_zeros(seqs[s.seq].elems()) ? rows.zeroed : rows.sourced) |= uint64_t{1} << s.seq;
  if (rows != flatten::RowForms{} && !can_load(k, first_args.gathered, lanes, form, rows)) rows = {};
  const runtime::cuda::Kernel& kernel = kernel_for(k, first_args.gathered, lanes, form, rows);
  // At most as many blocks as the GPU holds of this kernel at once; the driver's answer is
  // advice, so without one the parts stay as asked.
  int64_t parts = threads.parts;
  if (form == flatten::KernelForm::SplitRows)
    if (runtime::cuda::Result<int64_t> held = runtime::cuda::resident_blocks(gpu_.device(), kernel, lanes); held.ok())
      parts = split_parts_within(parts, n, held.value());
  int64_t& room = appended_room().try_emplace(k.key(), kFirstRoom).first->second;
  std::vector<Slots> slots(seqs.size());
  for (bool again = false;; again = true) {
    std::vector<DVec> outs;
    outs.reserve(out_types.size());
    for (const lang::Type* t : out_types) outs.push_back(DVec::scalar(t, n, gpu_.alloc(n * elem_bytes(t))));
    // ndp_kernel(i64 n, ptr in_0, ..., [ptr positions_0, ...], ptr out_0, ...):
    // ptx_instances_per_thread instances a thread.
    // A kernel that can fail takes the failure record last (Note [Kernels that can fail]).
    std::vector<CUdeviceptr> ptrs = first_args.ptrs;
    // After the inputs and positions: each sequence's offsets, then its components, a copy where
    // the loop writes (Note [Sequence state in loop kernels]), and an appended one's slots.
    std::vector<DVec> written(seqs.size());
    for (size_t q = 0; q < seqs.size(); ++q) {
      ptrs.push_back(rows.regular >> q & 1 ? static_cast<CUdeviceptr>(*seqs[q].regular_length()) : seqs[q].offsets());
      if (k.seqs[q].written)
        written[q] = (rows.zeroed | rows.sourced) >> q & 1 ? unfilled_like(gpu_, seqs[q].elems()) : fresh_copy(gpu_, seqs[q].elems());
      component_pointers(k.seqs[q].written ? written[q] : seqs[q].elems(), ptrs);
      if (!k.seqs[q].appended) continue;
      Slots& sl = slots[q];
      int64_t total = 0;
      if (again) {  // the exact lengths the first run counted
        KnownSegments exact = segments_of_valid_lengths(gpu_, n, sl.lengths);
        sl.offsets = std::move(exact.offsets);
        total = exact.total;
      } else {
        sl.offsets = gpu_.alloc((n + 1) * 8);
        gpu_.check(gpu_.prims().slot_offsets(seqs[q].offsets(), n, room, sl.offsets->pointer()));
        total = seqs[q].elems().size() + n * room;
      }
      sl.lengths = gpu_.alloc(n * 8);
      sl.components.clear();
      sl.elems = blank(gpu_, seqs[q].type()->a, total, sl.components);
      ptrs.push_back(sl.offsets->pointer());
      ptrs.push_back(sl.lengths->pointer());
      ptrs.insert(ptrs.end(), sl.components.begin(), sl.components.end());
    }
    for (const DVec& v : outs) ptrs.push_back(v.data());
    const bool can_fail = k.can_fail();
    // Note [Deferred failure records] in gpu.h: a kernel whose failure nothing here waits on
    // (not a loop that folds, which may give up, nor one that appends) is checked at the next
    // read.
    const bool appends = std::any_of(k.seqs.begin(), k.seqs.end(), [](const auto& q) { return q.appended; });
    const bool deferred = can_fail && defer_at && !(k.loop && k.folds()) && !appends;
    if (deferred) {
      std::vector<DVec> in_copy(ins.begin(), ins.end()), seq_copy(seqs.begin(), seqs.end());
      const int64_t held = held_bytes(ins) + held_bytes(seqs);
      ptrs.push_back(gpu_.deferred_record([g = &gpu_, &k, span = *defer_at, in_copy = std::move(in_copy),
                                           seq_copy = std::move(seq_copy)](uint64_t record) {
        try {
          raise_failure(*g, k, record, in_copy, seq_copy);
        } catch (lang::eval::EvalError& err) {
          if (!err.span.valid()) err.span = span;  // as FlatWalk::exec would have given it
          throw;
        }
      }, held));
    } else if (can_fail) {
      ptrs.push_back(gpu_.kernel_record());
    }
    for (size_t q = 0; q < seqs.size() && q < 64; ++q)  // the sourced rows' sources (RowForms::sourced)
      if (rows.sourced >> q & 1) component_pointers(seqs[q].elems(), ptrs);
    std::vector<void*> params;
    params.push_back(&n);
    for (CUdeviceptr& p : ptrs) params.push_back(&p);
    // After the last pointer (compile_ptx): a tiled kernel's columns, a split one's scratch.
    int64_t columns = threads.columns;
    CUdeviceptr partials = 0, arrivals = 0;
    if (form == flatten::KernelForm::Tiled) params.push_back(&columns);
    if (form == flatten::KernelForm::SplitRows) {
      NDP_ASSERT(lanes == flatten::kSplitLanes && n * parts <= flatten::kMostSplitBlocks, "a split launch past its scratch");
      std::tie(partials, arrivals) = gpu_.split_scratch();
      for (void* p : {static_cast<void*>(&partials), static_cast<void*>(&arrivals), static_cast<void*>(&parts)}) params.push_back(p);
    }
    // A loop without folds watches the deferred records taken before it (kernel_abi.h): its
    // own, if deferred, is the last one taken.
    CUdeviceptr records = 0;
    int64_t watched = 0;
    if (flatten::watches_failures(k.loop, k.folds())) {
      records = gpu_.deferred_records();
      watched = gpu_.deferred_records_taken() - (deferred ? 1 : 0);
      params.push_back(&records);
      params.push_back(&watched);
    }
    // Several instances a thread, or several threads an instance (blocks of 256 threads hold
    // whole instances: lanes is at most 256), or several blocks an instance.
    const int64_t per_thread = flatten::ptx_instances_per_thread(k.instance_at_a_time());
    const int64_t thread_count = lanes > 1 ? n * parts * lanes : (n + per_thread - 1) / per_thread;
    const std::vector<flatten::KernelBody::StagedSeq> copied = flatten::copied_block_rows(k, first_args.gathered, form, lanes);
    const runtime::cuda::LaunchConfig shape = form == flatten::KernelForm::Tiled ? tiled_launch(n, columns)
                                              : lanes == 1 && !k.staged_seqs().empty() ? loop_launch(k, seqs, n, gpu_.device())
                                              : k.loop && lanes > 1 && !k.staged_seqs_on(lanes).empty() ? warp_loop_launch(k, seqs, n, gpu_.device())
                                              : !copied.empty() ? block_rows_launch(k, copied, seqs, n, lanes, gpu_.device())
                                                                : gpu_.device().one_thread_per_element(thread_count);
    NDP_ASSERT(form != flatten::KernelForm::SplitRows || shape.block_x == static_cast<unsigned>(lanes),
               "a split launch's blocks are not its instances' parts");
    gpu_.check(runtime::cuda::launch(gpu_.device(), kernel, shape, params.data()));
    if (can_fail && !deferred) {
      uint64_t record = gpu_.take_kernel_record();
      if (flatten::gave_up(record, k.nodes.size())) throw flatten::LoopGaveUp{};
      if (record != flatten::kNoKernelFailure) raise_failure(gpu_, k, record, ins, seqs);
    }
    // A row that outgrew its slot: every row's length is known now, so run again with them.
    bool outgrown = false;
    for (size_t q = 0; q < seqs.size() && !again; ++q)
      if (k.seqs[q].appended && gpu_.check(gpu_.prims().slot_outgrown(slots[q].offsets->pointer(), slots[q].lengths->pointer(), n)) >= 0)
        outgrown = true;
    if (outgrown) {
      room = std::min(kMostRoom, 2 * room);
      continue;
    }
    for (uint32_t q : k.seq_outputs) {
      if (!k.seqs[q].appended) {  // the written rows, in the shape they came in (regular stays so)
        outs.push_back(seqs[q].with_elems(seqs[q].type(), written[q]));
        continue;
      }
      Slots& sl = slots[q];
      if (again) {  // the slots are the rows
        outs.push_back(DVec::seq(seqs[q].type(), n, sl.lengths, sl.offsets, sl.elems));
        continue;
      }
      KnownSegments rows = segments_of_valid_lengths(gpu_, n, sl.lengths);
      std::vector<CUdeviceptr> out_components;
      DVec elems = blank(gpu_, seqs[q].type()->a, rows.total, out_components);
      for (size_t c = 0; c < out_components.size(); ++c)
        gpu_.check(gpu_.prims().slot_pack(static_cast<int>(elem_bytes(k.seqs[q].components[c])), sl.components[c],
                                          sl.offsets->pointer(), rows.offsets->pointer(), n, out_components[c]));
      outs.push_back(DVec::seq(seqs[q].type(), n, sl.lengths, std::move(rows.offsets), std::move(elems)));
    }
    return outs;
  }
}

}  // namespace ndp::exec::cuda
