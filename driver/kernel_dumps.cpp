// The fused kernels of a flat program as text: `--dump=llvm|ptx`, and the PTX that CI assembles.
#include "driver/kernel_dumps.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "codegen/kernel_jit.h"
#include "codegen/kernel_ptx.h"
#include "codegen/partition_levels_ptx.h"
#include "codegen/regular_levels_ptx.h"
#include "exec/cuda/consumer_kernels.h"
#include "flatten/kernel_abi.h"
#include "flatten/passes/ir_walk.h"
#include "flatten/tiled_folds.h"
#include "runtime/gpu/consumer_program.h"

namespace ndp::driver {

namespace {

/// Calls f(kernel statement, its function) for every fused kernel of a flat program (Kernel
/// statements, the consumer kernels, and the predicates of filter groups), and for every
/// recursion loop with regular levels (Note [Regular levels] in flatten/flat_ir.h).
void for_each_kernel(const flatten::Program& program, const std::function<void(const flatten::Stmt&, const flatten::Function&)>& f) {
  for (const flatten::Function& fn : program.functions) {
    std::function<void(const flatten::Block&)> walk = [&](const flatten::Block& b) {
      for (const flatten::Stmt& s : b.stmts) {
        if (s.kernel || (s.loop && (s.loop->regular || s.loop->partition))) f(s, fn);
        flatten::for_each_sub_block(s, walk);
      }
    };
    walk(fn.body);
  }
}

}  // namespace

std::string dump_kernels(DumpStage stage, const flatten::Program& program) {
  std::string out;
  int count = 0;
  for_each_kernel(program, [&](const flatten::Stmt& s, const flatten::Function& fn) {
    if (!s.kernel) return;  // (a regular loop's kernels are its map's, shown with its statement)
    // A consumer kernel's values: the cpu backend evaluates them a window at a time with the
    // kernel loop; the GPU's passes call them as the element function (Note [Consumer kernels]).
    // A filter group's predicates run as a Kernel statement's outputs do (Note [Filter groups]).
    bool consumer = flatten::is_consumer_kernel(s.op);
    std::string what;
    if (s.op == flatten::Op::FilterGroup) {
      what = " (the predicates of a filter group)";
    } else if (consumer) {
      std::string prim = s.op == flatten::Op::PackKernel ? "" : std::string(" ") + lang::core::prim_info(s.prim).name;
      what = fmt::format(" (the values of {}{})", flatten::op_name(s.op), prim);
    }
    out += fmt::format("; kernel {} of function {}{}\n", count++, fn.name, what);
    try {
      out += stage == DumpStage::Llvm ? codegen::host_kernel_ir(*s.kernel)
             : consumer           ? codegen::compile_element_ptx(*s.kernel)
                                  : codegen::compile_ptx(*s.kernel);
    } catch (const std::exception& e) {
      out += fmt::format("; code generation failed: {}\n", e.what());
    }
  });
  if (count == 0) out = "; no fused kernels in this form (fusion needs a chain of two or more elementwise operations)";
  return out;
}

void save_ptx_for_check(const flatten::Program& program) {
  static const char* dir = std::getenv("NDP_PTX_CHECK_DIR");
  if (dir == nullptr || *dir == '\0') return;
  static std::set<std::string> seen;  // a session runs its forms one at a time
  auto save = [&](const std::string& key, const std::string& suffix, const std::function<std::string()>& make) {
    if (!seen.insert(key).second) return;
    std::string ptx;
    try {
      ptx = make();
    } catch (const std::exception& e) {
      ptx = std::string("code generation failed: ") + e.what() + "\n";
    }
    if (ptx.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::ofstream(std::filesystem::path(dir) / (flatten::stable_hash_hex(key) + suffix)) << ptx;
  };
  for_each_kernel(program, [&](const flatten::Stmt& s, const flatten::Function& fn) {
    if (s.loop && s.loop->regular) {  // the kernels of its regular levels, one level and the levels in blocks
      const flatten::RegularLevels& r = *s.loop->regular;
      for (bool in_block : {false, true})
        save(flatten::regular_levels_key(r, in_block), ".regular.ptx",
             [&] { return codegen::compile_regular_levels_ptx(r, in_block); });
      return;
    }
    if (s.loop) {  // the kernels of its partition levels (in a build with their engine)
      const flatten::PartitionLevels& p = *s.loop->partition;
      const lang::Type* elem = fn.arg_type->a;
      if (codegen::has_partition_engine())
        save(flatten::partition_levels_key(p, elem), ".partition.ptx", [&] { return codegen::compile_partition_levels_ptx(p, elem); });
      return;
    }
    if (!flatten::is_consumer_kernel(s.op)) {  // a Kernel statement or a filter group's predicates
      save(s.kernel->key(), ".ptx", [&] { return codegen::compile_ptx(*s.kernel); });
      // A tiled fold's kernel too (Note [Tiled folds]), which the cuda backend may choose.
      if (s.op == flatten::Op::MapKernel && flatten::tiled_fold(*s.kernel))
        save(s.kernel->key() + " tiled", ".tiled.ptx", [&] { return codegen::compile_ptx(*s.kernel, {}, 1, flatten::KernelForm::Tiled); });
      // A multiprefix loop's warp form too (Note [Multiprefix loops] in flatten/flat_ir.h).
      if (s.op == flatten::Op::LoopKernel && s.kernel->multiprefix())
        save(s.kernel->key() + " warp", ".warp.ptx", [&] { return codegen::compile_ptx(*s.kernel, {}, 32); });
      // And a row over several blocks (Note [Rows over several blocks] in codegen/lanes.h).
      if (s.op == flatten::Op::MapKernel && s.kernel->split_fold())
        save(s.kernel->key() + " split", ".split.ptx", [&] {
          return codegen::compile_ptx(*s.kernel, {}, flatten::kSplitLanes, flatten::KernelForm::SplitRows);
        });
      return;
    }
    // The programs over one segment and over several (one and the same for a pack).
    for (bool one_segment : {true, false}) {
      const runtime::gpu::ConsumerKernels use = exec::cuda::consumer_kernels_of(s, fn.vars.at(s.dst).type, one_segment);
      save(s.kernel->key() + " " + use.key(), ".consumer.ptx", [&]() -> std::string {
        std::string_view consumers = runtime::gpu::consumer_ptx(use.image);
        if (consumers.empty()) return "";  // a build without the consumer kernels
        runtime::cuda::Result<std::string> whole =
            runtime::gpu::consumer_program(consumers, codegen::compile_element_ptx(*s.kernel), use.entries);
        return whole.ok() ? whole.value() : "consumer program failed: " + whole.status().message() + "\n";
      });
    }
  });
}

}  // namespace ndp::driver
