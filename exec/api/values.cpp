// The embedding API's values (include/ndp/ndp.hpp, Note [Embedding values]): n instances of
// one type as an executor vector (exec/host/vec.h). Built by the header's Traits from C++
// values, and read back by them from a call's result.
#include "exec/api/api_impl.h"
#include "exec/api/device_values.h"

#include <mutex>
#include <string>

#include "exec/host/vec.h"
#include "include/ndp/ndp.hpp"
#include "lang/diagnostics.h"

namespace ndp::detail {

using exec::host::Vec;

namespace {

/// The types of values built here; the call retypes them to its session's (exec's retype).
/// TypeContext interns without a lock of its own.
lang::TypeContext& built_types(std::unique_lock<std::mutex>& lock) {
  static std::mutex m;
  static lang::TypeContext types;
  lock = std::unique_lock<std::mutex>(m);
  return types;
}

const lang::Type* scalar_type(lang::TypeContext& t, Scalar k) {
  switch (k) {
    case Scalar::Int: return t.int_();
    case Scalar::Float: return t.float_();
    case Scalar::Bool: return t.bool_();
    case Scalar::Char: return t.char_();
    case Scalar::I32: return t.i32();
    case Scalar::F32: return t.f32();
  }
  return t.int_();
}

}  // namespace

DataPtr make_data(exec::host::Vec v) {
  auto d = std::make_shared<Data>();
  d->vec = std::move(v);
  return d;
}

DataPtr make_data(exec::host::ExecValue v) {
  auto d = std::make_shared<Data>();
  d->vec = std::move(v.vec);
  d->device = std::move(v.device);
  return d;
}

DataPtr on_host(const DataPtr& d) { return d->device ? make_data(download_vec(d->device)) : d; }

DataPtr host_of(const DataPtr& d) { return on_host(d); }

DataPtr upload(const ContextImpl& c, const DataPtr& host) {
  if (c.backend != Backend::Cuda || host->device) return host;  // the other backends compute on the host
  exec::host::ExecValue v;
  v.device = upload_vec(host->vec);
  return make_data(std::move(v));
}

int64_t elements_count(const Data& d) { return d.device ? device_elements(d.device) : d.vec.elems().size(); }

std::pair<DataPtr, void*> make_scalars(Scalar k, int64_t n) {
  std::unique_lock<std::mutex> lock;
  const lang::Type* t = scalar_type(built_types(lock), k);
  lock.unlock();
  return exec::host::with_scalar(t->kind, [&](auto tag) -> std::pair<DataPtr, void*> {
    exec::host::Buf<typename decltype(tag)::type> buf(n);
    void* p = buf.data();
    return {make_data(Vec::scalar(t, n, buf.share())), p};
  });
}

DataPtr borrow_scalars(Scalar k, const void* p, int64_t n) {
  std::unique_lock<std::mutex> lock;
  const lang::Type* t = scalar_type(built_types(lock), k);
  lock.unlock();
  static const char empty[8] = {};
  // The caller's memory for the call's duration: nothing to free.
  return make_data(Vec::scalar(t, n, std::shared_ptr<const void>(n > 0 ? p : empty, [](const void*) {})));
}

DataPtr make_nest(const DataPtr& elements, const int64_t* lengths, int64_t n) {
  if (elements->device) fail("an ndp::Array cannot be an element of another sequence");
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (lengths[i] < 0) fail("a sequence length is negative (" + std::to_string(lengths[i]) + ")");
    total += lengths[i];
  }
  if (total != elements->vec.size())
    fail("the lengths of a nested sequence add up to " + std::to_string(total) + ", but it holds " +
              std::to_string(elements->vec.size()) + " values");
  auto [lens, p] = make_scalars(Scalar::Int, n);
  std::copy(lengths, lengths + n, static_cast<int64_t*>(p));
  std::unique_lock<std::mutex> lock;
  const lang::Type* t = built_types(lock).seq(elements->vec.type());
  lock.unlock();
  return make_data(Vec::seq(t, n, lens->vec.shared_buffer(), elements->vec));
}

DataPtr pair_of(const DataPtr& first, const DataPtr& second) {
  if (first->device || second->device) {  // one side on the GPU: the pair is built there
    exec::host::ExecValue v;
    std::unique_lock<std::mutex> lock;
    lang::TypeContext& types = built_types(lock);
    v.device = device_pair(types, first->device ? first->device : upload_vec(first->vec),
                           second->device ? second->device : upload_vec(second->vec));
    return make_data(std::move(v));
  }
  if (first->vec.size() != second->vec.size()) fail("the two sides of a pair differ in length");
  std::unique_lock<std::mutex> lock;
  const lang::Type* t = built_types(lock).pair(first->vec.type(), second->vec.type());
  lock.unlock();
  return make_data(Vec::pair(t, first->vec, second->vec));
}

void fail_nested_array() { fail("an ndp::Array may be an argument, a result or part of a tuple, not an element"); }

int64_t size_of(const Data& d) { return d.device ? device_size(d.device) : d.vec.size(); }

const void* scalars_of(const Data& d, Scalar k) {
  NDP_ASSERT(!d.device, "embedding: scalars read on the device (read through host_of)");
  std::unique_lock<std::mutex> lock;
  NDP_ASSERT(d.vec.kind() == scalar_type(built_types(lock), k)->kind, "embedding: scalars read as another type");
  return d.vec.raw_data();
}

const int64_t* lengths_of(const Data& d) {
  NDP_ASSERT(!d.device, "embedding: lengths read on the device (read through host_of)");
  NDP_ASSERT(d.vec.kind() == lang::TypeKind::Seq, "embedding: lengths of a value that is not a sequence");
  return d.vec.lengths();
}

DataPtr elements_of(const Data& d) {
  NDP_ASSERT(!d.device, "embedding: elements read on the device (read through host_of)");
  NDP_ASSERT(d.vec.kind() == lang::TypeKind::Seq, "embedding: elements of a value that is not a sequence");
  return make_data(d.vec.elems());
}

DataPtr first_of(const Data& d) {
  if (d.device) return make_data(exec::host::ExecValue{{}, device_first(d.device)});
  NDP_ASSERT(d.vec.kind() == lang::TypeKind::Pair, "embedding: first of a value that is not a pair");
  return make_data(d.vec.first());
}

DataPtr second_of(const Data& d) {
  if (d.device) return make_data(exec::host::ExecValue{{}, device_second(d.device)});
  NDP_ASSERT(d.vec.kind() == lang::TypeKind::Pair, "embedding: second of a value that is not a pair");
  return make_data(d.vec.second());
}

}  // namespace ndp::detail
