// Launches made now, and kernels' parameter sizes (launch_now.h).
#include "launch_now.h"

#include "device.h"

namespace ndp::runtime::cuda {

Status named_launch_failure(const Status& s, const std::string& name, const LaunchConfig& c) {
  return Status::driver_failure(s.call(), s.code(), s.name(), s.text(),
                                "kernel " + name + " with grid " + std::to_string(c.grid_x) + ", block " +
                                    std::to_string(c.block_x) + ", " + std::to_string(c.shared_bytes) +
                                    " bytes of shared memory");
}

Status launch_now(const Driver& driver, CUfunction function, const std::string& name, const LaunchConfig& c,
                  void** parameters, CUstream stream) {
  Status s = NDP_CU(driver, cuLaunchKernel, function, c.grid_x, 1, 1, c.block_x, 1, 1, c.shared_bytes, stream, parameters,
                    nullptr);
  return s.ok() ? s : named_launch_failure(s, name, c);
}

const std::vector<uint32_t>& ParameterSizes::of(CUfunction function) {
  auto [at, fresh] = sizes_.try_emplace(function);
  if (fresh) {
    // The driver answers CUDA_ERROR_INVALID_VALUE past the last parameter.
    size_t offset = 0, size = 0;
    while (driver_.cuFuncGetParamInfo(function, at->second.size(), &offset, &size) == CUDA_SUCCESS)
      at->second.push_back(static_cast<uint32_t>(size));
  }
  return at->second;
}

}  // namespace ndp::runtime::cuda
