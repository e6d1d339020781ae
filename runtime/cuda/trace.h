// NDP_PROFILE=trace (exec/common/profile.h): the runtime writes a line to stderr for each kernel
// launch and each read-back, under the statement that the executor wrote before them.
#pragma once

#include <cstdlib>
#include <cstring>

namespace ndp::runtime::cuda {

inline bool tracing() {
  static const bool on = [] {
    const char* s = std::getenv("NDP_PROFILE");
    return s != nullptr && std::strcmp(s, "trace") == 0;
  }();
  return on;
}

}  // namespace ndp::runtime::cuda
