#include "exec/common/kernel_compiler.h"

#include <atomic>

namespace ndp::exec {

namespace {
std::atomic<KernelCompiler*> installed{nullptr};
}

void install_kernel_compiler(KernelCompiler* c) { installed.store(c, std::memory_order_release); }
KernelCompiler* kernel_compiler() { return installed.load(std::memory_order_acquire); }

}  // namespace ndp::exec
