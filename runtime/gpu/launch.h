// Host-side helpers of the primitive dispatchers: kernel names per element type, and launching
// a kernel by name over a grid-stride shape in one call.
#pragma once

#include <string>

#include "runtime/gpu/primitives.h"

namespace ndp::runtime::gpu {

/// The kernel-name suffix of an element type (NDP_FOR_ELEMS in device/common.cuh).
inline const char* elem_suffix(ndp_elem_type t) {
  switch (t) {
    case NDP_I64: return "i64";
    case NDP_F64: return "f64";
    case NDP_I32: return "i32";
    case NDP_F32: return "f32";
    case NDP_BOOL: return "bool";
    case NDP_CHAR: return "char";
  }
  return "?";
}

/// The op-name part of scan/reduce/combine kernel names.
inline const char* op_name(ndp_op op) {
  switch (op) {
    case NDP_OP_PLUS: return "plus";
    case NDP_OP_MULT: return "mult";
    case NDP_OP_MAX: return "max";
    case NDP_OP_MIN: return "min";
    case NDP_OP_AND: return "and";
    case NDP_OP_OR: return "or";
    case NDP_OP_XOR: return "xor";
  }
  return "?";
}

/// Launches kernel `name` with a grid-stride shape for `n` work items (nothing for n == 0).
/// Arguments are passed by value with the exact types the kernel declares (device pointers as
/// CUdeviceptr, DSegs as the kernel's Segs).
template <class... Args>
Status launch_named(Primitives& p, const std::string& name, int64_t n, Args... args) {
  if (n <= 0) return Status();
  Result<cuda::Kernel> k = p.kernel(name);
  if (!k.ok()) return k.status();
  return cuda::launch_with(p.device(), k.value(), p.device().grid_stride(n), args...);
}

/// A per-element-size kernel name: "ndp_gather_" and 8 give "ndp_gather_8".
inline std::string sized_name(const char* name, int bytes) { return name + std::to_string(bytes); }
inline std::string sized_name(const char* name, ndp_elem_type t) { return sized_name(name, elem_bytes(t)); }

/// The number of bytes needed to hold keys up to max_key (0 for 0).
inline int key_bytes_for(uint64_t max_key) {
  int bytes = 0;
  for (; max_key != 0; max_key >>= 8) ++bytes;
  return bytes;
}

/// A checked primitive's failure record on the device: [0, 4) the status record a record kernel
/// writes (code, position, index, length as int64), then two failure slots that checking
/// kernels lower with atomicMin (kNoFailure, all ones, until then; device/common.cuh).
class StatusRecord {
 public:
  static Result<StatusRecord> make(Primitives& p) {
    Result<cuda::DeviceBuffer> b = p.pool().allocate(6 * sizeof(int64_t));
    if (!b.ok()) return b.status();
    StatusRecord r(std::move(b.value()));
    if (Status st = p.fill(r.slots(), 2, 8, ~uint64_t{0}); !st.ok()) return st;
    return r;
  }
  CUdeviceptr status() const { return buf_.pointer(); }
  /// Slot 0; slot 1 is the next word.
  CUdeviceptr slots() const { return buf_.pointer() + 4 * sizeof(int64_t); }
  /// The status record a record kernel wrote (synchronises).
  Result<ndp_status> read_status(Primitives& p) const {
    int64_t h[4];
    if (Status st = p.pool().download(h, status(), sizeof h); !st.ok()) return st;
    return ndp_status{static_cast<ndp_status_code>(h[0]), h[1], h[2], h[3]};
  }

 private:
  explicit StatusRecord(cuda::DeviceBuffer b) : buf_(std::move(b)) {}
  cuda::DeviceBuffer buf_;
};

/// Launches checking kernel `name` over n items with `args` and the failure word last (Note
/// [Armed failure words] in primitives.cpp), and returns the lowest failing position, or -1
/// (synchronises).
template <class... Args>
Result<int64_t> first_failure(Primitives& p, const std::string& name, int64_t n, Args... args) {
  if (n <= 0) return int64_t{-1};
  Result<CUdeviceptr> word = p.failure_words();
  if (!word.ok()) return word.status();
  if (Status s = launch_named(p, name, n, args..., word.value()); !s.ok()) return s;
  uint64_t v = 0;
  if (Status s = p.pool().download(&v, word.value(), sizeof v); !s.ok()) return s;
  if (v == ~uint64_t{0}) return int64_t{-1};
  if (Status s = p.rearm_failure_words(); !s.ok()) return s;
  return static_cast<int64_t>(v);
}

namespace detail {
/// The stable LSD radix sort of (key, int64 payload) pairs (rank_sort.cpp), shared with
/// combine.cpp.
Status radix_sort_pairs(Primitives& p, int key_bytes, const CUdeviceptr keys[2], const CUdeviceptr payload[2], int64_t n,
                        unsigned byte_mask, int* which);
}  // namespace detail

}  // namespace ndp::runtime::gpu
