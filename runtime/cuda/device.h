// One CUDA device with its primary context and stream, its properties, and launch shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cuda_driver.h"
#include "errors.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

class LaunchBatch;
class LaunchThread;
class ParameterSizes;

/// What launch configuration and memory decisions need to know about the device.
struct DeviceProperties {
  std::string name;
  int ordinal = 0;
  int compute_major = 0, compute_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_block_dim_x = 0;
  int max_grid_dim_x = 0;
  int max_threads_per_sm = 0;
  int max_shared_memory_per_block = 0;
  int max_shared_memory_per_block_optin = 0;  ///< with the kernel's leave (Hopper: 227 KB)
  int warp_size = 0;
  bool memory_pools = false;  ///< cuMemAllocAsync is available
  std::size_t total_memory = 0;
  int driver_version = 0;  ///< e.g. 13000 for CUDA 13.0
};

/// A one-dimensional launch shape.
struct LaunchConfig {
  unsigned grid_x = 1;
  unsigned block_x = 1;
  unsigned shared_bytes = 0;
};

/// The device ndp runs on. It holds the device's primary context (the one context the runtime
/// uses, shared with any other library in the process) and one non-blocking stream on which all
/// allocation, copies and launches are ordered, so data stays on the device between kernels
/// without extra synchronisation. Not movable: buffers and modules point at it.
class Device {
 public:
  /// cuInit, device `ordinal`, its primary context made current on this thread, a stream.
  /// Without a device this fails with call "cuInit" or "cuDeviceGet" (CUDA_ERROR_NO_DEVICE).
  static Result<std::unique_ptr<Device>> open(const Driver& driver, int ordinal = 0);

  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const Driver& driver() const { return *driver_; }
  const DeviceProperties& properties() const { return props_; }
  /// The stream, for a call that puts work on it: the launches queued so far go first (Notes
  /// [The launch thread] in launch_thread.h, [Launch batches] in launch_batch.h), so the stream
  /// keeps the program's order.
  CUstream stream() const;
  CUdevice handle() const { return device_; }

  /// Makes the context current on the calling thread (needed once per thread before use).
  Status make_current() const;

  /// Waits for the stream; also reports the first failure deferred by a destructor or by a
  /// batch of launches.
  Status synchronize();

  /// Hands a launch of `function` (named `name` in errors) to the launch thread, or queues it in
  /// the launch batch, or launches it now (Notes [The launch thread], [Launch batches]);
  /// `parameters` point at the arguments' values, copied here. A failure of a launch made later
  /// is reported by the next wait.
  Status launch(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters);

  /// For a caller that has waited for the stream itself (a read-back): the GPU is idle now, and
  /// a launch that failed since the last wait reports it here.
  Status waited();

  /// A module is unloaded (after the stream has drained): its functions' handles may be reused.
  void forget_kernels();

  LaunchBatch& launches() { return *launches_; }
  /// The launch thread, or null where launches are made on the calling thread.
  LaunchThread* launch_thread() { return thread_.get(); }
  /// Starts or stops the launch thread (where the driver allows it); for tests and embedders.
  void set_launch_thread(bool on);

  /// One thread per element: blocks of a warp multiple, as many as `n` needs.
  LaunchConfig one_thread_per_element(int64_t n) const;
  /// Enough resident blocks to fill every SM, fewer when `n` is small; kernels loop by stride.
  LaunchConfig grid_stride(int64_t n) const;

  /// Records a failure from a place that cannot return one (a destructor); the first is kept.
  void defer(Status failure);

 private:
  Device() = default;
  const Driver* driver_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  DeviceProperties props_;
  Status deferred_;
  std::unique_ptr<ParameterSizes> parameter_sizes_;  // the launch batch's and the launch thread's
  std::unique_ptr<LaunchBatch> launches_;
  std::unique_ptr<LaunchThread> thread_;
};

}  // namespace ndp::runtime::cuda
