// The cache folder (cache_dir.h).
#include "exec/common/cache_dir.h"

#include <cstdlib>

namespace ndp::exec {

std::string kernel_cache_dir() {
  if (const char* d = std::getenv("NDP_CACHE_DIR")) return std::string(d) == "off" ? "" : d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') return std::string(x) + "/ndp/kernels";
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') return std::string(h) + "/.cache/ndp/kernels";
  return "";
}

}  // namespace ndp::exec
