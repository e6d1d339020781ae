// The cuda backend's lifted primitives (Note [GPU lifted primitives]).
#include "exec/cuda/lifted_prims.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>

#include "exec/host/convert.h"
#include "exec/cuda/batched_moves.h"
#include "exec/cuda/device_vec_ops.h"
#include "flatten/passes/fuse_elementwise.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/scalar_ops.h"

namespace ndp::exec::cuda {

using host::LiftedCall;
using lang::Type;
using lang::TypeKind;
using lang::core::PrimId;
using runtime::gpu::DSegs;

ndp_op op_of(PrimId id) {
  std::optional<runtime::Op> o = host::scan_op(id);
  NDP_ASSERT(o.has_value(), "op_of: not a scan, reduction or combine");
  return static_cast<ndp_op>(*o);
}

namespace {

/// The cpu backend's primitive on host copies of the arguments.
host::Vec run_on_host(const GpuPrimContext& ctx, const LiftedCall& c, std::span<const DVec> args,
                      const std::function<void(int64_t)>& before_instance) {
  std::vector<host::Vec> host;
  host.reserve(args.size());
  for (const DVec& a : args) host.push_back(download(*ctx.gpu, a));
  return before_instance ? host::apply_fallback_prim(ctx.host, c, host, before_instance)
                         : host::apply_lifted_prim(ctx.host, c, host);
}

/// True where NDP_HOST_FALLBACK=error asks that no primitive runs on the host.
bool host_fallback_is_error() {
  static const bool error = [] {
    const char* s = std::getenv("NDP_HOST_FALLBACK");
    return s != nullptr && std::string(s) == "error";
  }();
  return error;
}

/// The primitives that belong on the host: I/O and string formatting and parsing.
bool belongs_on_host(PrimId id) {
  return lang::core::prim_family(id) == lang::core::PrimFamily::Io || id == PrimId::ToString || id == PrimId::Pad ||
         id == PrimId::ExpString;
}

/// A device check failed: the host primitive raises the interpreter's message.
[[noreturn]] void fail_on_host(const GpuPrimContext& ctx, const LiftedCall& c, std::span<const DVec> args) {
  run_on_host(ctx, c, args, {});
  throw lang::InternalError("internal error: cuda backend: a device check failed where the host primitive did not");
}

}  // namespace

DVec host_prim(const GpuPrimContext& ctx, const LiftedCall& c, std::span<const DVec> args,
               const std::function<void(int64_t)>& before_instance) {
  if (host_fallback_is_error() && !belongs_on_host(c.id))
    throw lang::eval::EvalError{std::string("cuda: ") + lang::core::prim_info(c.id).name +
                                    " ran on the host (NDP_HOST_FALLBACK=error).",
                                c.span};
  if (ctx.host_fallbacks != nullptr) ++*ctx.host_fallbacks;
  return upload(*ctx.gpu, run_on_host(ctx, c, args, before_instance));
}

namespace {

bool plain_scalar(const DVec& v) { return host::is_flat_scalar(v.type()) && v.kind() != TypeKind::Stream && v.kind() != TypeKind::Fn; }

/// A sequence DVec with like's lengths and other elements.
DVec same_shape(const Type* t, const DVec& like, DVec elems) {
  return like.with_elems(t, std::move(elems));
}

/// Lengths a program asked for (dist, index, iseq) whose sum could wrap around int64: then
/// "Out of memory.", which it would be (n times the longest is past host::kMaxElements; such
/// a vector fits no memory). One reduction; none for one instance, whose total is checked.
void check_lengths_fit(int64_t longest, int64_t n) {
  if (static_cast<__int128>(longest) * n > host::kMaxElements)
    throw lang::eval::EvalError{lang::message(lang::RuntimeErrorId::OutOfMemory), lang::Span{}};
}

void check_lengths_fit(Gpu& g, CUdeviceptr lengths, int64_t n) {
  if (n <= 1) return;
  DBuf longest = g.alloc(8);
  g.check(g.prims().seg_reduce(NDP_OP_MAX, NDP_I64, lengths, DSegs::flat(n), longest->pointer()));
  check_lengths_fit(g.read_int(longest->pointer(), 0), n);
}

/// The offsets and total of a lengths vector; nullopt when a length is negative. The lengths
/// of a sequence that exists (`#v` in `index(#v)`, `dist(x, #v)`) are valid, and their offsets
/// are known (Note [Segment descriptor cache]): no pass and no read-back then.
std::optional<KnownSegments> checked_offsets(Gpu& g, const DVec& lengths) {
  const int64_t n = lengths.size();
  if (std::optional<KnownSegments> known = known_segments(lengths.buffer(), n)) return known;
  check_lengths_fit(g, lengths.data(), n);
  KnownSegments s{g.alloc((n + 1) * 8), 0};
  ndp_status st = g.check(g.prims().offsets_from_lengths(lengths.data(), n, s.offsets->pointer(), &s.total));
  if (st.code != NDP_OK) return std::nullopt;
  return s;
}

// Note [Edits by positions]
// rep, <-, put and select move whole elements, whatever they are (strings, tuples, nested
// sequences). Where the elements are not flat scalars the edit is done on their positions: an
// iota over the old elements, with the positions of the new values (numbered after the old
// ones) replaced or scattered in by the flat primitive on int64, with its checks; then one
// take of the old elements followed by the new ones moves every element, at every depth, to
// its place.
struct Natives {
  const GpuPrimContext& ctx;
  const LiftedCall& c;
  std::span<const DVec> a;
  Gpu& g;

  [[noreturn]] void fail() { fail_on_host(ctx, c, a); }
  /// A deferred failure record (Note [Deferred failure records] in gpu.h) whose failure raises
  /// this call's error from its arguments, kept alive until it is read (about `held_bytes`).
  CUdeviceptr failure_record_for_call(int64_t held_bytes) {
    return g.deferred_record(
        [ctx = &ctx, call = c, args = std::vector<DVec>(a.begin(), a.end())](uint64_t) { fail_on_host(*ctx, call, args); },
        held_bytes);
  }
  const Type* int_t() { return ctx.host.types->int_(); }

  DVec run_one(const flatten::KernelBody& k, std::span<const DVec> ins, const Type* result) {
    const Type* out[1] = {result};
    return std::move(ctx.kernels->run(k, ins, out)[0]);
  }

  std::vector<const Type*> arg_types() {
    std::vector<const Type*> types;
    for (const DVec& v : a) types.push_back(v.type());
    return types;
  }

  /// An elementwise primitive as a one-node kernel, where the code generator handles it; one
  /// that can fail reports its first failing instance (Note [Kernels that can fail]), outside
  /// the library at the next read-back, as a fused kernel does (Note [Deferred failure records]
  /// in gpu.h): a quicksort level's pivot `#a / 2` waited 155 µs here (H200, session 43).
  std::optional<DVec> elementwise() {
    std::vector<const Type*> types = arg_types();
    if (!flatten::kernel_prim_ok(c.id, types, c.result) && !flatten::kernel_prim_fallible(c.id, types, c.result))
      return std::nullopt;
    flatten::KernelBody k = flatten::one_node_kernel(c.id, types, c.result, c.span);
    if (!ctx.kernels->available(k)) return std::nullopt;  // the host's (Note [Precompiled modules])
    if (!k.can_fail() || !ctx.defers_failures || !ctx.defers_failures(c.span)) return run_one(k, a, c.result);
    std::unique_ptr<const flatten::KernelBody>& kept = ctx.deferred_bodies[std::to_string(c.span.file) + ":" +
        std::to_string(c.span.begin) + "-" + std::to_string(c.span.end) + "|" + k.key()];
    if (!kept) kept = std::make_unique<const flatten::KernelBody>(std::move(k));
    const Type* out[1] = {c.result};
    return std::move(ctx.kernels->run(*kept, a, out, {}, {}, c.span)[0]);
  }

  DVec length() { return a[0].lengths_vec(int_t()); }

  std::optional<DVec> scan() {
    const DVec& e = a[0].elems();
    if (!plain_scalar(e)) return std::nullopt;
    DBuf out = g.alloc(e.size() * elem_bytes(e.type()));
    ndp_status st = g.check(g.prims().seg_scan(op_of(c.id), false, elem_type(e.type()), e.data(), a[0].segs(), out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    return same_shape(c.result, a[0], DVec::scalar(e.type(), e.size(), std::move(out)));
  }

  std::optional<DVec> reduce() {
    const DVec& e = a[0].elems();
    if (!plain_scalar(e)) return std::nullopt;
    int64_t n = a[0].size();
    DBuf out = g.alloc(n * elem_bytes(e.type()));
    ndp_status st = g.check(g.prims().seg_reduce(op_of(c.id), elem_type(e.type()), e.data(), a[0].segs(), out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    return DVec::scalar(c.result, n, std::move(out));
  }

  /// prim_max_index / prim_min_index of every sequence (Note [Index of the extreme] in
  /// runtime/gpu/seg_reduce.cpp).
  std::optional<DVec> index_of_extreme() {
    const DVec& e = a[0].elems();
    if (!plain_scalar(e)) return std::nullopt;
    int64_t n = a[0].size();
    DBuf out = g.alloc(n * 8);
    ndp_status st = g.check(
        g.prims().seg_index_of_extreme(op_of(*lang::core::index_of_extreme(c.id)), elem_type(e.type()), e.data(),
                                       a[0].segs(), out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    return DVec::scalar(c.result, n, std::move(out));
  }

  DVec dist() {
    const DVec &x = a[0], &k = a[1];
    int64_t n = k.size();
    if (std::optional<uint64_t> known = k.known_bits(); known && host::is_flat_scalar(x.type())) {  // Note [Known values]
      const int64_t len = static_cast<int64_t>(*known);
      if (len < 0) fail();
      check_lengths_fit(len, n);
      if (std::optional<uint64_t> bits = x.known_bits())
        return DVec::regular(g, c.result, n, len, DVec::known(g, x.type(), n * len, *bits));
      DBuf out = g.alloc(n * len * elem_bytes(x.type()));
      g.check(g.prims().dist(elem_type(x.type()), x.data(), DSegs{n, n * len, 0, len}, out->pointer()));
      return DVec::regular(g, c.result, n, len, DVec::scalar(x.type(), n * len, std::move(out)));
    }
    auto off = checked_offsets(g, k);
    if (!off) fail();
    auto [offsets, total] = std::move(*off);
    DSegs s = DSegs::irregular(n, total, offsets->pointer());
    DVec elems;
    if (std::optional<uint64_t> bits = x.known_bits(); bits && host::is_flat_scalar(x.type())) {
      elems = DVec::known(g, x.type(), total, *bits);  // one value everywhere: nothing to spread
    } else if (host::is_flat_scalar(x.type())) {
      DBuf out = g.alloc(total * elem_bytes(x.type()));
      g.check(g.prims().dist(elem_type(x.type()), x.data(), s, out->pointer()));
      elems = DVec::scalar(x.type(), total, std::move(out));
    } else {
      DBuf ids = g.alloc(total * 8);
      g.check(g.prims().segment_ids(s, ids->pointer()));
      elems = take(g, x, ids->pointer(), total);
    }
    return DVec::seq(c.result, n, k.buffer(), std::move(offsets), std::move(elems));
  }

  DVec index() {
    const DVec& k = a[0];
    int64_t n = k.size();
    if (std::optional<uint64_t> known = k.known_bits()) {  // Note [Known values]: [0, len) everywhere
      const int64_t len = static_cast<int64_t>(*known);
      if (len < 0) fail();
      check_lengths_fit(len, n);
      return DVec::regular(g, c.result, n, len, ranks(DSegs{n, n * len, 0, len}, nullptr));
    }
    auto off = checked_offsets(g, k);
    if (!off) fail();
    auto [offsets, total] = std::move(*off);
    DVec elems = ranks(DSegs::irregular(n, total, offsets->pointer()), offsets);
    return DVec::seq(c.result, n, k.buffer(), std::move(offsets), std::move(elems));
  }

  /// 0, 1, ... over each segment of segs (whose offsets `offsets` holds, where irregular),
  /// deferred: a fused kernel computes them (Note [Spread inputs] in kernels.h).
  DVec ranks(DSegs segs, DBuf offsets) {
    return DVec::ranks(g, int_t(), segs, std::move(offsets));
  }

  DVec iseq() {  // [s:e:d] with a[0] = s, a[1] = d, a[2] = e (lang/prims.def's argument order)
    int64_t n = a[0].size();
    if (a[0].known_bits() && a[1].known_bits() && a[2].known_bits()) {  // Note [Known values]: one range everywhere
      const int64_t s = static_cast<int64_t>(*a[0].known_bits()), d = static_cast<int64_t>(*a[1].known_bits()),
                    e = static_cast<int64_t>(*a[2].known_bits());
      if (n > 0 && (d < 1 || e < s)) fail();
      const uint64_t length = n > 0 ? lang::eval::range_length(s, d, e) : 0;
      // Past any memory, it stays so as an int64 for check_lengths_fit's "Out of memory.".
      const int64_t len = static_cast<int64_t>(std::min<uint64_t>(length, uint64_t{1} << 62));
      check_lengths_fit(len, n);
      return ranges_of_one_length(n, len);
    }
    DBuf len = g.alloc(n * 8);
    int64_t longest = 0;
    if (g.check(g.prims().iseq_lengths(a[0].data(), a[1].data(), a[2].data(), n, len->pointer(), &longest)) >= 0)
      fail();
    check_lengths_fit(longest, n);
    if (n == 1) return ranges_of_one_length(n, longest);  // its length is the longest, read back with the check
    auto [offsets, total] = segments_of_valid_lengths(g, n, len);  // iseq_lengths checked them
    if (counts_from_zero()) {
      DVec elems = ranks(DSegs::irregular(n, total, offsets->pointer()), offsets);
      return DVec::seq(c.result, n, std::move(len), std::move(offsets), std::move(elems));
    }
    DBuf out = g.alloc(total * 8);
    g.check(g.prims().index(NDP_I64, a[0].data(), a[1].data(), DSegs::irregular(n, total, offsets->pointer()), out->pointer()));
    return DVec::seq(c.result, n, std::move(len), std::move(offsets), DVec::scalar(int_t(), total, std::move(out)));
  }

  /// Whether every one of iseq's ranges starts at 0 by steps of 1 (a lifted [0:#s]).
  bool counts_from_zero() const { return a[0].known_bits() == uint64_t{0} && a[1].known_bits() == uint64_t{1}; }

  /// iseq's n ranges, each of len elements: regular, no offsets to scan.
  DVec ranges_of_one_length(int64_t n, int64_t len) {
    if (counts_from_zero()) return DVec::regular(g, c.result, n, len, ranks(DSegs{n, n * len, 0, len}, nullptr));
    DBuf out = g.alloc(n * len * 8);
    g.check(g.prims().index(NDP_I64, a[0].data(), a[1].data(), DSegs{n, n * len, 0, len}, out->pointer()));
    return DVec::regular(g, c.result, n, len, DVec::scalar(int_t(), n * len, std::move(out)));
  }

  /// Element positions seq_offsets[ids[j]] + idx[j], checked against each sequence's length.
  DBuf positions(const DVec& seqs, CUdeviceptr ids, CUdeviceptr idx, int64_t m) {
    DBuf pos = g.alloc(m * 8);
    int64_t bad = g.check(g.prims().index_shared_positions(seqs.offsets(), ids, idx, m, pos->pointer()));
    if (bad >= 0) fail();
    return pos;
  }

  DVec elt() {
    const DVec &v = a[0], &i = a[1];
    int64_t n = v.size();
    if (std::optional<int64_t> k = v.regular_length(); k && i.known_bits()) {
      // Element j of every instance's k (Note [Known values]): element r·k + j of r, checked here.
      const int64_t j = static_cast<int64_t>(*i.known_bits());
      if (n > 0 && (j < 0 || j >= *k)) fail();
      const DVec& inner = v.elems();
      if (std::optional<int64_t> len = inner.regular_length(); len && *len > 0 && host::is_flat_scalar(inner.elems().type())) {
        // The c elements at (r·k + j)·c of every instance r, as a view (Note [Regular elt views]).
        DVec::Affine shape{*len, *k * *len, j * *len};
        return DVec::regular(g, c.result, n, *len, DVec::deferred_view(g, inner.elems(), n * *len, shape));
      }
      DBuf pos = g.alloc(n * 8);
      g.check(g.prims().iota(pos->pointer(), n, j, *k));
      return take(g, v.elems(), pos->pointer(), n);
    }
    DBuf ids = g.alloc(n * 8);
    g.check(g.prims().iota(ids->pointer(), n));
    DBuf pos = positions(v, ids->pointer(), i.data(), n);
    return take(g, v.elems(), pos->pointer(), n);
  }

  /// rep(v, x, i): each instance's sequence with element i replaced by x (REPLACE, checked).
  std::optional<DVec> rep() {
    const DVec &v = a[0], &x = a[1];
    const DVec& e = v.elems();
    if (!plain_scalar(e) || !plain_scalar(x)) {
      // Elements of any type (Note [Edits by positions]): the new element of instance j is
      // number total + j of e followed by x.
      const int64_t total = e.size();
      DBuf pos = g.alloc(total * 8), xpos = g.alloc(v.size() * 8), out = g.alloc(total * 8);
      g.check(g.prims().iota(pos->pointer(), total));
      g.check(g.prims().iota(xpos->pointer(), v.size(), total));
      ndp_status st = g.check(g.prims().replace(NDP_I64, pos->pointer(), a[2].data(), xpos->pointer(), v.segs(), out->pointer()));
      if (st.code == NDP_UNSUPPORTED) return std::nullopt;
      if (st.code != NDP_OK) fail();
      return same_shape(c.result, v, take_from_both(e, x, out->pointer(), total));
    }
    DBuf out = g.alloc(e.size() * elem_bytes(e.type()));
    ndp_status st = g.check(g.prims().replace(elem_type(e.type()), e.data(), a[2].data(), x.data(), v.segs(), out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    if (st.code != NDP_OK) fail();
    return same_shape(c.result, v, DVec::scalar(e.type(), e.size(), std::move(out)));
  }

  /// Element pos[k] of x followed by y, for k < m (positions need not cover both).
  DVec take_from_both(const DVec& x, const DVec& y, CUdeviceptr pos, int64_t m) {
    DVec parts[2] = {x, y};
    return take(g, concat(g, parts), pos, m);
  }

  std::optional<DVec> eql_values() { return equal(a[0], a[1]); }

  /// Instance by instance, whether x and y are equal values (lang::values_equal): flat scalars
  /// by ==, pairs and datatypes component by component, sequences by their lengths and then
  /// the elements of those whose lengths agree, an AND per sequence. Where a value holds
  /// functions or streams, the host compares.
  std::optional<DVec> equal(const DVec& x, const DVec& y) {
    const Type* b = ctx.host.types->bool_();
    auto both = [&](PrimId p, const DVec& u, const DVec& w) -> std::optional<DVec> {
      flatten::KernelBody k = flatten::one_node_kernel(p, {u.type(), w.type()}, b);
      if (!ctx.kernels->available(k)) return std::nullopt;
      DVec uw[2] = {u, w};
      return run_one(k, uw, b);
    };
    switch (x.kind()) {
      case TypeKind::Pair: {
        std::optional<DVec> first = equal(x.first(), y.first()), second = equal(x.second(), y.second());
        if (!first || !second) return std::nullopt;
        return both(PrimId::And, *first, *second);
      }
      case TypeKind::Data: return equal(x.fields(), y.fields());
      case TypeKind::Seq: {
        const int64_t n = x.size();
        if (x.lengths() != y.lengths() && g.check(g.prims().first_difference(x.lengths(), y.lengths(), n)) >= 0) {
          // Some lengths differ: those instances are unequal, and the others compare as below.
          std::optional<DVec> same = both(PrimId::Eq, DVec::scalar(int_t(), n, x.buffer()), DVec::scalar(int_t(), n, y.buffer()));
          if (!same) return std::nullopt;
          DVec xs = pack(g, x, *same), ys = pack(g, y, *same);
          std::optional<DVec> inner = equal(xs, ys);
          if (!inner) return std::nullopt;
          const int64_t m = xs.size();
          DBuf out = g.alloc(n), pos = g.alloc(m * 8);
          g.check(g.prims().fill(out->pointer(), n, 1, 0));
          g.check(g.prims().true_positions(same->data(), n, pos->pointer()));
          g.check(g.prims().scatter(1, inner->data(), pos->pointer(), m, out->pointer()));
          return DVec::scalar(b, n, std::move(out));
        }
        std::optional<DVec> elems = equal(x.elems(), y.elems());
        if (!elems) return std::nullopt;
        DBuf out = g.alloc(n);
        ndp_status st = g.check(g.prims().seg_reduce(op_of(PrimId::AllRed), elem_type(b), elems->data(), x.segs(), out->pointer()));
        if (st.code == NDP_UNSUPPORTED) return std::nullopt;
        return DVec::scalar(b, n, std::move(out));
      }
      default:
        if (!plain_scalar(x)) return std::nullopt;
        return both(PrimId::Eql, x, y);
    }
  }

  /// leaf(u, w) over the plain scalar components u of x and w of y (values of one type with no
  /// sequence, stream or function in them), rebuilt in x's shape (cuda::zip_components); nullopt
  /// where a component is not one or a leaf gives none.
  template <class Leaf>
  std::optional<DVec> zip_scalars(const DVec& x, const DVec& y, const Leaf& leaf) {
    return zip_components(x, y, [&](const DVec& u, const DVec& w) -> std::optional<DVec> {
      if (!plain_scalar(u)) return std::nullopt;
      return leaf(u, w);
    });
  }

  /// select(f, x, y) of values that are not flat scalars: one elementwise select a flat
  /// component where they hold no sequences; else by positions (Note [Edits by positions]),
  /// instance j being number j of x, or n + j of x followed by y.
  std::optional<DVec> select_values() {
    const DVec &f = a[0], &x = a[1], &y = a[2];
    if (plain_scalar(x)) return std::nullopt;
    auto select = [&](const DVec& u, const DVec& w) -> std::optional<DVec> {
      flatten::KernelBody k = flatten::one_node_kernel(PrimId::Select, {f.type(), u.type(), w.type()}, u.type());
      if (!ctx.kernels->available(k)) return std::nullopt;
      DVec ins[3] = {f, u, w};
      return run_one(k, ins, u.type());
    };
    if (std::optional<DVec> v = zip_scalars(x, y, select)) return v;
    const int64_t n = f.size();
    DBuf from_x = g.alloc(n * 8), from_y = g.alloc(n * 8);
    g.check(g.prims().iota(from_x->pointer(), n));
    g.check(g.prims().iota(from_y->pointer(), n, n));
    flatten::KernelBody k = flatten::one_node_kernel(PrimId::Select, {f.type(), int_t(), int_t()}, int_t());
    if (!ctx.kernels->available(k)) return std::nullopt;
    DVec ins[3] = {f, DVec::scalar(int_t(), n, std::move(from_x)), DVec::scalar(int_t(), n, std::move(from_y))};
    DVec pos = run_one(k, ins, int_t());
    return take_from_both(x, y, pos.data(), n);
  }

  /// Scatters `vals` (cut by `sv`) into each instance's sequence of d at `idx` (DPERMUTE:
  /// checked, the last of colliding writes wins, as on the host).
  std::optional<DVec> scatter_into(const DVec& d, const DVec& vals, CUdeviceptr idx, DSegs sv) {
    const DVec& de = d.elems();
    if (!plain_scalar(de) || !plain_scalar(vals)) {
      // Elements of any type (Note [Edits by positions]): value k is number total + k of de
      // followed by vals.
      const int64_t total = de.size(), m = vals.size();
      DBuf pos = g.alloc(total * 8), vpos = g.alloc(m * 8), out = g.alloc(total * 8);
      g.check(g.prims().iota(pos->pointer(), total));
      g.check(g.prims().iota(vpos->pointer(), m, total));
      ndp_status st = g.check(g.prims().dpermute(NDP_I64, vpos->pointer(), idx, sv, pos->pointer(), d.segs(), out->pointer()));
      if (st.code == NDP_UNSUPPORTED) return std::nullopt;
      if (st.code != NDP_OK) fail();
      return same_shape(c.result, d, take_from_both(de, vals, out->pointer(), total));
    }
    DBuf out = g.alloc(de.size() * elem_bytes(de.type()));
    ndp_status st = g.check(g.prims().dpermute(elem_type(de.type()), vals.data(), idx, sv, de.data(), d.segs(), out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    if (st.code != NDP_OK) fail();
    return same_shape(c.result, d, DVec::scalar(de.type(), de.size(), std::move(out)));
  }

  std::optional<DVec> write() {  // d <- pairs
    const DVec& pe = a[1].elems();
    return scatter_into(a[0], pe.second(), pe.first().data(), a[1].segs());
  }

  std::optional<DVec> put() {  // put(v, iv, d)
    const DVec &v = a[0], &iv = a[1];
    if (g.check(g.prims().first_difference(v.lengths(), iv.lengths(), v.size())) >= 0) fail();
    return scatter_into(a[2], v.elems(), iv.elems().data(), iv.segs());
  }

  /// partition(v, lens): each instance's sequence cut into pieces of the given lengths. The
  /// checks (no negative length; the lengths add up to the sequence's) run on the device; the
  /// pieces are v's elements under lens as their lengths, and nothing is copied.
  DVec partition() {
    const DVec &v = a[0], &lens = a[1];
    const DVec& pieces = lens.elems();
    if (std::optional<int64_t> k = lens.regular_length(); k && pieces.known_bits() && v.regular_length()) {
      // k pieces of p elements each out of sequences of c (Note [Known values]): checked here,
      // and regular again, over the same elements.
      const int64_t p = static_cast<int64_t>(*pieces.known_bits());
      if (v.size() > 0 && (p < 0 || *k * p != *v.regular_length())) fail();
      return lens.with_elems(c.result, DVec::regular(g, c.result->a, pieces.size(), p, v.elems()));
    }
    // (where the pieces, each cut to the elements, cannot sum past an int64)
    if (ctx.defers_failures && ctx.defers_failures(c.span) && pieces.size() > 0 &&
        v.elems().size() <= std::numeric_limits<int64_t>::max() / pieces.size())
      return partition_deferred();
    if (g.check(g.prims().first_out_of_range(pieces.data(), pieces.size(), std::numeric_limits<int64_t>::max())) >= 0) fail();
    int64_t n = v.size();
    DBuf sums = g.alloc(n * 8);
    g.check(g.prims().seg_reduce(NDP_OP_PLUS, NDP_I64, pieces.data(), lens.segs(), sums->pointer()));
    if (g.check(g.prims().first_difference(sums->pointer(), v.lengths(), n)) >= 0) fail();
    DVec inner = seq_from_lengths(g, c.result->a, pieces.size(), pieces.buffer(), v.elems());
    return same_shape(c.result, lens, std::move(inner));
  }

  /// partition's checks read later (Note [Deferred failure records] in gpu.h): the pieces are
  /// cut to stay inside the elements meanwhile, so that whatever reads them stays in bounds; a
  /// failure raises the host primitive's error from the arguments, kept until then.
  DVec partition_deferred() {
    const DVec &v = a[0], &lens = a[1];
    const DVec& pieces = lens.elems();
    const int64_t n = v.size(), m = pieces.size(), total = v.elems().size();
    // Every operand made before the record is taken (a read-back in between would free it).
    const CUdeviceptr lengths = pieces.data();
    if (n == 1 && g.prims().partition_fits_one_block(m)) {
      // One sequence into few pieces: the checks and the pieces in one launch.
      DBuf off = g.alloc((m + 1) * 8), len = g.alloc(m * 8);
      CUdeviceptr record = failure_record_for_call(8 * (2 * m + 1));
      g.check(g.prims().partition_block(lengths, m, total, off->pointer(), len->pointer(), record));
      DVec inner = DVec::seq(c.result->a, m, std::move(len), std::move(off), v.elems());
      return same_shape(c.result, lens, std::move(inner));
    }
    const CUdeviceptr expected = v.lengths();
    const runtime::gpu::DSegs segs = lens.segs();
    DBuf clamped = g.alloc(m * 8), sums = g.alloc(n * 8);
    CUdeviceptr record = failure_record_for_call(8 * (2 * m + 2 * n));
    g.check(g.prims().clamped_lengths(lengths, m, total, clamped->pointer(), record));
    // (the lengths as given: one cut to the elements may make a wrong sum right)
    g.check(g.prims().seg_reduce(NDP_OP_PLUS, NDP_I64, lengths, segs, sums->pointer()));
    g.check(g.prims().first_difference_into(sums->pointer(), expected, n, record));
    DBuf off = offsets_from_valid_lengths(g, m, clamped);
    DBuf off_within = g.alloc((m + 1) * 8), len_within = g.alloc(m * 8);
    g.check(g.prims().rows_within(off->pointer(), m, total, off_within->pointer(), len_within->pointer()));
    DVec inner = DVec::seq(c.result->a, m, std::move(len_within), std::move(off_within), v.elems());
    return same_shape(c.result, lens, std::move(inner));
  }

  DVec gather() {  // v -> iv
    const DVec &v = a[0], &iv = a[1];
    int64_t m = iv.total();
    DBuf ids = segment_ids(g, iv);
    DBuf pos = positions(v, ids->pointer(), iv.elems().data(), m);
    return same_shape(c.result, iv, take(g, v.elems(), pos->pointer(), m));
  }

  DVec permute() { return permute_by(a[0], a[1]); }

  /// Each instance's sequence of v permuted by its sequence of iv (checked).
  DVec permute_by(const DVec& v, const DVec& iv) {
    if (std::optional<int64_t> a = v.regular_length(), b = iv.regular_length(); a && b) {
      if (*a != *b && v.size() > 0) fail();
    } else if (g.check(g.prims().first_difference(v.lengths(), iv.lengths(), v.size())) >= 0) {
      fail();
    }
    const DVec& e = v.elems();
    int64_t m = e.size();
    if (host::is_flat_scalar(e.type())) {
      DBuf out = g.alloc(m * elem_bytes(e.type()));
      if (ctx.defers_failures && ctx.defers_failures(c.span)) {
        // The check read later (Note [Deferred failure records] in gpu.h); a failure raises the
        // host primitive's error from the arguments, kept until then. The operands are made
        // before the record is taken (a read-back in between would free it).
        const CUdeviceptr values = e.data(), positions = iv.elems().data();
        const runtime::gpu::DSegs segs = v.segs();
        CUdeviceptr word = failure_record_for_call(m * (elem_bytes(e.type()) + 8) + 16 * (v.size() + 1));
        g.check(g.prims().permute_deferred(elem_type(e.type()), values, positions, segs, out->pointer(), word));
        return same_shape(c.result, v, DVec::scalar(e.type(), m, std::move(out)));
      }
      ndp_status st = g.check(g.prims().permute(elem_type(e.type()), e.data(), iv.elems().data(), v.segs(), out->pointer()));
      if (st.code != NDP_OK) fail();
      return same_shape(c.result, v, DVec::scalar(e.type(), m, std::move(out)));
    }
    DBuf self = g.alloc(m * 8), src = g.alloc(m * 8);
    g.check(g.prims().iota(self->pointer(), m));
    ndp_status st = g.check(g.prims().permute(NDP_I64, self->pointer(), iv.elems().data(), v.segs(), src->pointer()));
    if (st.code != NDP_OK) fail();
    return same_shape(c.result, v, take(g, e, src->pointer(), m));
  }

  DVec pack_prim() {
    const DVec& v = a[0];
    const DVec& pe = v.elems();
    int64_t n = v.size();
    DBuf len = g.alloc(n * 8);
    g.check(g.prims().pack_lengths(pe.second().data(), v.segs(), len->pointer(), nullptr));
    DVec kept = pack(g, pe.first(), pe.second());  // counts the kept elements itself
    return seq_from_lengths(g, c.result, n, std::move(len), std::move(kept));
  }

  /// x ++ y per instance. Structured elements (pairs, sequences, datatypes) are taken from
  /// both element vectors, one after the other, by the positions the same append computes on
  /// their element numbers.
  std::optional<DVec> append_prim() { return append_seqs(c.result, a[0], a[1]); }

  /// prim_reverse of every sequence: each flat component of the elements reversed within its
  /// segments in one pass; elements with sequences (or functions) in them taken through the
  /// reversed positions.
  std::optional<DVec> reverse_prim() {
    const DVec& x = a[0];
    const DVec& e = x.elems();
    const DSegs s = x.segs();
    const int64_t total = e.size();
    // (zip_scalars walks one vector's components here: the second is the same vector.)
    auto reverse_leaf = [&](const DVec& u, const DVec&) -> std::optional<DVec> {
      DBuf out = g.alloc(total * elem_bytes(u.type()));
      g.check(g.prims().reverse(elem_type(u.type()), u.data(), s, out->pointer()));
      return DVec::scalar(u.type(), total, std::move(out));
    };
    if (std::optional<DVec> elems = zip_scalars(e, e, reverse_leaf)) return x.with_elems(c.result, std::move(*elems));
    DBuf from = g.alloc(total * 8), pos = g.alloc(total * 8);
    g.check(g.prims().iota(from->pointer(), total));
    g.check(g.prims().reverse(NDP_I64, from->pointer(), s, pos->pointer()));
    return x.with_elems(c.result, take(g, e, pos->pointer(), total));
  }

  /// join(v1, p1, v2, p2): each instance's v1 and v2 put at the positions p1 and p2 of one
  /// sequence: the two appended, permuted by the two position lists appended. Where the lengths
  /// differ or the positions are no permutation, the host raises JOIN's message.
  std::optional<DVec> join() {
    const DVec &v1 = a[0], &p1 = a[1], &v2 = a[2], &p2 = a[3];
    const int64_t n = v1.size();
    if (g.check(g.prims().first_difference(v1.lengths(), p1.lengths(), n)) >= 0 ||
        g.check(g.prims().first_difference(v2.lengths(), p2.lengths(), n)) >= 0)
      fail();
    std::optional<DVec> values = append_seqs(c.result, v1, v2);
    std::optional<DVec> positions = append_seqs(p1.type(), p1, p2);
    if (!values || !positions) return std::nullopt;
    return permute_by(*values, *positions);
  }

  /// Per instance, x's sequence followed by y's, as a sequence of type t.
  std::optional<DVec> append_seqs(const Type* t, const DVec& x, const DVec& y) {
    const DVec &ea = x.elems(), &eb = y.elems();
    int64_t n = x.size();
    // Elements without sequences in them: the flat components appended into segments so, in
    // one launch (Note [Gathers launched together] in batched_moves.h).
    auto append_into = [&](DSegs so) -> std::optional<DVec> {
      AppendBatch batch(g, x.segs(), y.segs(), so);
      auto leaf = [&](const DVec& u, const DVec& w) -> std::optional<DVec> { return batch.add(u, w); };
      std::optional<DVec> elems = zip_scalars(ea, eb, leaf);
      if (elems) batch.send();  // (else nothing reads what it holds)
      return elems;
    };
    if (std::optional<int64_t> la = x.regular_length(), lb = y.regular_length(); la && lb) {
      // Regular parts make a regular whole (Note [Known values]): no lengths added, no scan.
      if (std::optional<DVec> elems = append_into(DSegs{n, n * (*la + *lb), 0, *la + *lb}))
        return DVec::regular(g, t, n, *la + *lb, std::move(*elems));
    }
    flatten::KernelBody add = flatten::one_node_kernel(PrimId::Add, {int_t(), int_t()}, int_t());
    if (!ctx.kernels->available(add)) return std::nullopt;
    // A regular part's lengths are its one known length, which the kernel reads in place.
    auto lengths_of = [&](const DVec& s) {
      if (std::optional<int64_t> c = s.regular_length()) return DVec::known(g, int_t(), n, static_cast<uint64_t>(*c));
      return DVec::scalar(int_t(), n, s.buffer());
    };
    DVec lens[2] = {lengths_of(x), lengths_of(y)};
    DVec len = run_one(add, lens, int_t());
    auto [offsets, total] = segments_of_valid_lengths(g, n, len.buffer(), ea.size() + eb.size());
    DSegs so = DSegs::irregular(n, total, offsets->pointer());
    if (std::optional<DVec> elems = append_into(so))
      return DVec::seq(t, n, len.buffer(), std::move(offsets), std::move(*elems));
    const int64_t na = ea.size(), nb = eb.size();
    DBuf from_a = g.alloc(na * 8), from_b = g.alloc(nb * 8), pos = g.alloc(total * 8);
    g.check(g.prims().iota(from_a->pointer(), na));
    g.check(g.prims().iota(from_b->pointer(), nb, na));  // eb's elements follow ea's
    g.check(g.prims().append(NDP_I64, from_a->pointer(), x.segs(), from_b->pointer(), y.segs(), so, pos->pointer()));
    DVec both[2] = {ea, eb};
    DVec elems = take(g, concat(g, both), pos->pointer(), total);
    return DVec::seq(t, n, len.buffer(), std::move(offsets), std::move(elems));
  }

  DVec flatten() {
    const DVec& v = a[0];
    const DVec& inner = v.elems();
    int64_t n = v.size();
    if (std::optional<int64_t> k = v.regular_length(), len = inner.regular_length(); k && len)
      return DVec::regular(g, c.result, n, *k * *len, inner.elems());  // Note [Known values]
    // One instance's inner sequences hold every inner element, in order (a vector's rows lie
    // one after another over its elements, as DVec::seq takes one sequence to be all of its
    // elements): one regular row of them, no launch (a counting sort's flatten of its places).
    if (n == 1) return DVec::regular(g, c.result, 1, inner.elems().size(), inner.elems());
    // Sequence i's elements are those of its inner sequences, which lie together: its offset is
    // its first inner sequence's, and its length runs to its last one's end (one launch).
    DBuf len = g.alloc(n * 8), off = g.alloc((n + 1) * 8);
    g.check(g.prims().flatten_segments(inner.offsets(), v.segs(), off->pointer(), len->pointer()));
    return DVec::seq(c.result, n, std::move(len), std::move(off), inner.elems());
  }

  std::optional<DVec> rank() {
    const DVec& e = a[0].elems();
    if (!plain_scalar(e) || e.kind() == TypeKind::Bool) return std::nullopt;
    DBuf out = g.alloc(e.size() * 8);
    ndp_order order = c.id == PrimId::RankDown ? NDP_DESCENDING : NDP_ASCENDING;
    ndp_status st = g.check(g.prims().rank(elem_type(e.type()), e.data(), a[0].segs(), order, out->pointer()));
    if (st.code != NDP_OK) return std::nullopt;
    return same_shape(c.result, a[0], DVec::scalar(int_t(), e.size(), std::move(out)));
  }

  std::optional<DVec> combine() {
    const DVec &dest = a[0], &iv = a[1], &vals = a[2];
    const DVec& de = dest.elems();
    if (!plain_scalar(de)) return std::nullopt;
    if (g.check(g.prims().first_difference(iv.lengths(), vals.lengths(), iv.size())) >= 0) fail();
    int64_t m = iv.total();
    DBuf ids = segment_ids(g, iv);
    DBuf global = positions(dest, ids->pointer(), iv.elems().data(), m);
    DBuf out = g.alloc(de.size() * elem_bytes(de.type()));
    ndp_status st = g.check(g.prims().combine(op_of(c.id), elem_type(de.type()), de.data(), de.size(), global->pointer(),
                                              vals.elems().data(), m, out->pointer()));
    if (st.code == NDP_UNSUPPORTED) return std::nullopt;
    if (st.code != NDP_OK) fail();
    return same_shape(c.result, dest, DVec::scalar(de.type(), de.size(), std::move(out)));
  }

  /// hash_value (lang/eval/prims_seq.cpp) of every element of v, as uint64 on the device;
  /// nullopt where a stream or a function value is in it (the host's).
  std::optional<DBuf> value_hashes(const DVec& v) {
    int64_t n = v.size();
    DBuf out = g.alloc(n * 8);
    switch (v.kind()) {
      case TypeKind::Seq: {
        std::optional<DBuf> elems = value_hashes(v.elems());
        if (!elems) return std::nullopt;
        g.check(g.prims().hash_fold((*elems)->pointer(), v.segs(), out->pointer()));
        return out;
      }
      case TypeKind::Pair: {
        std::optional<DBuf> first = value_hashes(v.first()), second = value_hashes(v.second());
        if (!first || !second) return std::nullopt;
        g.check(g.prims().hash_pair((*first)->pointer(), (*second)->pointer(), n, out->pointer()));
        return out;
      }
      case TypeKind::Data: {
        std::optional<DBuf> fields = value_hashes(v.fields());
        if (!fields) return std::nullopt;
        g.check(g.prims().hash_data((*fields)->pointer(), n, v.type()->data->id, out->pointer()));
        return out;
      }
      default:
        if (!plain_scalar(v)) return std::nullopt;
        g.check(g.prims().hash_scalar(elem_type(v.type()), v.data(), n, out->pointer()));
        return out;
    }
  }

  /// hash(x, l) of structured values (a flat scalar's is an elementwise kernel).
  std::optional<DVec> hash() {
    std::optional<DBuf> h = value_hashes(a[0]);
    if (!h) return std::nullopt;
    int64_t n = a[0].size();
    DBuf out = g.alloc(n * 8);
    if (g.check(g.prims().hash_modulo((*h)->pointer(), a[1].data(), n, out->pointer())) >= 0) fail();
    return DVec::scalar(c.result, n, std::move(out));
  }

  /// identity / prim_default: one value from the static type, replicated.
  DVec neutral(const Type* of) {
    int64_t n = a[0].size();
    if (n == 0) return empty_of(g, *ctx.host.types, c.result);
    lang::eval::PrimCall call{c.id, c.span, c.type_args, nullptr, ctx.host.env};
    DVec one = upload(g, host::from_value(*ctx.host.types, c.result, lang::eval::identity_of_type(call, of), 1));
    return replicate_one(g, one, n);
  }

  std::optional<DVec> native() {
    if (std::optional<DVec> k = elementwise()) return k;
    switch (lang::core::prim_family(c.id)) {
      case lang::core::PrimFamily::Scan: return scan();
      case lang::core::PrimFamily::Reduce: return reduce();
      case lang::core::PrimFamily::Combine: return combine();
      default: break;
    }
    switch (c.id) {
      case PrimId::Length: return length();
      case PrimId::Dist: return dist();
      case PrimId::Index: return index();
      case PrimId::Iseq: return iseq();
      case PrimId::Elt: return elt();
      case PrimId::Rep: return rep();
      case PrimId::Join: return join();
      case PrimId::Eql: return eql_values();
      case PrimId::Select: return select_values();
      case PrimId::Partition: return partition();
      case PrimId::Write: return write();
      case PrimId::Put: return put();
      case PrimId::Gather: return gather();
      case PrimId::Permute: return permute();
      case PrimId::Pack: return pack_prim();
      case PrimId::Append: return append_prim();
      case PrimId::Flatten: return flatten();
      case PrimId::Rank: case PrimId::RankDown: return rank();
      case PrimId::MaxIndexPrim: case PrimId::MinIndexPrim: return index_of_extreme();
      case PrimId::ReversePrim: return reverse_prim();
      case PrimId::Hash: return hash();
      case PrimId::Identity: return neutral(a[0].type());
      case PrimId::PrimDefault: return neutral(a[0].type()->a);
      default: return std::nullopt;
    }
  }
};

}  // namespace

DVec apply_lifted_prim(const GpuPrimContext& ctx, const LiftedCall& c, std::span<const DVec> args) {
  NDP_ASSERT(static_cast<int>(args.size()) == lang::core::prim_info(c.id).arity, "lifted primitive with a wrong arity");
  for (const DVec& a : args) NDP_ASSERT(a.size() == args[0].size(), "lifted primitive arguments of different lengths");
  Natives nat{ctx, c, args, *ctx.gpu};
  if (std::optional<DVec> v = nat.native()) return std::move(*v);
  return host_prim(ctx, c, args);
}

}  // namespace ndp::exec::cuda
