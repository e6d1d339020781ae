// The CUDA driver layer: the no-driver path everywhere, a real round trip where a GPU is present.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/cuda/cuda_driver.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/memory.h"
#include "runtime/cuda/module.h"

using namespace ndp::runtime::cuda;

namespace {

// Adds 1 to each of n 32-bit integers, looping by the grid's stride. Written by hand for sm_90.
const std::string kAddOnePtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry ndp_add_one(
  .param .u64 ndp_add_one_data,
  .param .u64 ndp_add_one_n
)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;

  ld.param.u64 %rd1, [ndp_add_one_data];
  ld.param.u64 %rd2, [ndp_add_one_n];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mov.u32 %r4, %nctaid.x;
  cvt.u64.u32 %rd3, %r3;
  mad.wide.u32 %rd3, %r1, %r2, %rd3;
  mul.wide.u32 %rd4, %r4, %r2;
LOOP:
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  shl.b64 %rd5, %rd3, 2;
  add.s64 %rd6, %rd1, %rd5;
  ld.global.u32 %r5, [%rd6];
  add.s32 %r5, %r5, 1;
  st.global.u32 [%rd6], %r5;
  add.s64 %rd3, %rd3, %rd4;
  bra.uni LOOP;
DONE:
  ret;
}
)";

// Uses an undeclared register, which both ptxas and the driver's JIT reject.
const std::string kBadPtx = R"(.version 8.0
.target sm_90
.address_size 64

.visible .entry ndp_broken()
{
  add.s32 %r_undeclared, %r_undeclared, 1;
  ret;
}
)";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string ptxas_path() {
  if (const char* p = std::getenv("NDP_PTXAS")) return p;
  return "/usr/local/cuda/bin/ptxas";
}

// Runs ptxas on `ptx`; returns its exit status (0: accepted).
int run_ptxas(const std::string& ptx) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("ndp_ptxas_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path file = dir / "kernel.ptx";
  std::ofstream(file) << ptx;
  std::string command = ptxas_path() + " -arch=sm_90 " + file.string() + " -o " +
                        (dir / "kernel.cubin").string() + " 2>/dev/null";
  int status = std::system(command.c_str());
  fs::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool gpu_required() {
  const char* v = std::getenv("NDP_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

// The device under test, or null (with a message) where this machine has none.
Device* test_device() {
  static std::unique_ptr<Device> device;
  static bool tried = false;
  if (!tried) {
    tried = true;
    Status why;
    const Driver* driver = Driver::system(&why);
    if (driver == nullptr) {
      MESSAGE("no GPU test: " << why.message());
    } else {
      auto opened = Device::open(*driver);
      if (opened.ok()) device = std::move(opened.value());
      else MESSAGE("no GPU test: " << opened.status().message());
    }
    if (gpu_required()) REQUIRE_MESSAGE(device != nullptr, "NDP_REQUIRE_GPU=1 but no device");
  }
  return device.get();
}

}  // namespace

TEST_CASE("a missing driver library is a clear status naming dlopen") {
  auto loaded = Driver::load("libndp-no-such-driver.so.1");
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().call() == "dlopen");
  CHECK(loaded.status().code() == CUDA_SUCCESS);
  CHECK(contains(loaded.status().message(),
                 "cuda: dlopen failed: no NVIDIA driver (libndp-no-such-driver.so.1) found"));
}

TEST_CASE("the system driver is loaded once, or its absence is explained") {
  Status why;
  const Driver* first = Driver::system(&why);
  CHECK(Driver::system() == first);
  if (first == nullptr) {
    CHECK_FALSE(why.ok());
    CHECK(contains(why.message(), "no NVIDIA driver (libcuda.so.1) found"));
  } else {
    CHECK(why.ok());
    CHECK(first->library() == "libcuda.so.1");
    CHECK(bool(first->cuLaunchKernel));
    CHECK(bool(first->cuMemAllocAsync));
  }
}

TEST_CASE("the toolkit's stub driver loads but fails in cuInit, named") {
  // The stub libcuda that CUDA toolkits ship for linking exports every entry point and fails
  // every call: a driver result error on a machine with no GPU at all.
  std::string stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!std::filesystem::exists(stub)) {
    MESSAGE("skipped: no " << stub);
    return;
  }
  auto loaded = Driver::load(stub);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  auto device = Device::open(*loaded.value());
  REQUIRE_FALSE(device.ok());
  CHECK(device.status().call() == "cuInit");
  CHECK(device.status().code() == CUDA_ERROR_STUB_LIBRARY);
  CHECK(contains(device.status().message(), "cuda: cuInit failed: CUDA_ERROR_STUB_LIBRARY ("));
}

TEST_CASE("a driver failure's message names the call, the code and the log") {
  Status s = Status::driver_failure("cuModuleLoadDataEx", CUDA_ERROR_INVALID_PTX,
                                    "CUDA_ERROR_INVALID_PTX",
                                    "a PTX JIT compilation failed", "line 7: error\n\n");
  CHECK_FALSE(s.ok());
  CHECK(s.message() ==
        "cuda: cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)"
        "\nline 7: error");
  CHECK(Status().ok());
  CHECK(Status().message() == "ok");
}

TEST_CASE("the test kernels are what ptxas says they are") {
  if (!std::filesystem::exists(ptxas_path())) {
    MESSAGE("skipped: no ptxas at " << ptxas_path());
    return;
  }
  CHECK(run_ptxas(kAddOnePtx) == 0);
  CHECK(run_ptxas(kBadPtx) != 0);
}

TEST_CASE("GPU: device properties and launch shapes") {
  Device* device = test_device();
  if (device == nullptr) return;
  const DeviceProperties& p = device->properties();
  MESSAGE(p.name << ": sm_" << p.compute_major << p.compute_minor << ", " << p.sm_count
                 << " SMs, " << p.max_threads_per_block << " threads/block, "
                 << (p.total_memory >> 20) << " MiB, driver " << p.driver_version
                 << std::string(p.memory_pools ? ", memory pools" : ""));
  CHECK(p.sm_count > 0);
  CHECK(p.warp_size == 32);
  CHECK(p.max_threads_per_block >= 256);
  CHECK(p.total_memory > (std::size_t{1} << 30));

  LaunchConfig small = device->one_thread_per_element(1000);
  CHECK(small.block_x % 32 == 0);
  CHECK(int64_t{small.grid_x} * small.block_x >= 1000);
  CHECK(int64_t{small.grid_x - 1} * small.block_x < 1000);
  LaunchConfig big = device->grid_stride(int64_t{1} << 30);
  CHECK(big.grid_x <= unsigned(p.sm_count * (p.max_threads_per_sm / int(big.block_x))));
  CHECK(big.grid_x >= unsigned(p.sm_count));
  CHECK(device->one_thread_per_element(0).grid_x == 1);
}

TEST_CASE("GPU: allocate, copy up, launch twice, copy back, free") {
  Device* device = test_device();
  if (device == nullptr) return;
  auto pool = MemoryPool::create(*device);
  REQUIRE_MESSAGE(pool.ok(), pool.status().message());
  auto module = Module::load_ptx(*device, kAddOnePtx);
  REQUIRE_MESSAGE(module.ok(), module.status().message());
  auto kernel = module->kernel("ndp_add_one");
  REQUIRE_MESSAGE(kernel.ok(), kernel.status().message());

  // Not a multiple of any block size, large enough that the grid-stride loop wraps.
  const uint64_t n = (uint64_t{1} << 24) + 7;
  std::vector<int32_t> host(n);
  std::iota(host.begin(), host.end(), -1000);
  auto buffer = (*pool)->allocate(n * sizeof(int32_t));
  REQUIRE_MESSAGE(buffer.ok(), buffer.status().message());
  // Poison first, so a copy that silently did nothing cannot pass.
  REQUIRE(((*pool)->fill_words(*buffer, 0xdeadbeefu, n)).ok());
  Status up = (*pool)->copy_to_device(*buffer, std::span<const int32_t>(host));
  REQUIRE_MESSAGE(up.ok(), up.message());

  CUdeviceptr data = buffer->pointer();
  Status s = launch_with(*device, *kernel, device->one_thread_per_element(int64_t(n)), data, n);
  REQUIRE_MESSAGE(s.ok(), s.message());
  // The data stays on the device: the second kernel reads what the first wrote.
  s = launch_with(*device, *kernel, device->grid_stride(int64_t(n)), data, n);
  REQUIRE_MESSAGE(s.ok(), s.message());
  s = device->synchronize();
  REQUIRE_MESSAGE(s.ok(), s.message());

  std::vector<int32_t> back(n, 0);
  s = (*pool)->copy_to_host(std::span<int32_t>(back), *buffer);
  REQUIRE_MESSAGE(s.ok(), s.message());
  uint64_t wrong = 0;
  for (uint64_t i = 0; i < n; ++i) wrong += back[i] != host[i] + 2;
  CHECK(wrong == 0);
  CHECK(back.front() == -998);
  CHECK(back.back() == int32_t(n) - 1000 - 1 + 2);

  // Small read-backs go through the pool's page-locked buffer (Note [Small read-backs through
  // pinned memory]): one element, a run at an odd offset, exactly 4096 bytes and one element
  // past it (straight to the caller), each after the one before has left its bytes behind.
  for (uint64_t count : {uint64_t{1}, uint64_t{333}, uint64_t{1024}, uint64_t{1025}, uint64_t{1}}) {
    CAPTURE(count);
    const uint64_t at = (count * 7919) % (n - count);
    std::vector<int32_t> part(count, 0);
    s = (*pool)->download(part.data(), data + at * sizeof(int32_t), count * sizeof(int32_t));
    REQUIRE_MESSAGE(s.ok(), s.message());
    uint64_t bad = 0;
    for (uint64_t i = 0; i < count; ++i) bad += part[i] != host[at + i] + 2;
    CHECK(bad == 0);
  }
  int32_t first = 0;
  s = (*pool)->copy_to_host(&first, *buffer, sizeof first);
  REQUIRE_MESSAGE(s.ok(), s.message());
  CHECK(first == -998);

  // The pool keeps freed memory: a second allocation of the same size reserves nothing new.
  auto reserved = (*pool)->reserved_bytes();
  REQUIRE(reserved.ok());
  s = buffer->release();
  REQUIRE_MESSAGE(s.ok(), s.message());
  auto again = (*pool)->allocate(n * sizeof(int32_t));
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  auto reserved_again = (*pool)->reserved_bytes();
  REQUIRE(reserved_again.ok());
  if ((*pool)->stream_ordered()) CHECK(*reserved_again == *reserved);
  CHECK(again->release().ok());
  CHECK(device->synchronize().ok());

  // A freed large block goes to the next allocation of its size class (Note [Large blocks kept
  // for reuse]: 4 MiB + 1 byte and 4.25 MiB share one), or of up to two classes below; another
  // class gets another block.
  auto large = (*pool)->allocate((std::size_t{4} << 20) + 1);
  REQUIRE_MESSAGE(large.ok(), large.status().message());
  const CUdeviceptr where = large->pointer();
  CHECK(large->bytes() == (std::size_t{4} << 20) + (std::size_t{1} << 19));
  CHECK(large->release().ok());
  auto reused = (*pool)->allocate(std::size_t{17} << 18);
  REQUIRE_MESSAGE(reused.ok(), reused.status().message());
  CHECK(reused->pointer() == where);
  auto other = (*pool)->allocate(std::size_t{5} << 20);
  REQUIRE_MESSAGE(other.ok(), other.status().message());
  CHECK(other->pointer() != where);
  CHECK(reused->release().ok());
  auto smaller = (*pool)->allocate(std::size_t{4} << 20);  // class 4 MiB, one below 4.5 MiB
  REQUIRE_MESSAGE(smaller.ok(), smaller.status().message());
  CHECK(smaller->pointer() == where);
  CHECK(smaller->bytes() == (std::size_t{4} << 20) + (std::size_t{1} << 19));
  CHECK(smaller->release().ok());
  auto far_smaller = (*pool)->allocate(std::size_t{7} << 19);  // 3.5 MiB: three classes below
  REQUIRE_MESSAGE(far_smaller.ok(), far_smaller.status().message());
  CHECK(far_smaller->pointer() != where);
  CHECK(far_smaller->release().ok());
  CHECK(other->release().ok());
  CHECK(device->synchronize().ok());

  // A small block is rounded up to its size class and, freed, goes to the next allocation of
  // that class (Note [Small blocks by size class]); another class gets another block.
  auto small = (*pool)->allocate(300);
  REQUIRE_MESSAGE(small.ok(), small.status().message());
  CHECK(small->bytes() == 320);
  const CUdeviceptr small_at = small->pointer();
  CHECK(small->release().ok());
  auto same_class = (*pool)->allocate(310);
  REQUIRE_MESSAGE(same_class.ok(), same_class.status().message());
  CHECK(same_class->pointer() == small_at);
  auto next_class = (*pool)->allocate(330);
  REQUIRE_MESSAGE(next_class.ok(), next_class.status().message());
  CHECK(next_class->pointer() != small_at);
  CHECK(next_class->bytes() == 384);
  CHECK(same_class->release().ok());
  CHECK(next_class->release().ok());
  CHECK(device->synchronize().ok());
}

TEST_CASE("the memory pool's size classes: 256 bytes at least, four an octave, eight from 1 MiB") {
  CHECK(MemoryPool::size_class(1) == 256);
  CHECK(MemoryPool::size_class(256) == 256);
  CHECK(MemoryPool::size_class(257) == 320);
  CHECK(MemoryPool::size_class(320) == 320);
  CHECK(MemoryPool::size_class(512) == 512);
  CHECK(MemoryPool::size_class(513) == 640);
  CHECK(MemoryPool::size_class(1000) == 1024);
  CHECK(MemoryPool::size_class((std::size_t{1} << 20) - 1) == std::size_t{1} << 20);
  CHECK(MemoryPool::size_class(std::size_t{1} << 20) == std::size_t{1} << 20);
  CHECK(MemoryPool::size_class((std::size_t{1} << 20) + 1) == (std::size_t{1} << 20) + (std::size_t{1} << 17));
  CHECK(MemoryPool::size_class(std::size_t{3} << 30) == std::size_t{3} << 30);
  for (std::size_t b = 1; b < (std::size_t{1} << 20); b = b * 3 / 2 + 1) {
    CAPTURE(b);
    CHECK(MemoryPool::size_class(b) >= b);
    CHECK(MemoryPool::size_class(b) <= std::max<std::size_t>(256, b + b / 4 + 1));
  }
  for (std::size_t b = std::size_t{1} << 20; b < (std::size_t{1} << 40); b = b * 5 / 4 + 12345) {
    CAPTURE(b);
    CHECK(MemoryPool::size_class(b) >= b);
    CHECK(MemoryPool::size_class(b) <= b + b / 8 + 1);
  }
}

TEST_CASE("GPU: driver errors come back as statuses naming the call") {
  Device* device = test_device();
  if (device == nullptr) return;

  auto bad = Module::load_ptx(*device, kBadPtx);
  REQUIRE_FALSE(bad.ok());
  MESSAGE(bad.status().message());
  CHECK(bad.status().call() == "cuModuleLoadDataEx");
  CHECK(bad.status().name() == "CUDA_ERROR_INVALID_PTX");
  CHECK_FALSE(bad.status().detail().empty());  // the JIT's log says what is wrong

  auto module = Module::load_ptx(*device, kAddOnePtx);
  REQUIRE_MESSAGE(module.ok(), module.status().message());
  auto missing = module->kernel("ndp_no_such_kernel");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().call() == "cuModuleGetFunction");
  CHECK(missing.status().name() == "CUDA_ERROR_NOT_FOUND");

  auto kernel = module->kernel("ndp_add_one");
  REQUIRE(kernel.ok());
  LaunchConfig too_wide{1, unsigned(device->properties().max_threads_per_block) * 2, 0};
  CUdeviceptr null_data = 0;
  uint64_t zero = 0;
  Status s = launch_with(*device, *kernel, too_wide, null_data, zero);
  if (device->launch_thread() != nullptr) {  // made by the launch thread: reported by the next wait
    REQUIRE(s.ok());
    s = device->synchronize();
  }
  REQUIRE_FALSE(s.ok());
  MESSAGE(s.message());
  CHECK(s.call() == "cuLaunchKernel");
  CHECK(s.name() == "CUDA_ERROR_INVALID_VALUE");
  CHECK(contains(s.message(), "kernel ndp_add_one with grid 1, block "));

  auto pool = MemoryPool::create(*device);
  REQUIRE(pool.ok());
  auto huge = (*pool)->allocate(std::size_t{1} << 50);  // a pebibyte: more than any GPU has
  REQUIRE_FALSE(huge.ok());
  MESSAGE(huge.status().message());
  CHECK(contains(huge.status().call(), "cuMemAlloc"));
  CHECK(huge.status().code() == CUDA_ERROR_OUT_OF_MEMORY);  // the cuda backend's "Out of memory."

  // A launch-configuration error is not sticky: the context still works afterwards.
  CHECK(device->synchronize().ok());
}

TEST_CASE("GPU: the read-back hook's copies go with each read-back, once, under its one wait") {
  // Note [Deferred failure records] in exec/cuda/gpu.h: the executor's deferred records are
  // copied with every read-back, and read when it is done.
  Device* device = test_device();
  if (device == nullptr) return;
  auto pool = MemoryPool::create(*device);
  REQUIRE_MESSAGE(pool.ok(), pool.status().message());
  auto buffer = (*pool)->allocate(64);
  REQUIRE_MESSAGE(buffer.ok(), buffer.status().message());
  REQUIRE(((*pool)->fill_words(*buffer, 7u, 16)).ok());
  MemoryPool& p = **pool;
  int adds = 0, dones = 0;
  bool give = true;
  uint32_t seen_by_hook = 0, seen_at_done = 0, read_in_done = 0;
  p.set_read_back_hook(
      [&](std::vector<MemoryPool::ReadBack>& parts) {
        ++adds;
        seen_by_hook = 0;
        if (give) parts.push_back({&seen_by_hook, buffer->pointer() + 4, 4});
      },
      [&] {
        ++dones;
        seen_at_done = seen_by_hook;
        // A read-back of its own here calls neither part of the hook again.
        REQUIRE(p.download(&read_in_done, buffer->pointer(), 4).ok());
      });
  uint32_t word = 0;
  REQUIRE(p.copy_to_host(&word, *buffer, 4).ok());
  CHECK(word == 7u);
  CHECK(seen_at_done == 7u);
  CHECK(read_in_done == 7u);
  CHECK((adds == 1 && dones == 1));
  uint64_t a = 0, b = 0;
  uint64_t* to[] = {&a, &b};
  const CUdeviceptr from[] = {buffer->pointer(), buffer->pointer() + 8};
  REQUIRE(p.download_words(to, from).ok());
  CHECK(a == 0x0000000700000007ull);
  CHECK((adds == 2 && dones == 2));
  // A read-back of nothing of its own makes the hook's copy alone.
  seen_at_done = 0;
  REQUIRE(p.read_hooked().ok());
  CHECK(seen_at_done == 7u);
  CHECK((adds == 3 && dones == 3));
  // A hook that adds nothing is not called back.
  give = false;
  REQUIRE(p.copy_to_host(&word, *buffer, 4).ok());
  CHECK((adds == 4 && dones == 3));
  // A hook that throws stops the read, and the next read calls it again.
  p.set_read_back_hook([&](std::vector<MemoryPool::ReadBack>&) {
    ++adds;
    throw std::runtime_error("deferred failure");
  }, nullptr);
  CHECK_THROWS_AS(p.copy_to_host(&word, *buffer, 4), std::runtime_error);
  CHECK_THROWS_AS(p.copy_to_host(&word, *buffer, 4), std::runtime_error);
  CHECK(adds == 6);
  p.set_read_back_hook(nullptr, nullptr);
}
