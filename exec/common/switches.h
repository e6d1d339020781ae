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

/// NDP_CHILD_MAJOR=0 keeps a children literal's order (Note [Children one after another] in
/// flatten/passes/lay_out_results.h), on either backend.
inline bool children_apart_on() {
  static const bool on = !switched_off("NDP_CHILD_MAJOR");
  return on;
}

}  // namespace ndp::exec
