// gpu_modules and assemble_gpu_modules (compile_gpu.h).
#include "driver/compile_gpu.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "codegen/kernel_ptx.h"
#include "codegen/partition_levels_ptx.h"
#include "codegen/regular_levels_ptx.h"
#include "exec/cuda/consumer_kernels.h"
#include "exec/cuda/kernels.h"
#include "exec/cuda/map_lanes.h"
#include "flatten/kernel_abi.h"
#include "flatten/passes/fuse_elementwise.h"
#include "flatten/tiled_folds.h"
#include "runtime/gpu/consumer_program.h"

namespace ndp::driver {

namespace fs = std::filesystem;
using flatten::GatheredInput;

namespace {

class ModuleCollector {
 public:
  explicit ModuleCollector(lang::TypeContext& types) : types_(types) {}
  std::vector<GpuModule> modules;

  void function(const flatten::Function& f) { block(f, f.body); }

 private:
  void block(const flatten::Function& f, const flatten::Block& b) {
    for (const flatten::Stmt& s : b.stmts) {
      if (s.kernel) add_kernel(f, s);
      if (s.op == flatten::Op::Prim) add_prim_kernels(f, s);
      for (const flatten::Block* inner : {s.then_block.get(), s.else_block.get()})
        if (inner) block(f, *inner);
      if (s.loop)
        for (const flatten::Block* inner : {&s.loop->prefix, &s.loop->step, &s.loop->combine, &s.loop->finish})
          block(f, *inner);
      if (s.loop && s.loop->regular) add_regular_levels(*s.loop->regular);
      if (s.loop && s.loop->partition && codegen::has_partition_engine()) {
        const flatten::PartitionLevels& p = *s.loop->partition;
        add(exec::cuda::partition_levels_module_key(p, f.arg_type->a), [&] { return codegen::compile_partition_levels_ptx(p, f.arg_type->a); });
      }
    }
  }
  /// The kernels of a regular loop (Notes [Regular levels] and [Regular ascents]), and of the
  /// regular loop an ascent calls.
  void add_regular_levels(const flatten::RegularLevels& plan) {
    for (bool in_block : {false, true})
      add(exec::cuda::regular_levels_module_key(plan, in_block), [&] { return codegen::compile_regular_levels_ptx(plan, in_block); });
    if (plan.callee) add_regular_levels(*plan.callee);
  }
  void add(std::string key, const std::function<std::string()>& ptx) {
    if (seen_.insert(key).second) modules.push_back(GpuModule{std::move(key), ptx(), {}, {}});
  }
  /// The kernels the cuda backend makes for a primitive statement at run time
  /// (exec/cuda/lifted_prims.cpp): a single elementwise primitive as a one-node kernel, and the
  /// sum of lengths of `++`.
  void add_prim_kernels(const flatten::Function& f, const flatten::Stmt& s) {
    std::vector<const lang::Type*> args;
    for (flatten::VarId u : s.uses) {
      if (f.vars.at(u).is_host()) return;
      args.push_back(f.vars[u].type);
    }
    const lang::Type* result = f.vars.at(s.dst).type;
    std::vector<flatten::KernelBody> bodies;
    if (flatten::kernel_prim_ok(s.prim, args, result) || flatten::kernel_prim_fallible(s.prim, args, result))
      bodies.push_back(flatten::one_node_kernel(s.prim, args, result));
    if (s.prim == lang::core::PrimId::Append)
      bodies.push_back(flatten::one_node_kernel(lang::core::PrimId::Add, {types_.int_(), types_.int_()}, types_.int_()));
    for (const flatten::KernelBody& k : bodies)
      for (const std::vector<GatheredInput>& g : gather_variants(k))
        add(exec::cuda::kernel_key(k, g), [&] { return codegen::compile_ptx(k, g); });
  }

  /// The gathered-input variants compiled ahead for a body (Note [Fused gathers] in
  /// exec/cuda/kernels.h): none, each input alone, and all together. An input replicated into an
  /// apply-to-each (a free variable: quicksort's pivot) is the usual gathered one; a variant
  /// missing at run time gathers first instead (Note [Precompiled modules]).
  static std::vector<std::vector<GatheredInput>> gather_variants(const flatten::KernelBody& k) {
    std::vector<std::vector<GatheredInput>> v = {{}};
    for (uint32_t j = 0; j < k.inputs.size(); ++j) v.push_back({GatheredInput{j, false}});
    if (k.inputs.size() >= 2) {
      std::vector<GatheredInput> all;
      for (uint32_t j = 0; j < k.inputs.size(); ++j) all.push_back(GatheredInput{j, false});
      v.push_back(std::move(all));
    }
    return v;
  }
  void add_kernel(const flatten::Function& f, const flatten::Stmt& s) {
    const flatten::KernelBody& k = *s.kernel;
    std::vector<std::vector<GatheredInput>> variants = gather_variants(k);
    // The plain kernel: a consumer's unfused path and a filter group's flags run it too.
    for (const std::vector<GatheredInput>& g : variants)
      add(exec::cuda::kernel_key(k, g), [&] { return codegen::compile_ptx(k, g); });
    if (s.op == flatten::Op::LoopKernel && k.multiprefix())  // its warp form (Note [Multiprefix loops])
      for (const std::vector<GatheredInput>& g : variants)
        add(exec::cuda::kernel_key(k, g, 32), [&] { return codegen::compile_ptx(k, g, 32); });
    if (s.op == flatten::Op::MapKernel) {  // every level the dispatch may choose (Note [Map kernels])
      for (int lanes : exec::cuda::map_kernel_lane_choices())
        for (const std::vector<GatheredInput>& g : variants)
          add(exec::cuda::kernel_key(k, g, lanes), [&] { return codegen::compile_ptx(k, g, lanes); });
      if (flatten::tiled_fold(k))  // and the tiled kernel (Note [Tiled folds])
        for (const std::vector<GatheredInput>& g : variants)
          add(exec::cuda::kernel_key(k, g, 1, flatten::KernelForm::Tiled),
              [&] { return codegen::compile_ptx(k, g, 1, flatten::KernelForm::Tiled); });
      if (k.split_fold())  // and the split one (Note [Rows over several blocks])
        for (const std::vector<GatheredInput>& g : variants)
          add(exec::cuda::kernel_key(k, g, flatten::kSplitLanes, flatten::KernelForm::SplitRows),
              [&] { return codegen::compile_ptx(k, g, flatten::kSplitLanes, flatten::KernelForm::SplitRows); });
    }
    if (!flatten::is_consumer_kernel(s.op)) return;
    const lang::Type* result = f.vars.at(s.op == flatten::Op::PackKernel ? s.uses.at(0) : s.dst).type;
    for (bool one_segment : {true, false}) {
      if (s.op == flatten::Op::PackKernel && !one_segment) continue;  // packs have one form
      runtime::gpu::ConsumerKernels use = exec::cuda::consumer_kernels_of(s, result, one_segment);
      for (const std::vector<GatheredInput>& g : variants)
        add(exec::cuda::consumer_key(k, use, g), [&] {
          std::string_view consumers = runtime::gpu::consumer_ptx(use.image);
          if (consumers.empty()) throw std::runtime_error("this ndp was built without the GPU consumer kernels");
          runtime::cuda::Result<std::string> program =
              runtime::gpu::consumer_program(consumers, codegen::compile_element_ptx(k, g), use.entries);
          if (!program.ok()) throw std::runtime_error(program.status().message());
          return program.value();
        });
    }
  }
  lang::TypeContext& types_;
  std::set<std::string> seen_;
};

/// The toolkit's program `name`: $CUDA_HOME/bin, /usr/local/cuda/bin, then PATH.
std::string toolkit_program(const std::string& name) {
  std::vector<fs::path> dirs;
  if (const char* home = std::getenv("CUDA_HOME")) dirs.emplace_back(fs::path(home) / "bin");
  dirs.emplace_back("/usr/local/cuda/bin");
  if (const char* path = std::getenv("PATH")) {
    std::istringstream ss(path);
    for (std::string d; std::getline(ss, d, ':');)
      if (!d.empty()) dirs.emplace_back(d);
  }
  std::error_code ec;
  for (const fs::path& d : dirs)
    if (fs::is_regular_file(d / name, ec) && ::access((d / name).c_str(), X_OK) == 0) return (d / name).string();
  throw std::runtime_error(name + " (CUDA toolkit) not found in $CUDA_HOME/bin, /usr/local/cuda/bin or PATH; "
                           "GPU output needs it (--target=cpu does not)");
}

/// Runs argv; throws with its output when it fails.
void run_tool(const std::vector<std::string>& argv, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* f = std::fopen(log.c_str(), "w");
    if (f) {
      ::dup2(::fileno(f), 1);
      ::dup2(::fileno(f), 2);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::ifstream in(log);
    std::ostringstream out;
    out << in.rdbuf();
    throw std::runtime_error(fs::path(argv[0]).filename().string() + " failed: " + out.str());
  }
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

std::vector<GpuModule> gpu_modules(lang::TypeContext& types, std::span<const flatten::CompiledEntry* const> entries) {
  ModuleCollector c(types);
  for (const flatten::CompiledEntry* e : entries)
    for (const flatten::Function& f : e->flat.functions) c.function(f);
  return std::move(c.modules);
}

void assemble_gpu_modules(std::vector<GpuModule>& modules) {
  if (modules.empty()) return;
  std::string ptxas = toolkit_program("ptxas"), fatbinary = toolkit_program("fatbinary");
  fs::path dir = fs::temp_directory_path() / ("ndp-compile-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};
  for (GpuModule& m : modules) {
    fs::path base = dir / flatten::stable_hash_hex(m.key);
    std::ofstream(base.string() + ".ptx", std::ios::binary) << m.ptx;
    run_tool({ptxas, "-arch=sm_90", "-O3", base.string() + ".ptx", "-o", base.string() + ".cubin"}, base.string() + ".log");
    run_tool({fatbinary, "--create=" + base.string() + ".fatbin", "--compress-all",
              "--image3=kind=elf,sm=90,file=" + base.string() + ".cubin",
              "--image3=kind=ptx,sm=90,file=" + base.string() + ".ptx"},
             base.string() + ".log");
    m.cubin = read_bytes(base.string() + ".cubin");
    m.fatbin = read_bytes(base.string() + ".fatbin");
  }
}

}  // namespace ndp::driver
