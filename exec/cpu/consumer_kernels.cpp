// Consumer kernels on the cpu backend (see consumer_kernels.h).
#include "exec/cpu/consumer_kernels.h"

#include <optional>

#include "exec/cpu/kernels.h"
#include "exec/host/lifted_prims.h"
#include "lang/diagnostics.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::cpu {

using namespace host;  // the cpu backend runs on the host vectors and primitives


namespace {

/// The kernel's values as the runtime's typed generator.
template <class T>
runtime::Generate<T> generator(const flatten::KernelBody& k, std::span<const Vec> ins) {
  return [g = kernel_generator(k, ins)](int64_t begin, int64_t end, T* out) { g(begin, end, out); };
}

/// The segments `lengths` describe (regular when they are uniform), checked against the values.
LengthSegs segments(const Vec& lengths, int64_t total) {
  LengthSegs s = segments_of(lengths);
  NDP_ASSERT(s.view.total() == total, "consumer kernel lengths do not cut its values");
  return s;
}

}  // namespace

Vec reduce_kernel(const flatten::Stmt& s, const Vec& lengths, std::span<const Vec> ins, const lang::Type* result) {
  LengthSegs segs = segments(lengths, ins[0].size());
  return with_scalar(result->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> r(lengths.size());
    check_rt(runtime::seg_reduce_generated<T>(*scan_op(s.prim), generator<T>(*s.kernel, ins), segs.view,
                                         std::span<T>(r.data(), static_cast<size_t>(lengths.size()))),
             "seg_reduce_generated");
    return Vec::scalar(result, lengths.size(), r.share());
  });
}

Vec scan_kernel(const flatten::Stmt& s, const Vec& lengths, std::span<const Vec> ins, const lang::Type* result) {
  const int64_t total = ins[0].size();
  LengthSegs segs = segments(lengths, total);
  Vec elems = with_scalar(result->a->kind, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> r(total);
    check_rt(runtime::seg_scan_generated<T>(*scan_op(s.prim), runtime::ScanKind::exclusive, generator<T>(*s.kernel, ins),
                                       segs.view, std::span<T>(r.data(), static_cast<size_t>(total))),
             "seg_scan_generated");
    return Vec::scalar(result->a, total, r.share());
  });
  return Vec::seq(result, lengths.size(), lengths.shared_buffer(), segs.offsets, std::move(elems));
}

Vec pack_kernel(const flatten::Stmt& s, const Vec& values, std::span<const Vec> ins) {
  return with_scalar(values.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::optional<Buf<T>> out;
    int64_t count = 0;
    check_rt(runtime::pack_generated<T>(values.values<T>(), generator<bool>(*s.kernel, ins),
                                   [&](int64_t n) {
                                     count = n;
                                     out.emplace(n);
                                     return out->data();
                                   }),
             "pack_generated");
    return Vec::scalar(values.type(), count, out->share());
  });
}

}  // namespace ndp::exec::cpu
