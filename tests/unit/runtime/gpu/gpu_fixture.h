// The GPU primitives under test: one device, pool and Primitives for the whole run, or null
// (with a message) where this machine has no GPU or the build no CUDA toolkit. With
// NDP_REQUIRE_GPU=1 (the GPU machine's test script) their absence fails instead.
// Helpers move test data (the CPU tests' Shape and Vec from shapes.h) to and from the device.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "runtime/gpu/primitives.h"
#include "runtime/cuda/cuda_driver.h"
#include "tests/unit/runtime/shapes.h"

namespace ndp::runtime::testing {

struct GpuRig {
  std::unique_ptr<cuda::Device> device;
  std::unique_ptr<cuda::MemoryPool> pool;
  std::unique_ptr<gpu::Primitives> prims;
};

inline gpu::Primitives* gpu_primitives() {
  // Never destroyed (as exec/cuda/gpu.cpp's Gpu): at exit the driver's static is destroyed
  // first, and freeing device memory after it would call into an unloaded library.
  static GpuRig& rig = *new GpuRig;
  static bool tried = false;
  if (!tried) {
    tried = true;
    cuda::Status why;
    const cuda::Driver* driver = cuda::Driver::system(&why);
    std::string skip;
    if (driver == nullptr) {
      skip = why.message();
    } else if (auto d = cuda::Device::open(*driver); !d.ok()) {
      skip = d.status().message();
    } else {
      rig.device = std::move(d.value());
      auto p = cuda::MemoryPool::create(*rig.device);
      REQUIRE_MESSAGE(p.ok(), p.status().message());
      rig.pool = std::move(p.value());
      auto prims = gpu::Primitives::load(*rig.device, *rig.pool);
      if (prims.ok()) rig.prims = std::move(prims.value());
      else skip = prims.status().message();
    }
    if (!skip.empty()) MESSAGE("SKIP GPU primitive tests: " << skip);
    const char* req = std::getenv("NDP_REQUIRE_GPU");
    if (req != nullptr && std::string(req) == "1") REQUIRE_MESSAGE(rig.prims != nullptr, "NDP_REQUIRE_GPU=1: " << skip);
  }
  return rig.prims.get();
}

/// The runtime's element type of a storage type.
template <class T>
constexpr ndp_elem_type elem_type_of() {
  if constexpr (std::is_same_v<T, int64_t>) return NDP_I64;
  else if constexpr (std::is_same_v<T, double>) return NDP_F64;
  else if constexpr (std::is_same_v<T, int32_t>) return NDP_I32;
  else if constexpr (std::is_same_v<T, float>) return NDP_F32;
  else if constexpr (std::is_same_v<T, bool>) return NDP_BOOL;
  else return NDP_CHAR;
}

inline constexpr Op all_ops[] = {Op::plus, Op::mult, Op::max, Op::min, Op::and_, Op::or_, Op::xor_};

/// The GPU's status record equals the CPU runtime's, field by field.
inline void check_same_status(const ndp_status& got, const ndp_status& want) {
  CHECK(got.code == want.code);
  CHECK(got.position == want.position);
  CHECK(got.index == want.index);
  CHECK(got.length == want.length);
}

/// A device array of T, filled from the host, read back with `host()`.
template <class T>
struct DArray {
  cuda::DeviceBuffer buf;
  int64_t n = 0;
  DArray() = default;
  DArray(gpu::Primitives& p, int64_t count) : n(count) {
    // Rounded up to whole 32-bit words, so that all of it is poisoned below (bool and char
    // arrays included): an output a kernel forgets to write does not pass by luck, even when
    // the pool hands back a block that held the right answer.
    size_t bytes = (static_cast<size_t>(count > 0 ? count : 1) * sizeof(T) + 3) / 4 * 4;
    auto b = p.pool().allocate(bytes);
    REQUIRE_MESSAGE(b.ok(), b.status().message());
    buf = std::move(b.value());
    REQUIRE(p.pool().fill_words(buf, 0xBADC0FFEu, bytes / 4).ok());
  }
  DArray(gpu::Primitives& p, std::span<const T> values) : DArray(p, static_cast<int64_t>(values.size())) {
    if (n > 0) REQUIRE(p.pool().copy_to_device(buf, values.data(), values.size_bytes()).ok());
  }
  cuda::CUdeviceptr ptr() const { return buf.pointer(); }
  /// The contents (a shapes.h Vec, since std::vector<bool> has no contiguous storage).
  Vec<T> host(gpu::Primitives& p) const {
    Vec<T> out(n);
    if (n > 0) REQUIRE(p.pool().copy_to_host(out.p.get(), buf, static_cast<size_t>(n) * sizeof(T)).ok());
    return out;
  }
};

/// The cpu runtime's pack of v by flags.
template <class T>
Vec<T> packed(const Vec<T>& v, const Vec<bool>& flags) {
  int64_t count = 0;
  for (int64_t i = 0; i < v.n; ++i) count += flags[i];
  Vec<T> want(count);
  REQUIRE(ok(pack<T>(v, flags, want)));
  return want;
}

/// pack_counted of the device arrays v and flags (n elements), into room for every element,
/// keeps `want` and says how many it kept.
template <class T>
void check_pack_counted(gpu::Primitives& p, const DArray<T>& v, const DArray<bool>& flags, int64_t n,
                        const Vec<T>& want) {
  DArray<T> room(p, n);
  auto kept = p.pack_counted(elem_type_of<T>(), v.ptr(), flags.ptr(), n, room.ptr());
  REQUIRE_MESSAGE(kept.ok(), kept.status().message());
  CHECK(kept.value() == want.n);
  CHECK(first_diff<T>(room.host(p).cspan().subspan(0, static_cast<size_t>(want.n)), want) == -1);
}

/// A Shape's descriptor on the device: regular shapes stay regular, irregular ones upload their
/// offsets.
/// Sends small inputs down the one-launch paths or the general ones for its lifetime, and back
/// to the one-launch paths after (a failed check inside leaves the other tests as they were).
class SmallInputsInOneLaunch {
 public:
  SmallInputsInOneLaunch(gpu::Primitives& p, bool on) : p_(p) { p_.set_small_inputs_in_one_launch(on); }
  ~SmallInputsInOneLaunch() { p_.set_small_inputs_in_one_launch(true); }
  SmallInputsInOneLaunch(const SmallInputsInOneLaunch&) = delete;
  SmallInputsInOneLaunch& operator=(const SmallInputsInOneLaunch&) = delete;

 private:
  gpu::Primitives& p_;
};

struct DShape {
  DArray<int64_t> offsets;
  gpu::DSegs segs;
  DShape(gpu::Primitives& p, const Shape& s) {
    if (s.view().is_regular()) {
      segs = gpu::DSegs{s.count(), s.total(), 0, s.view().regular_length()};
    } else {
      offsets = DArray<int64_t>(p, std::span<const int64_t>(s.offsets.data(), s.offsets.size()));
      segs = gpu::DSegs::irregular(s.count(), s.total(), offsets.ptr());
    }
  }
};

}  // namespace ndp::runtime::testing
