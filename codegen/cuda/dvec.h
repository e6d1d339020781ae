// DVec: the run-time value of a Flat IR vector variable on the cuda backend: the cpu backend's
// Vec (Note [Vec representation] in codegen/cpu/vec.h) with its buffers in device memory.
//
// Note [DVec]
// * The shape is Vec's: scalars are one buffer of the storage type; a sequence has lengths,
//   offsets (n + 1 entries) and the elements back to back; pairs and datatypes are
//   structure of arrays. Function values are interned ids (int64), as on the cpu backend.
// * A sequence's element count (`total`) is known on the host (elems().size()), so every
//   allocation that depends on it needs no read-back.
// * Buffers are shared and never written after construction, so structural operations that
//   keep data (First, Elements, Retype) cost no device work.
#pragma once

#include <cstdint>
#include <memory>

#include "lang/types.h"
#include "runtime/gpu/primitives.h"

namespace ndp::codegen::cuda {

using rt::cuda::CUdeviceptr;
using DBuf = std::shared_ptr<const rt::cuda::DeviceBuffer>;

/// The runtime's element type of a flat scalar type (streams and function ids: int64).
ndp_elem_type elem_type(const lang::Type* t);
inline int elem_bytes(const lang::Type* t) { return rt::gpu::elem_bytes(elem_type(t)); }

class DVec {
 public:
  DVec() = default;

  const lang::Type* type() const { return type_; }
  int64_t size() const { return n_; }
  lang::TypeKind kind() const { return type_->kind; }

  // ---- scalars ----
  CUdeviceptr data() const { return buf_ ? buf_->pointer() : 0; }
  const DBuf& buffer() const { return buf_; }

  // ---- sequences ----
  CUdeviceptr lengths() const { return data(); }
  CUdeviceptr offsets() const { return off_ ? off_->pointer() : 0; }
  const DBuf& offsets_buffer() const { return off_; }
  int64_t total() const { return a_->size(); }
  rt::gpu::DSegs segs() const { return rt::gpu::DSegs::irregular(n_, total(), offsets()); }
  const DVec& elems() const { return *a_; }

  // ---- pairs and datatypes ----
  const DVec& first() const { return *a_; }
  const DVec& second() const { return *b_; }
  const DVec& fields() const { return *a_; }

  // ---- construction ----
  static DVec scalar(const lang::Type* t, int64_t n, DBuf buf);
  /// A sequence from its lengths and offsets buffers (offsets[n] == elems.size()).
  static DVec seq(const lang::Type* t, int64_t n, DBuf lengths, DBuf offsets, DVec elems);
  static DVec pair(const lang::Type* t, DVec a, DVec b);
  static DVec data(const lang::Type* t, DVec fields);
  static DVec open_type(const lang::Type* t, int64_t n);

 private:
  const lang::Type* type_ = nullptr;
  int64_t n_ = 0;
  DBuf buf_;
  DBuf off_;
  std::shared_ptr<const DVec> a_, b_;
};

}  // namespace ndp::codegen::cuda
