// Native lifted sequence primitives on the runtime's segmented kernels: instance i's sequence
// is segment i. Primitives that only move data (dist, elt, rep, ->, <-, put, permute, pack,
// ++, partition, flatten) work for every element type: they compute int64 positions and move
// the elements with `take` (library.md §2.5's lifting, done once for any structure).
// Scans, reductions, rank and *_combine need scalar elements. Checks and messages are the
// interpreter's (lang/eval/prims_seq.cpp, Note [Sequence error messages]).
#include <algorithm>
#include <cctype>
#include <cstring>

#include "exec/host/convert.h"
#include "exec/host/lifted_prims.h"
#include "exec/host/parallel_loops.h"
#include "lang/diagnostics.h"
#include "lang/eval/scalar_ops.h"
#include "lang/runtime_errors.h"
#include "runtime/cpu/primitives.h"

namespace ndp::exec::host {

using lang::RuntimeErrorId;
using lang::Type;
using lang::TypeKind;
using lang::core::PrimId;

namespace {

bool plain_scalar(const Vec& v) { return is_flat_scalar(v.type()) && v.kind() != TypeKind::Stream; }

const int64_t* ints(const Vec& v) { return v.data<int64_t>(); }

/// The lengths of a sequence Vec as their own int Vec (shares the buffer).
Vec lengths_vec(const PrimContext& ctx, const Vec& s) { return Vec::scalar(ctx.types->int_(), s.size(), s.shared_buffer()); }

/// A sequence Vec with the same lengths as `like` and other elements.
Vec same_shape(const Type* t, const Vec& like, Vec elems) {
  return Vec::seq(t, like.size(), like.shared_buffer(), like.offsets_buffer(), std::move(elems));
}

/// Whether the runtime admits operator o on a scalar kind (ops.h's `supports`).
bool op_admits(runtime::Op o, TypeKind k) {
  return with_scalar(k, [&](auto tag) {
    using T = typename decltype(tag)::type;
    switch (o) {
      case runtime::Op::plus: return runtime::supports<runtime::Op::plus, T>();
      case runtime::Op::mult: return runtime::supports<runtime::Op::mult, T>();
      case runtime::Op::max: return runtime::supports<runtime::Op::max, T>();
      case runtime::Op::min: return runtime::supports<runtime::Op::min, T>();
      case runtime::Op::and_: return runtime::supports<runtime::Op::and_, T>();
      case runtime::Op::or_: return runtime::supports<runtime::Op::or_, T>();
      case runtime::Op::xor_: return runtime::supports<runtime::Op::xor_, T>();
    }
    return false;
  });
}

// ---- generators ----

/// Whether some length in an int Vec is negative (O(1) when uniform).
bool any_negative(const Vec& k) {
  if (k.is_uniform()) return k.size() > 0 && k.uniform_value<int64_t>() < 0;
  const int64_t* len = ints(k);
  return first_failing(k.size(), [&](int64_t i) { return len[i] < 0; }) >= 0;
}

Vec dist(const LiftedCall& c, const Vec& x, const Vec& k) {
  if (any_negative(k)) c.fail(message(RuntimeErrorId::DistNegativeLength));
  LengthSegs segs = segments_of(k);
  Vec elems = replicate_each(x, segs.view);
  return Vec::seq(c.result, k.size(), k.shared_buffer(), std::move(segs.offsets), std::move(elems));
}

/// Per instance k the elements start[k] + j·stride[k], j < lengths[k] (the runtime's INDEX).
Vec index_seq(const PrimContext& ctx, const LiftedCall& c, const Vec& lengths, std::span<const int64_t> start,
              std::span<const int64_t> stride) {
  int64_t n = lengths.size();
  LengthSegs segs = segments_of(lengths);
  int64_t total = segs.view.total();
  Buf<int64_t> out(total);
  check_rt(runtime::index<int64_t>(start, stride, segs.view, std::span<int64_t>(out.data(), static_cast<size_t>(total))),
           "index");
  return Vec::seq(c.result, n, lengths.shared_buffer(), std::move(segs.offsets),
                  Vec::scalar(ctx.types->int_(), total, out.share()));
}

Vec index(const PrimContext& ctx, const LiftedCall& c, const Vec& k) {
  if (any_negative(k)) c.fail(message(RuntimeErrorId::IndexNegativeLength));
  std::vector<int64_t> zero(static_cast<size_t>(k.size()), 0), one(static_cast<size_t>(k.size()), 1);
  return index_seq(ctx, c, k, zero, one);
}

Vec iseq(const PrimContext& ctx, const LiftedCall& c, const Vec& sv, const Vec& dv, const Vec& ev) {
  const int64_t *s = ints(sv), *d = ints(dv), *e = ints(ev);
  int64_t n = sv.size();
  if (first_failing(n, [&](int64_t i) { return d[i] < 1 || e[i] < s[i]; }) >= 0)
    c.fail(message(RuntimeErrorId::IseqBadRange));
  Buf<int64_t> len(n);
  parallel_for(n, [&](int64_t i) { len[i] = static_cast<int64_t>(lang::eval::range_length(s[i], d[i], e[i])); });
  return index_seq(ctx, c, Vec::scalar(ctx.types->int_(), n, len.share()), sv.values<int64_t>(), dv.values<int64_t>());
}

// ---- element access ----

/// The first instance k whose index iv[k] is outside [0, v.length(k)), or -1 (O(1) when v is
/// regular and iv uniform).
int64_t first_out_of_bounds(const Vec& v, const Vec& iv) {
  int64_t n = v.size();
  if (n == 0) return -1;
  if (v.is_regular() && iv.is_uniform()) {
    int64_t i = iv.uniform_value<int64_t>();
    return i < 0 || i >= v.regular_length() ? 0 : -1;
  }
  const int64_t* i = ints(iv);
  if (v.is_regular()) {
    int64_t len = v.regular_length();
    return first_failing(n, [&](int64_t k) { return i[k] < 0 || i[k] >= len; });
  }
  const int64_t* len = v.lengths();
  return first_failing(n, [&](int64_t k) { return i[k] < 0 || i[k] >= len[k]; });
}

/// elt where the nested sequences are regular of length c (v's inner lengths uniform): the
/// result is regular too, and instance k's elements are the c at (outer offset + index)·c.
Vec elt_regular(const LiftedCall& c, const Vec& v, const Vec& iv) {
  int64_t n = v.size();
  const Vec& inner = v.elems();
  int64_t len = inner.regular_length();
  const Vec& e = inner.elems();
  // copy(seg): instance k's elements are inner sequence seg(k).
  auto copy = [&](auto seg) {
    if (!is_flat_scalar(e.type())) {
      Indices idx(static_cast<size_t>(n * len));
      parallel_regular_runs(n, len, [&](int64_t k, int64_t from, int64_t to) {
        for (int64_t x = from; x < to; ++x) idx[static_cast<size_t>(k * len + x)] = seg(k) * len + x;
      });
      return take(e, idx);
    }
    return with_scalar(e.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> out(n * len);
      T* d = out.data();
      const T* src = e.template data<T>();
      parallel_regular_runs(n, len, [&](int64_t k, int64_t from, int64_t to) {
        copy_run(d + k * len + from, src + seg(k) * len + from, to - from);
      });
      return Vec::scalar(e.type(), n * len, out.share());
    });
  };
  // The inner sequence instance k takes is (k·K or offsets[k]) + (i or i[k]); the usual case,
  // a regular outer vector and one index for all (`halves[0]`), is a strided copy.
  Vec elems;
  if (v.is_regular() && iv.is_uniform() && is_flat_scalar(e.type()) && n * len >= kLeastGenerated && len > 0 &&
      generated_allowed()) {
    // A strided view (Note [Generated buffers]): instance k's row is row k·rows + i0 of the
    // source's.
    const int64_t rows = v.regular_length(), i0 = iv.uniform_value<int64_t>();
    auto source = std::make_shared<const Vec>(e);
    Locate locate = [source, len, rows, i0](int64_t p) {
      const int64_t k = p / len;
      return Located{source.get(), (k * rows + i0) * len + (p - k * len), (k + 1) * len};
    };
    elems = Vec::scalar(e.type(), n * len,
                        generated_view(storage_width(e.kind()), n * len, std::move(locate),
                                       Strided{source.get(), len, rows * len, i0 * len}));
  } else if (v.is_regular() && iv.is_uniform()) {
    int64_t stride = v.regular_length(), i0 = iv.uniform_value<int64_t>();
    elems = copy([=](int64_t k) { return k * stride + i0; });
  } else {
    const int64_t* off = v.offsets();
    const int64_t* i = ints(iv);
    elems = copy([=](int64_t k) { return off[k] + i[k]; });
  }
  return Vec::seq(c.result, n, uniform_buffer(len, n), std::move(elems));
}

Vec elt(const LiftedCall& c, const Vec& v, const Vec& iv) {
  if (int64_t k = first_out_of_bounds(v, iv); k >= 0)
    c.fail(message(RuntimeErrorId::SeqRefBounds, ints(iv)[k], v.length(k)));
  const Vec& inner = v.elems();
  if (inner.type()->kind == TypeKind::Seq && inner.is_regular()) return elt_regular(c, v, iv);
  const int64_t* i = ints(iv);
  const int64_t* off = v.offsets();
  int64_t n = v.size();
  if (inner.type()->kind == TypeKind::Seq && is_flat_scalar(inner.elems().type())) {
    // A sequence per instance out of nested sequences of scalars: its lengths, then its
    // elements, with no index vector (bitonic sort takes both halves of 10^6 pairs this way).
    Buf<int64_t> lens(n);
    int64_t* l = lens.data();
    const int64_t *il = inner.lengths(), *io = inner.offsets();
    parallel_for(n, [&](int64_t k) { l[k] = il[off[k] + i[k]]; });
    auto o = offsets_of(l, n);
    const int64_t* oo = o.get();
    Vec elems = with_scalar(inner.elems().kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> out(oo[n]);
      T* d = out.data();
      const T* src = inner.elems().template data<T>();
      parallel_run_pieces(n, oo, [&](int64_t k, int64_t from, int64_t to) {
        copy_run(d + oo[k] + from, src + io[off[k] + i[k]] + from, to - from);
      });
      return Vec::scalar(inner.elems().type(), oo[n], out.share());
    });
    return Vec::seq(c.result, n, lens.share(), std::move(o), std::move(elems));
  }
  Indices flat(static_cast<size_t>(n));
  parallel_for(n, [&](int64_t k) { flat[static_cast<size_t>(k)] = off[k] + i[k]; });
  return take(inner, flat);
}

Vec rep(const LiftedCall& c, const Vec& v, const Vec& x, const Vec& iv) {
  const int64_t* i = ints(iv);
  const int64_t* len = v.lengths();
  const int64_t* off = v.offsets();
  int64_t n = v.size();
  if (int64_t k = first_failing(n, [&](int64_t k) { return i[k] < 0 || i[k] >= len[k]; }); k >= 0)
    c.fail(message(RuntimeErrorId::SeqRefBounds, i[k], len[k]));
  const Vec& e = v.elems();
  int64_t total = e.size();
  if (is_flat_scalar(e.type()) && c.owns_first && v.elements_unshared()) {  // Note [Updates in place]
    with_scalar(e.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      // The buffer was made writable (Buf<T>) and only its owners' view of it is const.
      T* o = const_cast<T*>(e.data<T>());
      const T* xs = x.data<T>();
      parallel_for(n, [&](int64_t k) { o[off[k] + i[k]] = xs[k]; });
    });
    return same_shape(c.result, v, e);
  }
  if (is_flat_scalar(e.type())) {
    Vec out = with_scalar(e.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> o(total);
      if (total > 0) std::memcpy(o.data(), e.data<T>(), static_cast<size_t>(total) * sizeof(T));
      const T* xs = x.data<T>();
      // Every instance replaces one position of its own segment: the writes never collide.
      parallel_for(n, [&](int64_t k) { o[off[k] + i[k]] = xs[k]; });
      return Vec::scalar(e.type(), total, o.share());
    });
    return same_shape(c.result, v, std::move(out));
  }
  Indices idx = iota_indices(total);
  parallel_for(n, [&](int64_t k) { idx[static_cast<size_t>(off[k] + i[k])] = total + k; });
  return same_shape(c.result, v, take(append(e, x), idx));
}

// ---- scans and reductions ----

std::optional<Vec> scan(const LiftedCall& c, const Vec& v) {
  const Vec& e = v.elems();
  runtime::Op o = *scan_op(c.id);
  if (!plain_scalar(e) || !op_admits(o, e.kind())) return std::nullopt;
  Vec out = with_scalar(e.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> r(e.size());
    check_rt(runtime::seg_scan<T>(o, runtime::ScanKind::exclusive, e.values<T>(), v.segs(),
                             std::span<T>(r.data(), static_cast<size_t>(e.size()))),
             "seg_scan");
    return Vec::scalar(e.type(), e.size(), r.share());
  });
  return same_shape(c.result, v, std::move(out));
}

std::optional<Vec> reduce(const LiftedCall& c, const Vec& v) {
  const Vec& e = v.elems();
  runtime::Op o = *scan_op(c.id);
  if (!plain_scalar(e) || !op_admits(o, e.kind())) return std::nullopt;
  return with_scalar(e.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> r(v.size());
    check_rt(runtime::seg_reduce<T>(o, e.values<T>(), v.segs(), std::span<T>(r.data(), static_cast<size_t>(v.size()))),
             "seg_reduce");
    return Vec::scalar(c.result, v.size(), r.share());
  });
}

/// prim_max_index / prim_min_index of every sequence (runtime::seg_index_of_extreme).
std::optional<Vec> index_of_extreme(const LiftedCall& c, const Vec& v) {
  const Vec& e = v.elems();
  runtime::Op o = *scan_op(*lang::core::index_of_extreme(c.id));
  if (!plain_scalar(e) || !op_admits(o, e.kind())) return std::nullopt;
  return with_scalar(e.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<int64_t> r(v.size());
    check_rt(runtime::seg_index_of_extreme<T>(o, e.values<T>(), v.segs(),
                                              std::span<int64_t>(r.data(), static_cast<size_t>(v.size()))),
             "seg_index_of_extreme");
    return Vec::scalar(c.result, v.size(), r.share());
  });
}

// ---- reordering ----

Vec gather(const LiftedCall& c, const Vec& v, const Vec& iv) {
  const Vec& ie = iv.elems();
  const int64_t* i = ints(ie);
  const int64_t* vlen = v.lengths();
  const int64_t* voff = v.offsets();
  Indices seg = segment_ids(iv.segs());
  int64_t m = ie.size();
  auto length_at = [&](int64_t p) { return vlen[seg[static_cast<size_t>(p)]]; };
  if (int64_t p = first_failing(m, [&](int64_t p) { return i[p] < 0 || i[p] >= length_at(p); }); p >= 0)
    c.fail(message(RuntimeErrorId::GatherBounds, i[p], length_at(p)));
  Indices flat(static_cast<size_t>(m));
  parallel_for(m, [&](int64_t p) { flat[static_cast<size_t>(p)] = voff[seg[static_cast<size_t>(p)]] + i[p]; });
  return same_shape(c.result, iv, take(v.elems(), flat));
}

/// Scatters `vals` (shape sv, relative indices idx, already checked) into a copy of the
/// sequences d; where several positions hit one target the later one wins.
Vec scatter_into(const LiftedCall& c, const Vec& d, const Vec& vals, const int64_t* idx, runtime::SegView sv) {
  const Vec& de = d.elems();
  int64_t dtot = de.size(), m = vals.size();
  std::span<const int64_t> is(idx, static_cast<size_t>(m));
  if (is_flat_scalar(de.type())) {
    Vec out = with_scalar(de.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> o(dtot);
      std::span<T> os(o.data(), static_cast<size_t>(dtot));
      check_rt(runtime::dpermute<T>(vals.values<T>(), is, sv, de.values<T>(), d.segs(), os), "dpermute");
      return Vec::scalar(de.type(), dtot, o.share());
    });
    return same_shape(c.result, d, std::move(out));
  }
  // Structured elements: scatter source positions (d's own, or dtot + p for vals[p]).
  std::vector<int64_t> src(static_cast<size_t>(m)), keep(static_cast<size_t>(dtot)), pos(static_cast<size_t>(dtot));
  parallel_for(m, [&](int64_t p) { src[static_cast<size_t>(p)] = dtot + p; });
  parallel_for(dtot, [&](int64_t q) { keep[static_cast<size_t>(q)] = q; });
  check_rt(runtime::dpermute<int64_t>(src, is, sv, keep, d.segs(), pos), "dpermute");
  return same_shape(c.result, d, take(append(de, vals), pos));
}

Vec write(const LiftedCall& c, const Vec& d, const Vec& pairs) {
  const Vec& pe = pairs.elems();
  const int64_t* i = ints(pe.first());
  const int64_t* dlen = d.lengths();
  const Vec& de = d.elems();
  if (is_flat_scalar(de.type())) {
    // The runtime checks every index against its own segment's length while it scatters, so
    // no segment id per element is needed first (the sieve's `<-` has 2.4·10^7 of them).
    Vec out = with_scalar(de.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      int64_t dtot = de.size();
      Buf<T> o(dtot);
      runtime::Status st = runtime::dpermute<T>(pe.second().values<T>(), pe.first().values<int64_t>(), pairs.segs(),
                                      de.values<T>(), d.segs(), std::span<T>(o.data(), static_cast<size_t>(dtot)));
      if (st.code == NDP_INDEX_OUT_OF_BOUNDS) c.fail(message(RuntimeErrorId::WriteBounds, st.index, st.length));
      check_rt(st, "dpermute");
      return Vec::scalar(de.type(), dtot, o.share());
    });
    return same_shape(c.result, d, std::move(out));
  }
  Indices seg = segment_ids(pairs.segs());
  auto length_at = [&](int64_t p) { return dlen[seg[static_cast<size_t>(p)]]; };
  if (int64_t p = first_failing(pe.size(), [&](int64_t p) { return i[p] < 0 || i[p] >= length_at(p); }); p >= 0)
    c.fail(message(RuntimeErrorId::WriteBounds, i[p], length_at(p)));
  return scatter_into(c, d, pe.second(), i, pairs.segs());
}

Vec put(const LiftedCall& c, const Vec& v, const Vec& iv, const Vec& d) {
  const int64_t* i = ints(iv.elems());
  const int64_t* dlen = d.lengths();
  int64_t n = v.size();
  Indices seg = segment_ids(iv.segs());
  int64_t mismatch = first_failing(n, [&](int64_t k) { return v.length(k) != iv.length(k); });
  int64_t bad = first_failing(iv.elems().size(),
                              [&](int64_t p) { return i[p] < 0 || i[p] >= dlen[seg[static_cast<size_t>(p)]]; });
  int64_t bad_instance = bad < 0 ? -1 : seg[static_cast<size_t>(bad)];
  // Within one instance the length check comes first, as in the interpreter.
  if (mismatch >= 0 && (bad_instance < 0 || mismatch <= bad_instance))
    c.fail(message(RuntimeErrorId::PutLengthMismatch, v.length(mismatch), iv.length(mismatch)));
  if (bad_instance >= 0) c.fail(message(RuntimeErrorId::WriteBounds, i[bad], dlen[bad_instance]));
  return scatter_into(c, d, v.elems(), i, iv.segs());
}

Vec permute(const LiftedCall& c, const Vec& v, const Vec& iv) {
  const char* msg = message(RuntimeErrorId::PermuteBadArguments);
  if (first_failing(v.size(), [&](int64_t k) { return v.length(k) != iv.length(k); }) >= 0) c.fail(msg);
  const Vec& e = v.elems();
  std::span<const int64_t> is = iv.elems().values<int64_t>();
  int64_t m = e.size();
  if (is_flat_scalar(e.type())) {
    Vec out = with_scalar(e.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> o(m);
      if (!runtime::ok(runtime::permute<T>(e.values<T>(), is, v.segs(), std::span<T>(o.data(), static_cast<size_t>(m)))))
        c.fail(msg);
      return Vec::scalar(e.type(), m, o.share());
    });
    return same_shape(c.result, v, std::move(out));
  }
  const Indices self = iota_indices(m);
  Indices src(static_cast<size_t>(m));
  if (!runtime::ok(runtime::permute<int64_t>(self, is, v.segs(), std::span<int64_t>(src.data(), src.size())))) c.fail(msg);
  return same_shape(c.result, v, take(e, src));
}

// ---- selection and building ----

Vec pack_prim(const LiftedCall& c, const Vec& v) {
  const Vec& pe = v.elems();
  const bool* flags = pe.second().data<bool>();
  int64_t n = v.size();
  Buf<int64_t> len(n);
  int64_t total = 0;
  check_rt(runtime::pack_lengths(std::span<const bool>(flags, static_cast<size_t>(pe.size())), v.segs(),
                            std::span<int64_t>(len.data(), static_cast<size_t>(n)), &total),
           "pack_lengths");
  return Vec::seq(c.result, n, len.share(), pack(pe.first(), flags));
}

Vec append_prim(const LiftedCall& c, const Vec& a, const Vec& b) {
  int64_t n = a.size();
  if (a.is_regular() && b.is_regular() && is_flat_scalar(a.elems().type())) {
    // Regular ++ regular is regular: the runtime's append over regular descriptors, no arrays.
    int64_t len = a.regular_length() + b.regular_length();
    runtime::SegView so = runtime::SegView::regular(n, len);
    const Vec &ea = a.elems(), &eb = b.elems();
    Vec out = with_scalar(ea.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> o(n * len);
      check_rt(runtime::append<T>(ea.values<T>(), a.segs(), eb.values<T>(), b.segs(), so,
                             std::span<T>(o.data(), static_cast<size_t>(n * len))),
               "append");
      return Vec::scalar(ea.type(), n * len, o.share());
    });
    return Vec::seq(c.result, n, uniform_buffer(len, n), std::move(out));
  }
  Buf<int64_t> len(n);
  check_rt(runtime::append_lengths(a.segs(), b.segs(), std::span<int64_t>(len.data(), static_cast<size_t>(n))),
           "append_lengths");
  auto off = offsets_of(len.data(), n);
  runtime::SegView so(ndp_segdes_irregular(n, len.data(), off.get()));
  const Vec &ea = a.elems(), &eb = b.elems();
  int64_t total = off[n];
  if (is_flat_scalar(ea.type())) {
    Vec out = with_scalar(ea.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> o(total);
      check_rt(runtime::append<T>(ea.values<T>(), a.segs(), eb.values<T>(), b.segs(), so,
                             std::span<T>(o.data(), static_cast<size_t>(total))),
               "append");
      return Vec::scalar(ea.type(), total, o.share());
    });
    return Vec::seq(c.result, n, len.share(), std::move(off), std::move(out));
  }
  Indices seg = segment_ids(so);
  Indices idx(static_cast<size_t>(total));
  const int64_t *la = a.lengths(), *oa = a.offsets(), *ob = b.offsets();
  int64_t ta = ea.size();
  parallel_for(total, [&](int64_t p) {
    int64_t k = seg[static_cast<size_t>(p)], j = p - off[k];
    idx[static_cast<size_t>(p)] = j < la[k] ? oa[k] + j : ta + ob[k] + (j - la[k]);
  });
  return Vec::seq(c.result, n, len.share(), std::move(off), take(append(ea, eb), idx));
}

// ---- nesting ----

Vec partition(const LiftedCall& c, const Vec& v, const Vec& counts) {
  int64_t n = v.size();
  const Vec& ce = counts.elems();
  if (n > 0 && v.is_regular() && counts.is_regular() && ce.is_uniform()) {
    // Every instance cuts the same length L into k pieces of c (a split into equal halves):
    // one check, and the pieces are regular (their lengths buffer is the uniform counts').
    int64_t k = counts.regular_length(), piece = ce.uniform_value<int64_t>();
    if (k > 0 && piece < 0) c.fail(message(RuntimeErrorId::PartitionNegativeLength));
    if (static_cast<__int128>(k) * piece != v.regular_length())
      c.fail(message(RuntimeErrorId::PartitionLengthMismatch));
    return same_shape(c.result, counts, Vec::seq(c.result->a, ce.size(), ce.shared_buffer(), v.elems()));
  }
  const int64_t* cn = ints(counts.elems());
  const int64_t* co = counts.offsets();
  // Per instance: 1 = a negative count, 2 = counts not summing to the length (checked in
  // this order, as the interpreter does), 0 = fine.
  std::vector<uint8_t> why(static_cast<size_t>(n), 0);
  parallel_for(n, [&](int64_t k) {
    __int128 sum = 0;
    for (int64_t p = co[k]; p < co[k + 1]; ++p) {
      if (cn[p] < 0) {
        why[static_cast<size_t>(k)] = 1;
        return;
      }
      sum += cn[p];
    }
    if (sum != v.length(k)) why[static_cast<size_t>(k)] = 2;
  });
  int64_t bad = first_failing(n, [&](int64_t k) { return why[static_cast<size_t>(k)] != 0; });
  if (bad >= 0)
    c.fail(message(why[static_cast<size_t>(bad)] == 1 ? RuntimeErrorId::PartitionNegativeLength
                                                      : RuntimeErrorId::PartitionLengthMismatch));
  Vec inner = Vec::seq(c.result->a, ce.size(), ce.shared_buffer(), v.elems());
  return same_shape(c.result, counts, std::move(inner));
}

Vec flatten(const LiftedCall& c, const Vec& v) {
  int64_t n = v.size();
  const Vec& inner = v.elems();
  // Regular sequences of K regular sequences of c: regular sequences of K·c, no arrays at all.
  if (v.is_regular() && inner.is_regular())
    return Vec::seq(c.result, n, uniform_buffer(v.regular_length() * inner.regular_length(), n), inner.elems());
  const int64_t* oo = v.offsets();
  const int64_t* io = inner.offsets();
  std::shared_ptr<int64_t[]> off = new_offsets(n);
  Buf<int64_t> len(n);
  parallel_for(n + 1, [&](int64_t k) { off[k] = io[oo[k]]; });
  parallel_for(n, [&](int64_t k) { len[k] = off[k + 1] - off[k]; });
  return Vec::seq(c.result, n, len.share(), std::move(off), inner.elems());
}

/// prim_reverse of every sequence: elements of a flat scalar type reversed within their
/// segments in one pass (runtime::reverse); others taken through the reversed positions.
Vec reverse_prim(const LiftedCall& c, const Vec& v) {
  const Vec& e = v.elems();
  const int64_t total = e.size();
  if (plain_scalar(e) && e.kind() != TypeKind::Fn) {
    return same_shape(c.result, v, with_scalar(e.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      Buf<T> out(total);
      check_rt(runtime::reverse<T>(e.values<T>(), v.segs(), std::span<T>(out.data(), static_cast<size_t>(total))), "reverse");
      return Vec::scalar(e.type(), total, out.share());
    }));
  }
  const Indices from = iota_indices(total);
  Indices pos(static_cast<size_t>(total));
  check_rt(runtime::reverse<int64_t>(from, v.segs(), std::span<int64_t>(pos.data(), pos.size())), "reverse");
  return same_shape(c.result, v, take(e, pos));
}

// ---- ordering ----

std::optional<Vec> rank(const PrimContext& ctx, const LiftedCall& c, const Vec& v) {
  const Vec& e = v.elems();
  if (!plain_scalar(e) || e.kind() == TypeKind::Bool) return std::nullopt;
  runtime::Order order = c.id == PrimId::RankDown ? runtime::Order::descending : runtime::Order::ascending;
  Buf<int64_t> r(e.size());
  with_scalar(e.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    check_rt(runtime::rank<T>(e.values<T>(), v.segs(), order, std::span<int64_t>(r.data(), static_cast<size_t>(e.size()))),
             "rank");
  });
  return same_shape(c.result, v, Vec::scalar(ctx.types->int_(), e.size(), r.share()));
}

// ---- irregular reduction ----

std::optional<Vec> combine(const LiftedCall& c, const Vec& dest, const Vec& iv, const Vec& vals) {
  const Vec& de = dest.elems();
  runtime::Op o = *scan_op(c.id);
  if (!plain_scalar(de) || !op_admits(o, de.kind())) return std::nullopt;
  std::string name = lang::core::prim_info(c.id).name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::toupper(ch); });
  int64_t n = dest.size();
  const int64_t* i = ints(iv.elems());
  const int64_t* dlen = dest.lengths();
  const int64_t* ioff = iv.offsets();
  Indices seg = segment_ids(iv.segs());
  int64_t mismatch = first_failing(n, [&](int64_t k) { return iv.length(k) != vals.length(k); });
  int64_t bad = first_failing(iv.elems().size(),
                              [&](int64_t p) { return i[p] < 0 || i[p] >= dlen[seg[static_cast<size_t>(p)]]; });
  int64_t bad_instance = bad < 0 ? -1 : seg[static_cast<size_t>(bad)];
  if (mismatch >= 0 && (bad_instance < 0 || mismatch <= bad_instance))
    c.fail(message(RuntimeErrorId::CombineLengthMismatch, name));
  if (bad_instance >= 0)
    c.fail(message(RuntimeErrorId::CombineBounds, name, i[bad], bad - ioff[bad_instance], dlen[bad_instance]));
  int64_t m = iv.elems().size();
  const int64_t* doff = dest.offsets();
  Indices global(static_cast<size_t>(m));
  parallel_for(m, [&](int64_t p) { global[static_cast<size_t>(p)] = doff[seg[static_cast<size_t>(p)]] + i[p]; });
  Vec out = with_scalar(de.kind(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    Buf<T> r(de.size());
    check_rt(runtime::combine<T>(o, de.values<T>(), global, vals.elems().values<T>(),
                            std::span<T>(r.data(), static_cast<size_t>(de.size()))),
             "combine");
    return Vec::scalar(de.type(), de.size(), r.share());
  });
  return same_shape(c.result, dest, std::move(out));
}

// ---- identities ----

/// identity / prim_default: the neutral value depends only on the static type, so it is
/// computed once (by the interpreter's identity_of_type) and replicated.
Vec neutral(const PrimContext& ctx, const LiftedCall& c, const Type* of, int64_t n) {
  if (n == 0) return from_values(*ctx.types, c.result, {});
  lang::eval::PrimCall call{c.id, c.span, c.type_args, nullptr, ctx.env};
  return from_value(*ctx.types, c.result, lang::eval::identity_of_type(call, of), n);
}

}  // namespace

void check_rt(const runtime::Status& st, const char* what) {
  if (!runtime::ok(st))
    throw lang::InternalError(std::string("internal error: cpu backend: runtime ") + what + " failed (" +
                              ndp_status_name(st.code) + ")");
}

std::optional<runtime::Op> scan_op(PrimId id) {
  switch (lang::core::prim_operator(id)) {
    case lang::core::PrimOperator::Plus: return runtime::Op::plus;
    case lang::core::PrimOperator::Mult: return runtime::Op::mult;
    case lang::core::PrimOperator::Max: return runtime::Op::max;
    case lang::core::PrimOperator::Min: return runtime::Op::min;
    case lang::core::PrimOperator::And: return runtime::Op::and_;
    case lang::core::PrimOperator::Or: return runtime::Op::or_;
    case lang::core::PrimOperator::Xor: return runtime::Op::xor_;
    case lang::core::PrimOperator::None: break;
  }
  return std::nullopt;
}

std::optional<Vec> native_seq_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> a) {
  switch (lang::core::prim_family(c.id)) {
    case lang::core::PrimFamily::Scan: return scan(c, a[0]);
    case lang::core::PrimFamily::Reduce: return reduce(c, a[0]);
    case lang::core::PrimFamily::Combine: return combine(c, a[0], a[1], a[2]);
    default: break;
  }
  switch (c.id) {
    case PrimId::Length: return lengths_vec(ctx, a[0]);
    case PrimId::Dist: return dist(c, a[0], a[1]);
    case PrimId::Index: return index(ctx, c, a[0]);
    case PrimId::Iseq: return iseq(ctx, c, a[0], a[1], a[2]);
    case PrimId::Elt: return elt(c, a[0], a[1]);
    case PrimId::Rep: return rep(c, a[0], a[1], a[2]);
    case PrimId::Gather: return gather(c, a[0], a[1]);
    case PrimId::Write: return write(c, a[0], a[1]);
    case PrimId::Put: return put(c, a[0], a[1], a[2]);
    case PrimId::Permute: return permute(c, a[0], a[1]);
    case PrimId::Pack: return pack_prim(c, a[0]);
    case PrimId::Append: return append_prim(c, a[0], a[1]);
    case PrimId::Partition: return partition(c, a[0], a[1]);
    case PrimId::Flatten: return flatten(c, a[0]);
    case PrimId::Rank: case PrimId::RankDown: return rank(ctx, c, a[0]);
    case PrimId::MaxIndexPrim: case PrimId::MinIndexPrim: return index_of_extreme(c, a[0]);
    case PrimId::ReversePrim: return reverse_prim(c, a[0]);
    case PrimId::Identity: return neutral(ctx, c, a[0].type(), a[0].size());
    case PrimId::PrimDefault: return neutral(ctx, c, a[0].type()->a, a[0].size());
    default: return std::nullopt;
  }
}

}  // namespace ndp::exec::host
