// NDP_PROFILE=trace (exec/common/profile.h): the runtime writes a line to stderr for each kernel
// launch, each read-back and each allocation the pool could not serve from its own blocks (a
// driver allocation: a few microseconds to a few hundred on an H200, Notes [Large blocks kept
// for reuse] and [Small blocks by size class] in memory.cpp), under the statement that the
// executor wrote before them. Each line starts with the microseconds since the first traced line,
// so that a level's wall time (its launches, waits and the executor's own work) reads off the
// trace.
#pragma once

#include <chrono>
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

/// Microseconds since the first call (the trace's clock).
inline double trace_microseconds() {
  using Clock = std::chrono::steady_clock;
  static const Clock::time_point start = Clock::now();
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace ndp::runtime::cuda
