// Opening device 0: primary context, stream, properties; and launch shapes derived from them.
#include "device.h"

#include <algorithm>
#include <cstdio>

#include "launch_batch.h"
#include "launch_now.h"
#include "launch_thread.h"

namespace ndp::runtime::cuda {

namespace {

Status query(const Driver& d, CUdevice dev, CUdevice_attribute attribute, int& out) {
  return NDP_CU(d, cuDeviceGetAttribute, &out, attribute, dev);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

Result<std::unique_ptr<Device>> Device::open(const Driver& d, int ordinal) {
  NDP_CU_TRY(NDP_CU(d, cuInit, 0));
  int count = 0;
  NDP_CU_TRY(NDP_CU(d, cuDeviceGetCount, &count));
  if (ordinal < 0 || ordinal >= count) {
    return Status::failure("cuDeviceGet", "no CUDA device " + std::to_string(ordinal) + " (" +
                                              std::to_string(count) + " present)");
  }
  std::unique_ptr<Device> device(new Device());
  device->driver_ = &d;
  DeviceProperties& p = device->props_;
  p.ordinal = ordinal;
  NDP_CU_TRY(NDP_CU(d, cuDeviceGet, &device->device_, ordinal));
  CUdevice dev = device->device_;

  char name[256] = {};
  NDP_CU_TRY(NDP_CU(d, cuDeviceGetName, name, static_cast<int>(sizeof name - 1), dev));
  p.name = name;
  NDP_CU_TRY(NDP_CU(d, cuDriverGetVersion, &p.driver_version));
  NDP_CU_TRY(NDP_CU(d, cuDeviceTotalMem, &p.total_memory, dev));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, p.compute_major));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, p.compute_minor));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, p.sm_count));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, p.max_threads_per_block));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, p.max_block_dim_x));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, p.max_grid_dim_x));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                   p.max_threads_per_sm));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                   p.max_shared_memory_per_block));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                   p.max_shared_memory_per_block_optin));
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_WARP_SIZE, p.warp_size));
  int pools = 0;
  NDP_CU_TRY(query(d, dev, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, pools));
  p.memory_pools = pools != 0;

  NDP_CU_TRY(NDP_CU(d, cuDevicePrimaryCtxRetain, &device->context_, dev));
  NDP_CU_TRY(NDP_CU(d, cuCtxSetCurrent, device->context_));
  // Non-blocking: other libraries' work on the legacy default stream must not serialise ours.
  NDP_CU_TRY(NDP_CU(d, cuStreamCreate, &device->stream_, CU_STREAM_NON_BLOCKING));
  device->parameter_sizes_ = std::make_unique<ParameterSizes>(d);
  device->launches_ = std::make_unique<LaunchBatch>(d, *device->parameter_sizes_);
  device->set_launch_thread(!device->launches_->on() && LaunchThread::wanted());
  return device;
}

Device::~Device() {
  // A destructor cannot return a Status; a failure here means the context is already broken,
  // and saying so on stderr is the most useful thing left to do. A Device held in a static is
  // destroyed after libcuda's own exit handler has shut the driver down (CUDA_ERROR_DEINITIALIZED):
  // everything is released already, so there is nothing to say.
  auto report = [](const Status& s) {
    if (!s.ok() && s.code() != CUDA_ERROR_DEINITIALIZED) {
      std::fprintf(stderr, "%s\n", s.message().c_str());
    }
  };
  if (stream_ != nullptr) {
    if (thread_) {
      thread_->drain();
      report(thread_->take_failure());
      thread_.reset();
    }
    if (launches_) {
      launches_->flush(stream_);
      report(launches_->take_failure());
    }
    report(NDP_CU(*driver_, cuStreamSynchronize, stream_));
    launches_.reset();  // its graphs, before the context goes
    report(NDP_CU(*driver_, cuStreamDestroy, stream_));
  }
  if (context_ != nullptr) report(NDP_CU(*driver_, cuDevicePrimaryCtxRelease, device_));
}

Status Device::make_current() const { return NDP_CU(*driver_, cuCtxSetCurrent, context_); }

void Device::set_launch_thread(bool on) {
  if (thread_) {  // its failure stays for the next wait
    thread_->drain();
    defer(thread_->take_failure());
    thread_.reset();
  }
  if (on && LaunchThread::available(*driver_)) thread_ = std::make_unique<LaunchThread>(*driver_, *parameter_sizes_, context_, stream_);
}

CUstream Device::stream() const {
  if (thread_) thread_->drain();
  launches_->flush(stream_);
  return stream_;
}

Status Device::launch(CUfunction function, const std::string& name, const LaunchConfig& config, void** parameters) {
  if (thread_ && !launches_->on()) return thread_->add(function, name, config, parameters);
  if (thread_) thread_->drain();  // batches were turned on since: the thread's launches go first
  return launches_->add(function, name, config, parameters, stream_);
}

Status Device::waited() {
  launches_->waited();
  Status failure = launches_->take_failure();
  if (thread_) {
    thread_->drain();
    Status made = thread_->take_failure();
    if (failure.ok()) failure = std::move(made);
  }
  return failure;
}

void Device::forget_kernels() {
  if (thread_) thread_->drain();
  launches_->forget_kernels();
  parameter_sizes_->forget();
}

Status Device::synchronize() {
  Status s = NDP_CU(*driver_, cuStreamSynchronize, stream());
  if (!s.ok()) return s;
  NDP_CU_TRY(waited());
  Status deferred = std::move(deferred_);
  deferred_ = Status();
  return deferred;
}

void Device::defer(Status failure) {
  if (deferred_.ok() && !failure.ok()) deferred_ = std::move(failure);
}

LaunchConfig Device::one_thread_per_element(int64_t n) const {
  // 256 threads keeps several blocks resident per SM on every architecture since Kepler.
  int block = std::min(256, std::min(props_.max_threads_per_block, props_.max_block_dim_x));
  block = std::max(props_.warp_size, block - block % std::max(1, props_.warp_size));
  int64_t grid = std::clamp<int64_t>(ceil_div(std::max<int64_t>(n, 1), block), 1,
                                     props_.max_grid_dim_x);
  return LaunchConfig{static_cast<unsigned>(grid), static_cast<unsigned>(block), 0};
}

LaunchConfig Device::grid_stride(int64_t n) const {
  LaunchConfig c = one_thread_per_element(n);
  int64_t resident = int64_t{props_.sm_count} * std::max(1, props_.max_threads_per_sm / int(c.block_x));
  c.grid_x = static_cast<unsigned>(std::clamp<int64_t>(c.grid_x, 1, std::max<int64_t>(resident, 1)));
  return c;
}

}  // namespace ndp::runtime::cuda
