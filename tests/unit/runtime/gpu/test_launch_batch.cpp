// Launch batches (Note [Launch batches] in runtime/cuda/launch_batch.h) and the launch thread
// (Note [The launch thread] in runtime/cuda/launch_thread.h): launches queued and sent as graphs,
// or made by the thread, keep their order and their own arguments, around read-backs and
// uploads, and a failing launch is reported by the next wait, named.
#include <string>

#include "runtime/cuda/launch_batch.h"
#include "runtime/cuda/launch_thread.h"
#include "runtime/cuda/module.h"
#include "tests/unit/runtime/gpu/gpu_fixture.h"

using namespace ndp::runtime;
using namespace ndp::runtime::testing;

namespace {

// acc[0] = acc[0] * scale + k, by thread 0 of block 0 (other threads and blocks do nothing), so
// the result depends on every launch's arguments and on their order; first it spins for `spin`
// clock cycles, so that the GPU falls behind the host and launches are batched. `scale` is 4
// bytes between 8-byte parameters.
const std::string kFoldPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry ndp_test_fold(
  .param .u64 acc,
  .param .u32 scale,
  .param .u64 k,
  .param .u64 spin
)
{
  .reg .pred %p<3>;
  .reg .b32 %r<4>;
  .reg .b64 %rd<10>;

  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %tid.x;
  or.b32 %r1, %r1, %r2;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra DONE;
  ld.param.u64 %rd6, [spin];
  mov.u64 %rd7, %clock64;
SPIN:
  mov.u64 %rd8, %clock64;
  sub.s64 %rd9, %rd8, %rd7;
  setp.lt.s64 %p2, %rd9, %rd6;
  @%p2 bra SPIN;
  ld.param.u64 %rd1, [acc];
  ld.param.u32 %r3, [scale];
  ld.param.u64 %rd2, [k];
  cvt.u64.u32 %rd3, %r3;
  cvta.to.global.u64 %rd1, %rd1;
  ld.global.u64 %rd4, [%rd1];
  mad.lo.u64 %rd5, %rd4, %rd3, %rd2;
  st.global.u64 [%rd1], %rd5;
DONE:
  ret;
}
)";

struct Fold {
  cuda::Module module;
  cuda::Kernel kernel;
};

Fold load_fold(cuda::Device& device) {
  auto module = cuda::Module::load_ptx(device, kFoldPtx);
  REQUIRE_MESSAGE(module.ok(), module.status().message());
  auto kernel = module->kernel("ndp_test_fold");
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());
  return Fold{std::move(module.value()), kernel.value()};
}

/// Batches of up to 16 for the scope (they are off unless NDP_LAUNCH_BATCH asks for them).
struct BatchesOn {
  cuda::Device& device;
  explicit BatchesOn(cuda::Device& d) : device(d) {
    REQUIRE(device.synchronize().ok());
    device.launches().set_max_batch(16);
  }
  ~BatchesOn() {
    (void)device.synchronize();
    device.launches().set_max_batch(1);
  }
};

uint64_t read_word(gpu::Primitives& p, const cuda::DeviceBuffer& b) {
  uint64_t x = 0;
  REQUIRE(p.pool().copy_to_host(&x, b, 8).ok());
  return x;
}

/// The launch thread on for the scope (where the driver allows it), whatever NDP_LAUNCH_THREAD says.
struct ThreadOn {
  cuda::Device& device;
  explicit ThreadOn(cuda::Device& d) : device(d) {
    REQUIRE(device.synchronize().ok());
    device.set_launch_thread(true);
  }
  ~ThreadOn() {
    (void)device.synchronize();
    device.set_launch_thread(cuda::LaunchThread::wanted());
  }
};

/// 3000 launches whose result depends on every launch's arguments and on their order, with
/// uploads and read-backs among them (kept in order with them).
void check_ordered_launches(gpu::Primitives& p, const Fold& fold) {
  cuda::Device& device = p.device();
  auto acc = p.pool().allocate(8);
  auto other = p.pool().allocate(8);
  REQUIRE(acc.ok());
  REQUIRE(other.ok());
  REQUIRE(p.pool().fill_words(*acc, 0, 2).ok());
  uint64_t want = 0;
  for (uint64_t i = 0; i < 3000; ++i) {
    // A period of 7 shapes, so that graphs are replayed; the arguments never repeat.
    const uint32_t scale = i % 2 == 0 ? 3 : 5;
    const uint64_t k = i * 1000003 + 17;
    const cuda::LaunchConfig config{static_cast<unsigned>(1 + i % 7 % 3), static_cast<unsigned>(32 * (1 + i % 7 % 2)), 0};
    // Every 50th launch makes the GPU busy for ~50 µs, and the next ones queue behind it.
    const uint64_t spin = i % 50 == 0 ? 100000 : 0;
    cuda::Status s = cuda::launch_with(device, fold.kernel, config, acc->pointer(), scale, k, spin);
    REQUIRE_MESSAGE(s.ok(), s.message());
    want = want * scale + k;
    if (i % 41 == 40) {  // an upload between launches, kept in order with them
      const uint64_t word = i;
      REQUIRE(p.pool().copy_to_device(*other, &word, 8).ok());
    }
    if (i % 97 == 96) {
      CAPTURE(i);
      CHECK(read_word(p, *acc) == want);
      CHECK(read_word(p, *other) == i / 41 * 41 - 1);
    }
  }
  REQUIRE(device.synchronize().ok());
  CHECK(read_word(p, *acc) == want);
}

}  // namespace

TEST_CASE("gpu launch batches keep each launch's arguments and the stream's order") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  cuda::Device& device = p->device();
  BatchesOn batches(device);
  Fold fold = load_fold(device);
  const uint64_t built_before = device.launches().graphs_built();
  const uint64_t sent_before = device.launches().graph_launches();
  check_ordered_launches(*p, fold);
  if (device.launches().on()) {
    const uint64_t built = device.launches().graphs_built() - built_before;
    const uint64_t sent = device.launches().graph_launches() - sent_before;
    MESSAGE(sent << " of 3000 launches went in graphs; " << built << " graphs built");
    CHECK(sent > 1000);
    CHECK(built < 200);  // the shapes repeat: most graphs are replayed
  }
}

TEST_CASE("gpu the launch thread keeps each launch's arguments and the stream's order") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  cuda::Device& device = p->device();
  ThreadOn thread(device);
  if (device.launch_thread() == nullptr) return;
  Fold fold = load_fold(device);
  const uint64_t made_before = device.launch_thread()->made();
  check_ordered_launches(*p, fold);
  CHECK(device.launch_thread()->made() - made_before == 3000);
}

TEST_CASE("gpu launches made on the calling thread keep each launch's arguments and the stream's order") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  cuda::Device& device = p->device();
  REQUIRE(device.synchronize().ok());
  device.set_launch_thread(false);
  Fold fold = load_fold(device);
  check_ordered_launches(*p, fold);
  device.set_launch_thread(cuda::LaunchThread::wanted());
}

TEST_CASE("gpu a failing launch in a batch is reported by the next wait, and the launches before it ran") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  cuda::Device& device = p->device();
  BatchesOn batches(device);
  if (!device.launches().on()) return;
  Fold fold = load_fold(device);
  auto acc = p->pool().allocate(8);
  REQUIRE(acc.ok());
  REQUIRE(p->pool().fill_words(*acc, 0, 2).ok());
  REQUIRE(device.synchronize().ok());
  // The GPU is idle: the first launch goes alone, and keeps it busy while the next ones queue.
  const uint64_t kLong = 2'000'000;
  const cuda::LaunchConfig one{1, 32, 0};
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{1}, uint64_t{7}, kLong).ok());
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{10}, uint64_t{3}, uint64_t{0}).ok());
  const unsigned too_wide = static_cast<unsigned>(device.properties().max_threads_per_block) * 2;
  cuda::Status queued = cuda::launch_with(device, fold.kernel, cuda::LaunchConfig{1, too_wide, 0}, acc->pointer(), uint32_t{1},
                                    uint64_t{1000}, uint64_t{0});
  cuda::Status waited = device.synchronize();
  const cuda::Status& failure = queued.ok() ? waited : queued;
  REQUIRE_FALSE(failure.ok());
  MESSAGE(failure.message());
  CHECK(failure.call() == "cuLaunchKernel");
  CHECK(failure.message().find("kernel ndp_test_fold with grid 1, block " + std::to_string(too_wide)) != std::string::npos);
  CHECK(read_word(*p, *acc) == 73);  // 7, then 7 * 10 + 3; not the failed one's 1000
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{2}, uint64_t{1}, uint64_t{0}).ok());
  CHECK(device.synchronize().ok());
  CHECK(read_word(*p, *acc) == 147);
  // A read-back reports it too: the long launch goes alone, the failing one is held behind it
  // (a lone launch's end cannot be seen) and goes when the read-back flushes the queue.
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{1}, uint64_t{5}, kLong).ok());
  cuda::Status held = cuda::launch_with(device, fold.kernel, cuda::LaunchConfig{1, too_wide, 0}, acc->pointer(), uint32_t{1},
                                        uint64_t{1000}, uint64_t{0});
  uint64_t x = 0;
  cuda::Status read = p->pool().copy_to_host(&x, *acc, 8);
  const cuda::Status& reported = held.ok() ? read : held;
  REQUIRE_FALSE(reported.ok());
  CHECK(reported.message().find("kernel ndp_test_fold with grid 1, block " + std::to_string(too_wide)) != std::string::npos);
  CHECK(read_word(*p, *acc) == 152);  // 147 + 5, not the failed one's 1000
}

TEST_CASE("gpu a failing launch made by the launch thread is reported by the next wait, and the launches before it ran") {
  gpu::Primitives* p = gpu_primitives();
  if (p == nullptr) return;
  cuda::Device& device = p->device();
  ThreadOn thread(device);
  if (device.launch_thread() == nullptr) return;
  Fold fold = load_fold(device);
  auto acc = p->pool().allocate(8);
  REQUIRE(acc.ok());
  REQUIRE(p->pool().fill_words(*acc, 0, 2).ok());
  const uint64_t kLong = 2'000'000;
  const cuda::LaunchConfig one{1, 32, 0};
  const unsigned too_wide = static_cast<unsigned>(device.properties().max_threads_per_block) * 2;
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{1}, uint64_t{7}, kLong).ok());
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{10}, uint64_t{3}, uint64_t{0}).ok());
  // Added to the ring: its failure comes later.
  REQUIRE(cuda::launch_with(device, fold.kernel, cuda::LaunchConfig{1, too_wide, 0}, acc->pointer(), uint32_t{1},
                            uint64_t{1000}, uint64_t{0})
              .ok());
  cuda::Status waited = device.synchronize();
  REQUIRE_FALSE(waited.ok());
  MESSAGE(waited.message());
  CHECK(waited.call() == "cuLaunchKernel");
  CHECK(waited.message().find("kernel ndp_test_fold with grid 1, block " + std::to_string(too_wide)) != std::string::npos);
  CHECK(read_word(*p, *acc) == 73);  // 7, then 7 * 10 + 3; not the failed one's 1000
  CHECK(device.synchronize().ok());  // reported once
  // A read-back reports it too, and the launches after the failing one are still made.
  REQUIRE(cuda::launch_with(device, fold.kernel, cuda::LaunchConfig{1, too_wide, 0}, acc->pointer(), uint32_t{1},
                            uint64_t{1000}, uint64_t{0})
              .ok());
  REQUIRE(cuda::launch_with(device, fold.kernel, one, acc->pointer(), uint32_t{2}, uint64_t{1}, uint64_t{0}).ok());
  uint64_t x = 0;
  cuda::Status read = p->pool().copy_to_host(&x, *acc, 8);
  REQUIRE_FALSE(read.ok());
  CHECK(read.message().find("kernel ndp_test_fold with grid 1, block " + std::to_string(too_wide)) != std::string::npos);
  CHECK(read_word(*p, *acc) == 147);  // 73 * 2 + 1
}
