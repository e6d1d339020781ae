// The CUDA layer's error type: a failed driver call, by name, with the driver's own words.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "mini_cuda.h"

namespace ndp::runtime::cuda {

/// The outcome of a CUDA-layer operation. A failure names the call that failed (a driver entry
/// point such as "cuModuleLoadDataEx", or "dlopen"/"dlsym" while loading the driver) so that a
/// user sees which step broke, not just a number.
class Status {
 public:
  Status() = default;

  /// A driver call that returned `code`; `name`/`text` come from cuGetErrorName/String.
  static Status driver_failure(std::string call, CUresult code, std::string name,
                               std::string text, std::string detail = {});
  /// A failure with no CUresult: the library or a symbol is missing, a device is absent, ...
  static Status failure(std::string call, std::string text);

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }

  const std::string& call() const { return call_; }
  /// The driver's result code, or CUDA_SUCCESS when the failure did not come from the driver.
  CUresult code() const { return code_; }
  const std::string& name() const { return name_; }  ///< e.g. "CUDA_ERROR_INVALID_PTX"
  const std::string& text() const { return text_; }  ///< the driver's explanation
  const std::string& detail() const { return detail_; }  ///< e.g. the PTX JIT's error log
  /// One line (plus the detail, when present) suitable for the user: "cuda: CALL failed: ...".
  std::string message() const;

 private:
  bool failed_ = false;
  CUresult code_ = CUDA_SUCCESS;
  std::string call_, name_, text_, detail_;
};

/// A value or the Status explaining why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Status failure) : status_(std::move(failure)) {}

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() { return *value_; }
  const T& value() const { return *value_; }
  T* operator->() { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace ndp::runtime::cuda
