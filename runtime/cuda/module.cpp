// Loading PTX with the driver's JIT, looking up kernels, and launching them.
#include "module.h"
#include "trace.h"

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

namespace ndp::runtime::cuda {

Result<Module> Module::load_ptx(Device& device, const std::string& ptx) {
  const Driver& d = device.driver();
  // The JIT writes its diagnostics into these; without them a bad PTX says only "invalid PTX".
  std::vector<char> error_log(16384, '\0');
  std::vector<char> info_log(4096, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size() - 1)),
                    info_log.data(),
                    reinterpret_cast<void*>(static_cast<uintptr_t>(info_log.size() - 1))};
  Module m;
  m.device_ = &device;
  CUresult r = d.cuModuleLoadDataEx(&m.module_, ptx.c_str(), 4, options, values);
  if (r != CUDA_SUCCESS) {
    m.module_ = nullptr;
    return d.check(r, "cuModuleLoadDataEx", std::string(error_log.data()));
  }
  return m;
}

Result<Module> Module::load_image(Device& device, const void* image) {
  Module m;
  m.device_ = &device;
  CUresult r = device.driver().cuModuleLoadDataEx(&m.module_, image, 0, nullptr, nullptr);
  if (r != CUDA_SUCCESS) {
    m.module_ = nullptr;
    return device.driver().check(r, "cuModuleLoadDataEx");
  }
  return m;
}

Result<std::string> Module::compile_to_cubin(Device& device, const std::string& ptx) {
  const Driver& d = device.driver();
  std::vector<char> error_log(16384, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size() - 1))};
  CUlinkState state = nullptr;
  NDP_CU_TRY(d.check(d.cuLinkCreate(2, options, values, &state), "cuLinkCreate"));
  struct Destroy {
    const Driver& d;
    CUlinkState s;
    ~Destroy() { d.cuLinkDestroy(s); }
  } destroy{d, state};
  std::string text = ptx;  // cuLinkAddData takes a non-const pointer
  CUresult r = d.cuLinkAddData(state, CU_JIT_INPUT_PTX, text.data(), text.size() + 1, "ndp_kernel.ptx", 0, nullptr,
                               nullptr);
  if (r != CUDA_SUCCESS) return d.check(r, "cuLinkAddData", std::string(error_log.data()));
  void* cubin = nullptr;
  size_t size = 0;
  r = d.cuLinkComplete(state, &cubin, &size);
  if (r != CUDA_SUCCESS) return d.check(r, "cuLinkComplete", std::string(error_log.data()));
  return std::string(static_cast<const char*>(cubin), size);  // owned by the link state: copied
}

Module::Module(Module&& other) noexcept
    : device_(std::exchange(other.device_, nullptr)),
      module_(std::exchange(other.module_, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    unload();
    device_ = std::exchange(other.device_, nullptr);
    module_ = std::exchange(other.module_, nullptr);
  }
  return *this;
}

Module::~Module() { unload(); }

void Module::unload() {
  if (module_ == nullptr) return;
  Status s = device_->synchronize();
  device_->defer(std::move(s));
  device_->forget_kernels();
  device_->defer(NDP_CU(device_->driver(), cuModuleUnload, module_));
  module_ = nullptr;
}

Result<Kernel> Module::kernel(const std::string& name) const {
  Kernel k;
  k.name = name;
  Status s = NDP_CU(device_->driver(), cuModuleGetFunction, &k.function, module_, name.c_str());
  if (!s.ok()) {
    return Status::driver_failure(s.call(), s.code(), s.name(), s.text(), "kernel " + name);
  }
  return k;
}

Result<int64_t> resident_blocks(Device& device, const Kernel& kernel, int block) {
  if (kernel.resident_block != block) {
    int per_sm = 0;
    Status s = NDP_CU(device.driver(), cuOccupancyMaxActiveBlocksPerMultiprocessor, &per_sm, kernel.function, block, 0);
    if (!s.ok()) return s;
    kernel.resident_per_sm = per_sm;
    kernel.resident_block = block;
  }
  return int64_t{kernel.resident_per_sm} * device.properties().sm_count;
}

Status prefer_shared_memory(Device& device, const Kernel& kernel) {
  return NDP_CU(device.driver(), cuFuncSetAttribute, kernel.function, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100);
}

Status launch(Device& device, const Kernel& kernel, LaunchConfig c, void** parameters) {
  // More than the default 48 KB of dynamic shared memory needs the kernel's leave first, once.
  if (c.shared_bytes > kernel.shared_allowed) {
    Status allowed = NDP_CU(device.driver(), cuFuncSetAttribute, kernel.function,
                            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(c.shared_bytes));
    if (!allowed.ok()) return allowed;
    kernel.shared_allowed = c.shared_bytes;
  }
  if (tracing()) std::fprintf(stderr, "%10.1f   launch %s grid %u block %u\n", trace_microseconds(), kernel.name.c_str(), c.grid_x, c.block_x);
  return device.launch(kernel.function, kernel.name, c, parameters);
}

}  // namespace ndp::runtime::cuda
