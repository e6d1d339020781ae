// PTX modules: loading (JIT by the driver), finding kernels, launching them on the device stream.
#pragma once

#include <string>

#include "device.h"
#include "errors.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

/// A kernel entry point of a loaded module, with its name for error messages.
struct Kernel {
  CUfunction function = nullptr;
  std::string name;
  /// The dynamic shared memory a launch may give it (48 KB until launch() asks the driver for more).
  mutable unsigned shared_allowed = 48 * 1024;
  /// Blocks of `resident_block` threads (no dynamic shared memory) one multiprocessor holds at
  /// once, by its registers and static shared memory: 0 until resident_blocks asks the driver.
  mutable int resident_per_sm = 0;
  mutable int resident_block = 0;
};

/// A module JIT-compiled from PTX for the device. Unloaded when destroyed (after the stream has
/// drained, since queued launches still use its code).
class Module {
 public:
  /// cuModuleLoadDataEx; a rejected PTX fails with the JIT's error log as the Status's detail.
  static Result<Module> load_ptx(Device& device, const std::string& ptx);
  /// cuModuleLoadDataEx of a fatbinary or cubin image (8-byte aligned), as nvcc writes them.
  static Result<Module> load_image(Device& device, const void* image);

  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  ~Module();

  /// Compiles PTX to a cubin for the device with the driver's JIT linker (cuLink*), so the
  /// result can be cached and loaded later with load_image without compiling again.
  static Result<std::string> compile_to_cubin(Device& device, const std::string& ptx);

  /// cuModuleGetFunction for the `.entry` named `name`.
  Result<Kernel> kernel(const std::string& name) const;

 private:
  Module() = default;
  void unload();
  Device* device_ = nullptr;
  CUmodule module_ = nullptr;
};

/// Queues `kernel` on the device stream; `parameters` points at each kernel argument's value.
/// Returns as soon as it is queued: Device::synchronize reports faults during execution.
Status launch(Device& device, const Kernel& kernel, LaunchConfig config, void** parameters);

/// The blocks of `block` threads of `kernel` (without dynamic shared memory) the whole device
/// holds at once (cuOccupancyMaxActiveBlocksPerMultiprocessor times the multiprocessors),
/// asked once a kernel and block size.
Result<int64_t> resident_blocks(Device& device, const Kernel& kernel, int block);

/// Asks that `kernel`'s multiprocessors give shared memory all the room they can (the carveout
/// from L1): a kernel of much static shared memory otherwise runs fewer blocks at once than its
/// registers allow.
Status prefer_shared_memory(Device& device, const Kernel& kernel);

/// launch() with the arguments passed by value (device pointers as CUdeviceptr, sizes as the
/// exact integer type the PTX parameter declares).
template <class... Args>
Status launch_with(Device& device, const Kernel& kernel, LaunchConfig config, Args... args) {
  void* parameters[] = {static_cast<void*>(&args)..., nullptr};
  return launch(device, kernel, config, parameters);
}

}  // namespace ndp::runtime::cuda
