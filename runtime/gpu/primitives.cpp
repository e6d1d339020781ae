// Loading the embedded primitive modules and finding their kernels by name.
#include "runtime/gpu/primitives.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "runtime/gpu/embedded_images.h"

namespace ndp::runtime::gpu {

struct Primitives::Impl {
  std::vector<cuda::Module> modules;
  std::map<std::string, cuda::Kernel> kernels;  // by name; filled on first use
  cuda::DeviceBuffer lookback;                  // the look-back scratch (lookback_scratch)
  int64_t lookback_words = 0;
  int64_t lookback_uses = 0;  // passes given it since it was last zeroed
  cuda::DeviceBuffer failure;   // failure_words, once made
  // permute_deferred's hash key (Note [Deferred permutes by hashes] in permute.cpp): random at
  // first, so that no input is chosen against it, then a new one each call.
  uint64_t permute_key = std::random_device{}() | uint64_t{std::random_device{}()} << 32;
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

Result<CUdeviceptr> Primitives::lookback_scratch(int64_t ntiles) {
  // Zeroed when it grows, and every 2^27 passes: a pass's records carry its epoch, which comes
  // round again after 2^29 passes (Note [Look-back epochs]), so none can outlive its epoch.
  constexpr int64_t kZeroEvery = int64_t{1} << 27;
  const int64_t words = 2 + 2 * ntiles;
  const bool grow = words > impl_->lookback_words;
  if (grow) {
    const int64_t grown = std::max(words, 2 * impl_->lookback_words);
    Result<cuda::DeviceBuffer> b = pool_.allocate(static_cast<size_t>(grown) * 8);
    if (!b.ok()) return b.status();
    impl_->lookback = std::move(b.value());
    impl_->lookback_words = grown;
  }
  if (grow || impl_->lookback_uses >= kZeroEvery) {
    if (Status st = fill(impl_->lookback.pointer(), impl_->lookback_words, 8, 0); !st.ok()) return st;
    impl_->lookback_uses = 0;
  }
  ++impl_->lookback_uses;
  return impl_->lookback.pointer();
}

// Note [Small inputs in one launch]
// A flattened recursion's deep levels hold a few thousand elements in a few dozen segments, and
// there a primitive costs what its launches cost the host (about 4 µs each on an H200,
// bench/results/session41), not what its kernels do. So where an input is small, a primitive
// whose general path takes several passes (a tiled reduction and its fix-ups, a scan between
// two maps) runs as one launch instead: the index of the extreme as a block a segment that
// folds and then searches (device/extreme.cu), merge's positions as one block scanning its
// flags a chunk at a time (device/structure.cu); and a few flags are counted by the host from a
// copy of them, with no launch (Note [Few flags counted where they arrive] in seg_reduce.cpp).
// Their bounds keep the one launch short next to the launches it saves.
// set_small_inputs_in_one_launch(false) turns them off, so that the tests check both paths at
// the same shapes.

// Note [Armed failure words]
// A check that reads its result back (the first failing position of an index check, the first
// negative length of offsets_from_lengths) needs a word set to kNoFailure before its kernel
// lowers it with atomicMin. Filling a fresh word each time was a kernel launch per check, and
// a flattened program makes several checks per statement. The word is kept instead: it is
// kNoFailure at rest, each check reads it back (synchronising) before the next one can launch,
// and only a check that found a failure, which is rare, writes it back.
Result<CUdeviceptr> Primitives::failure_words() {
  if (impl_->failure.pointer() == 0) {
    Result<cuda::DeviceBuffer> b = pool_.allocate(4 * sizeof(uint64_t));
    if (!b.ok()) return b.status();
    if (Status st = fill(b->pointer(), 1, 8, ~uint64_t{0}); !st.ok()) return st;
    impl_->failure = std::move(b.value());
  }
  return impl_->failure.pointer();
}

Status Primitives::rearm_failure_words() {
  const uint64_t none = ~uint64_t{0};
  return pool_.upload(impl_->failure.pointer(), &none, sizeof none);
}

uint64_t Primitives::next_permute_key() {
  impl_->permute_key += 0x9e3779b97f4a7c15ull;  // the golden-ratio step: a new key each call
  return impl_->permute_key;
}

}  // namespace ndp::runtime::gpu
