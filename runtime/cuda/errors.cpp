// Formatting of CUDA-layer failures.
#include "errors.h"

namespace ndp::runtime::cuda {

Status Status::driver_failure(std::string call, CUresult code, std::string name,
                              std::string text, std::string detail) {
  Status s;
  s.failed_ = true;
  s.code_ = code;
  s.call_ = std::move(call);
  s.name_ = std::move(name);
  s.text_ = std::move(text);
  // The JIT log arrives NUL-padded in a fixed buffer; trailing noise would end the message.
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == '\0')) detail.pop_back();
  s.detail_ = std::move(detail);
  return s;
}

Status Status::failure(std::string call, std::string text) {
  Status s;
  s.failed_ = true;
  s.call_ = std::move(call);
  s.text_ = std::move(text);
  return s;
}

std::string Status::message() const {
  if (ok()) return "ok";
  std::string m = "cuda: " + call_ + " failed: ";
  if (!name_.empty()) m += name_ + " (" + text_ + ")";
  else m += text_;
  if (!detail_.empty()) m += "\n" + detail_;
  return m;
}

}  // namespace ndp::runtime::cuda
