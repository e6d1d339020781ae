// Loading the embedded primitive modules and finding their kernels by name.
#include "runtime/gpu/primitives.h"

#include <map>
#include <vector>

#include "runtime/gpu/embedded_images.h"

namespace ndp::rt::gpu {

struct Primitives::Impl {
  std::vector<cuda::Module> modules;
  std::map<std::string, cuda::Kernel> kernels;  // by name; filled on first use
};

Primitives::Primitives(cuda::Device& device, cuda::MemoryPool& pool)
    : device_(device), pool_(pool), impl_(std::make_unique<Impl>()) {}

Primitives::~Primitives() = default;

Result<std::unique_ptr<Primitives>> Primitives::load(cuda::Device& device, cuda::MemoryPool& pool) {
  if (kEmbeddedImageCount == 0)
    return Status::failure("nvcc", "this ndp was built without the CUDA toolkit, so it has no GPU primitives");
  std::unique_ptr<Primitives> p(new Primitives(device, pool));
  for (size_t i = 0; i < kEmbeddedImageCount; ++i) {
    Result<cuda::Module> m = cuda::Module::load_image(device, kEmbeddedImages[i].data);
    if (!m.ok()) {
      cuda::Status s = m.status();
      return Status::driver_failure(s.call(), s.code(), s.name(), s.text(),
                                    std::string("primitive module ") + kEmbeddedImages[i].name);
    }
    p->impl_->modules.push_back(std::move(m.value()));
  }
  return p;
}

Result<cuda::Kernel> Primitives::kernel(const std::string& name) {
  auto it = impl_->kernels.find(name);
  if (it != impl_->kernels.end()) return it->second;
  for (const cuda::Module& m : impl_->modules) {
    Result<cuda::Kernel> k = m.kernel(name);
    if (k.ok()) {
      impl_->kernels.emplace(name, k.value());
      return k;
    }
  }
  return Status::failure("cuModuleGetFunction", "no primitive module has kernel " + name);
}

}  // namespace ndp::rt::gpu
