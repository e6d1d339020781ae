// The folder where ndp keeps what it learns about a machine between runs: compiled kernels
// (Note [Kernel cache] in exec/cuda/kernels.h) and the tuning file (Note [Tuning] in
// exec/common/tuning.h).
#pragma once

#include <string>

namespace ndp::exec {

/// NDP_CACHE_DIR, else $XDG_CACHE_HOME/ndp/kernels, else ~/.cache/ndp/kernels; "" where
/// NDP_CACHE_DIR=off or no home is known (nothing is kept on disk).
std::string kernel_cache_dir();

}  // namespace ndp::exec
