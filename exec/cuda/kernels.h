// Fused elementwise kernels on the GPU: PTX from the installed kernel compiler
// (exec/common/kernel_compiler.h), loaded by the CUDA driver, cached.
//
// Note [Kernel cache]
// Kernels are keyed by their body's structural key (KernelBody::key) and the target (sm_90).
// In memory: the loaded kernel, for the process's lifetime. On disk: the cubin the driver's
// JIT made from the PTX, in the cache folder (NDP_CACHE_DIR, else $XDG_CACHE_HOME/ndp/kernels,
// else ~/.cache/ndp/kernels), one file per key hash, written atomically (temporary file, then
// rename), so a second run of a program and repeated REPL expressions skip both LLVM and the
// PTX JIT. NDP_CACHE_DIR=off disables the disk cache. A file that fails to load is ignored and
// rewritten. Consumer programs (Note [Consumer programs] in runtime/gpu/consumer_program.h) are
// kept in memory only: the driver compiles them as whole programs with cuModuleLoadDataEx,
// which hands back no cubin, and keeps them across runs in its own JIT cache.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "exec/common/cache_dir.h"

#include "exec/common/kernel_compiler.h"
#include "exec/cuda/device_vec.h"
#include "exec/cuda/gpu.h"
#include "flatten/flat_ir.h"
#include "runtime/gpu/consumer_program.h"
#include "runtime/cuda/module.h"

namespace ndp::exec::cuda {

using flatten::GatheredInput;

// Note [Fused gathers]
// An input of a fused kernel or consumer kernel may be a deferred gather (Note [Deferred
// vectors] in device_vec.h), source[index[i]], not yet computed. The kernel then reads source through
// index itself: the input's pointer is the source's, the positions follow the body's inputs,
// and the kernel is compiled with that input listed as gathered (compile_ptx,
// compile_element_ptx), a separate entry in the caches. The gathered values are never stored,
// which saves writing and reading them again (8 + 8 bytes an element for a float).
struct KernelArgs {
  std::vector<GatheredInput> gathered;  // inputs read through positions
  /// The body's inputs, then the positions of each gathered one; guarded (an element
  /// function's): then each one's bound and the failure flags (compile_element_ptx).
  std::vector<CUdeviceptr> ptrs;
  std::vector<const DVec*> unchecked;  // guarded: per gathered input, the gather if unchecked
};
/// The arguments for `ins`, gathering inside the kernel while at most `max_ptrs` pointers
/// result. Guarded (`guard` not null: an element function's): gathers keep their bounds checks
/// for the kernel, with guard's flags (Note [Checked gathers] in device_vec.h); otherwise an
/// unchecked gather is checked first. With `broadcast` (never for an element function), a
/// pending broadcast is read in place (Note [Broadcast inputs]).
KernelArgs kernel_args(std::span<const DVec> ins, size_t max_ptrs, Gpu* guard = nullptr, bool broadcast = false);

// Note [Broadcast inputs]
// A call's free scalar (`k` in {k * x : x in v}) enters the apply-to-each as a replicate of one
// value over every instance (DVec::deferred_broadcast). A plain fused kernel reads that one
// value at position 0 instead (GatheredInput::broadcast, compile_ptx), so the n copies are
// never made: for a call through the embedding API on 16 elements that saves an allocation and
// a launch, about 6 µs. Element functions and modules compiled ahead without that variant read
// the copies, made as before.
//
// Note [Iota inputs]
// A lifted function called once over a shared sequence's rows reads them by id, and the ids
// are an iota (row_ids = nest(lengths, iota(#rows)) gathered by the one instance's id 0): the
// segmented sum called in a loop over 2^22 rows of 4 stored 32 MB of 0, 1, 2, ... each call, a
// launch, an allocation and twice that in memory traffic, for a map kernel that reads id i at
// instance i. So Iota is deferred as such (DVec::deferred_iota), and a plain fused kernel
// takes an iota input's value at instance i as i (GatheredInput::iota, compile_ptx): no
// memory, no positions. Element functions and modules compiled ahead without that variant
// read it stored.
//
// Note [Spread inputs]
// A lifted function's free variables reach its apply-to-each as each instance's value spread
// over the instance's segment (Replicate, CudaExecutor::spread): quickhull's line ends p1 and p2,
// four floats, over every point of the line's segment. Stored, each costs a pass that writes 8
// bytes an element, and the kernel that reads them 8 bytes more an element: at quickhull's first
// level of 2 × 10^7 points, four such copies took 4 × 48 µs and made the cross product's
// kernel read 6 streams where 2 are its own (Nsight Compute, H200, bench/results/session36).
// So the spread stays deferred (DVec::deferred_spread) and a plain fused kernel reads the value
// at each element's segment (GatheredInput::spread, compile_ptx): the segment is i / c where
// every segment has c elements, and otherwise the last offset at most i: a binary search over
// the segments' offsets (that every warp mostly shares) for a thread's first instance, from
// which its later ones walk on (ndp_segment_from: at most 8 segments, then a search), once for
// all the inputs spread over the same segments (GatheredInput::segments_of). A search over many
// short segments costs more than it saves, so only segments of 64 elements or more on average
// are read so (spread_in_place, kernels.cpp); modules compiled ahead without that variant read
// the copies, made as before.
//
// Each element's place in its segment (a lifted index(#s) or [0:#s], DVec::deferred_rank) is
// read the same way and computed, i minus its segment's first element (GatheredInput::rank),
// where quickhull's max_index stored 8 bytes an element and read them back. Element functions
// read spread inputs and ranks too: a thread's items rise 32 elements apart, so each searches
// for its first item's segment once and every item walks on from it (compile_element_ptx).
//
// Note [Interleaved blocks]
// [x, y] of two regular sequences of c elements lays each instance's x and then its y: blocks
// of c elements of x's elements and of y's in turn. Batcher's merge makes [lows, highs] at
// every level, and the next level takes the halves of each of those rows (views of it, Note
// [Regular elt views] in device_vec.h) into its min and max: storing the blocks was an append
// that read and wrote every element once more a level, 2.5 of the 6.2 ms of kernels in a sort
// of 2^20 keys (Nsight Compute, H200, bench/results/session36). So the blocks stay deferred
// (DVec::deferred_interleave) and a plain fused kernel reads them in place, directly or through
// a view's shape (GatheredInput::interleaved, compile_ptx): position P of the blocks is element
// (P / 2c)·c + P mod c of x where P / c is even, of y where it is odd. Anything else gets the
// blocks appended, as before.

/// How a kernel's instances take the GPU's threads (KernelForm in flatten/kernel_abi.h): `lanes`
/// threads an instance (Note [Map kernels]); `columns` > 0: the instances are a grid of that
/// many columns, and the kernel is tiled (Note [Tiled folds]); `parts` > 1: each instance over
/// that many blocks of kSplitLanes lanes (Note [Rows over several blocks] in codegen/lanes.h).
struct InstanceThreads {
  int lanes = 1;
  int64_t columns = 0;
  int64_t parts = 1;
  flatten::KernelForm form() const {
    return columns > 0 ? flatten::KernelForm::Tiled : parts > 1 ? flatten::KernelForm::SplitRows : flatten::KernelForm::Instances;
  }
};

class GpuKernels {
 public:
  explicit GpuKernels(Gpu& g) : gpu_(g) {}
  /// Runs the kernel over the inputs (all of one instance count) and returns its outputs.
  /// `seqs`: the rows of each sequence a loop or map kernel reads (Note [Sequences in loop
  /// kernels]); `threads`: how its instances take the GPU's threads.
  /// `defer_at`: a failure of the kernel may be read at the next read-back instead of now
  /// (Note [Deferred failure records] in gpu.h); its error then has this statement's span
  /// where it has none of its own, and `k` must live until then (the program's Flat IR, or
  /// GpuPrimContext::deferred_bodies).
  std::vector<DVec> run(const flatten::KernelBody& k, std::span<const DVec> ins, std::span<const lang::Type* const> out_types,
                        std::span<const DVec> seqs = {}, InstanceThreads threads = {},
                        std::optional<lang::Span> defer_at = std::nullopt);
  /// True when kernel `k` can be had in `form` (a compiler, or ahead of time), at `lanes`.
  bool form_available(const flatten::KernelBody& k, flatten::KernelForm form, int lanes = 1) const {
    return can_load(k, {}, lanes, form);
  }

  struct Stats {
    int64_t compiled = 0;      ///< kernels generated with LLVM and JIT-compiled by the driver
    int64_t disk_hits = 0;     ///< kernels loaded from the disk cache
    int64_t memory_hits = 0;   ///< launches of a kernel already loaded
    int64_t precompiled = 0;   ///< modules loaded from a compiled program (Note [Precompiled modules])
  };
  const Stats& stats() const { return stats_; }
  /// True when run() can have kernel `k` (without gathered inputs): a compiler makes PTX, or
  /// it is loaded or precompiled (Note [Precompiled modules]). Where not, the lifted
  /// primitives that make their own kernels run on the host instead.
  bool available(const flatten::KernelBody& k) const { return can_load(k, {}); }

  /// The consumer kernels `use` names (runtime/gpu/device/fused.cu) with output 0 of `k` as
  /// their element function (Note [Consumer kernels]), compiled as one program (Note [Consumer
  /// programs] in runtime/gpu/consumer_program.h) once per process, and across runs by the
  /// driver's JIT cache; null when that fails (a build without them): the caller runs the
  /// consumer unfused.
  const runtime::cuda::Module* consumer_module(const flatten::KernelBody& k, const runtime::gpu::ConsumerKernels& use,
                                          std::span<const GatheredInput> gathered = {});
  /// The kernel of regular levels `plan` (Note [Regular levels] in flatten/flat_ir.h), one level
  /// over the array or the levels in blocks (codegen/regular_levels_ptx.h); null where no
  /// compiler makes it and none was compiled ahead: the loop then runs level by level.
  const runtime::cuda::Kernel* regular_levels_kernel(const flatten::RegularLevels& plan, bool in_block);
  /// The module of the kernels of partition levels `plan` over elements of `elem` (Note
  /// [Partition levels on the GPU] in codegen/partition_levels_ptx.h); null where no compiler
  /// makes it (a build without the engine) and none was compiled ahead: the loop then runs
  /// level by level.
  /// Its kernels are looked up, and set up (the shared-memory carveout), once with the module.
  struct PartitionKernels {
    runtime::cuda::Kernel seed, count, plan, scatter, block;
  };
  const PartitionKernels* partition_kernels(const flatten::PartitionLevels& plan, const lang::Type* elem);

 private:
  const runtime::cuda::Kernel& kernel_for(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes,
                                         flatten::KernelForm form, flatten::RowForms rows);
  /// The `ndp_kernel` entry of the module of `key`: loaded already, else from the disk cache or
  /// the precompiled modules, else compiled from make_ptx() (LLVM's failures are internal errors
  /// naming `what`); null where make_ptx() gives no PTX.
  const runtime::cuda::Kernel* loaded_kernel(const std::string& key, const char* what,
                                             const std::function<std::string()>& make_ptx);
  /// True when kernel_for can have this kernel: loaded, precompiled, or a compiler makes PTX.
  bool can_load(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes = 1,
                flatten::KernelForm form = flatten::KernelForm::Instances, flatten::RowForms rows = {}) const;
  /// The module of `key` from the disk cache, else from make_cubin() (then written there); null
  /// where make_cubin() gives nothing.
  std::shared_ptr<runtime::cuda::Module> load_cached(const std::string& key, const std::function<std::string()>& make_cubin);
  Gpu& gpu_;
  std::map<std::string, std::pair<std::shared_ptr<runtime::cuda::Module>, runtime::cuda::Kernel>> loaded_;
  std::map<std::string, std::shared_ptr<runtime::cuda::Module>> consumers_;  // null: could not compile
  struct PartitionModule {
    std::shared_ptr<runtime::cuda::Module> module;  // null: none to be had
    PartitionKernels kernels;
  };
  std::map<std::string, PartitionModule> partitions_;
  bool consumer_failure_told_ = false;  // a consumer program failed and the user was told
  Stats stats_;
};

// Note [Precompiled modules]
// A program compiled ahead of time (`ndp compile`, Note [Compiled images]) brings its GPU
// modules as fatbinaries (sm_90 SASS and compute_90 PTX) under the keys the caches use
// (kernel_key, consumer_key): the plain kernels and the consumer programs of its statements,
// without gathered inputs. GpuKernels loads a module from them before it looks in the disk cache
// or asks the kernel compiler. Where no compiler can make PTX (KernelCompiler::compiles_ptx, the
// runtime library of compiled programs) a kernel whose inputs would be gathered inside it runs
// on the gathered values instead, a consumer runs unfused, and a lifted primitive whose own
// kernel (a single elementwise primitive, the check of a division) is missing runs on the host:
// the same results, with the modules the program brought. `ndp compile` holds those kernels too
// (driver/compile_gpu.cpp), so that a compiled program normally needs none of these fallbacks.

/// The cache key of a plain kernel and of a consumer program (Note [Kernel cache]).
std::string kernel_key(const flatten::KernelBody& k, std::span<const GatheredInput> gathered, int lanes = 1,
                       flatten::KernelForm form = flatten::KernelForm::Instances, flatten::RowForms rows = {});
std::string consumer_key(const flatten::KernelBody& k, const runtime::gpu::ConsumerKernels& use,
                         std::span<const GatheredInput> gathered);
/// The cache key of a kernel of regular levels (GpuKernels::regular_levels_kernel).
std::string regular_levels_module_key(const flatten::RegularLevels& plan, bool in_block);
/// The cache key of the kernels of partition levels (GpuKernels::partition_kernels).
std::string partition_levels_module_key(const flatten::PartitionLevels& plan, const lang::Type* elem);

/// Makes `image` (a fatbinary or cubin that stays in memory) the module of `key` for the process.
void register_precompiled_module(std::string key, const void* image);

}  // namespace ndp::exec::cuda
