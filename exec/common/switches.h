// Switches for measuring: an environment variable set to 0 turns a mechanism off, so that a
// benchmark can compare with and without it in one run (docs/cuda.md names them).
#pragma once

#include <cstdlib>
#include <cstring>

namespace ndp::exec {

/// Whether `name` is set to "0". Callers read it once (a static), as the switch holds for the run.
inline bool switched_off(const char* name) {
  const char* e = std::getenv(name);
  return e != nullptr && std::strcmp(e, "0") == 0;
}

}  // namespace ndp::exec
