// A kernel launch made now on the calling thread, its failure's message, and the sizes of a
// kernel's parameters that a launch made later copies its arguments by.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuda_driver.h"
#include "errors.h"
#include "mini_cuda.h"

namespace ndp::runtime::cuda {

struct LaunchConfig;

/// A failed cuLaunchKernel's status `s`, naming the kernel `name` and its shape `config`.
Status named_launch_failure(const Status& s, const std::string& name, const LaunchConfig& config);

/// cuLaunchKernel of `function` (named `name` in a failure's message) on `stream`, now.
Status launch_now(const Driver& driver, CUfunction function, const std::string& name, const LaunchConfig& config,
                  void** parameters, CUstream stream);

/// The size of each parameter of a kernel, asked of the driver (cuFuncGetParamInfo, which must
/// be present) once a function: what a launch queued for later (a launch batch's, the launch
/// thread's) copies of its arguments. One per device, used by its program's thread only.
class ParameterSizes {
 public:
  explicit ParameterSizes(const Driver& driver) : driver_(driver) {}
  const std::vector<uint32_t>& of(CUfunction function);
  /// A module is unloaded: its functions' handles may be reused.
  void forget() { sizes_.clear(); }

 private:
  const Driver& driver_;
  std::unordered_map<CUfunction, std::vector<uint32_t>> sizes_;
};

}  // namespace ndp::runtime::cuda
