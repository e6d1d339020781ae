#include "driver/llvm_kernels.h"

#include "codegen/kernel_jit.h"
#include "codegen/kernel_ptx.h"
#include "codegen/partition_levels_ptx.h"
#include "codegen/regular_levels_ptx.h"

namespace ndp::driver {

namespace {

class LlvmKernels final : public exec::KernelCompiler {
 public:
  flatten::HostKernelFn host(const flatten::KernelBody& k) override { return host_.compile(k); }
  flatten::HostKernelFn host_strided(const flatten::KernelBody& k, uint64_t strided) override {
    return host_.compile(k, strided);
  }
  std::string ptx(const flatten::KernelBody& k, std::span<const flatten::GatheredInput> gathered, int lanes,
                  flatten::KernelForm form, flatten::RowForms rows) override {
    return codegen::compile_ptx(k, gathered, lanes, form, rows);
  }
  std::string element_ptx(const flatten::KernelBody& k, std::span<const flatten::GatheredInput> gathered) override {
    return codegen::compile_element_ptx(k, gathered);
  }
  std::string regular_levels_ptx(const flatten::RegularLevels& plan, bool in_block) override {
    return codegen::compile_regular_levels_ptx(plan, in_block);
  }
  std::string partition_levels_ptx(const flatten::PartitionLevels& plan, const lang::Type* elem) override {
    return codegen::has_partition_engine() ? codegen::compile_partition_levels_ptx(plan, elem) : std::string();
  }

 private:
  codegen::HostKernelCompiler host_;
};

}  // namespace

exec::KernelCompiler& install_llvm_kernels() {
  static LlvmKernels compiler;
  static const bool installed = (exec::install_kernel_compiler(&compiler), true);
  (void)installed;
  return compiler;
}

}  // namespace ndp::driver
