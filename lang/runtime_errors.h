// The runtime error messages of lang/runtime_errors.def, by name.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>

namespace ndp::lang {

enum class RuntimeErrorId : uint8_t {
#define NDP_RUNTIME_ERROR(id, text) id,
#include "lang/runtime_errors.def"
#undef NDP_RUNTIME_ERROR
  Count_
};

/// The message's text exactly as the table has it (with `{}` where it takes arguments).
const char* message(RuntimeErrorId id);

/// The message with its `{}` arguments filled in, left to right.
template <class... Args>
std::string message(RuntimeErrorId id, const Args&... args) {
  return fmt::format(fmt::runtime(message(id)), args...);
}

}  // namespace ndp::lang
