// interleave and merge_flags (vec.h): instances drawn from several Vecs in one pass.
//
// Both used to be `take(concat(parts), idx)`: a copy of every part, an int64 index per
// instance, then a second copy. Here scalars are written straight to their place, and
// sequences of scalars are copied segment by segment from the part they come from; only
// sequences of structured elements still build the element index (and only for the elements).
#include <algorithm>
#include <cstring>

#include "exec/host/parallel_loops.h"
#include "exec/host/vec.h"
#include "lang/diagnostics.h"

namespace ndp::exec::host {

using lang::Type;
using lang::TypeKind;

namespace {

/// The old, general form for sequences of structured elements: element p of the result is
/// element src(p) of the concatenation of the parts' elements.
template <class Source>
Vec gather_elements(std::span<const Vec> parts, const int64_t* len, const int64_t* off, int64_t m, Source&& src) {
  std::vector<Vec> elems;
  std::vector<int64_t> base;  // where each part's elements start in their concatenation
  int64_t b = 0;
  for (const Vec& p : parts) {
    elems.push_back(p.elems());
    base.push_back(b);
    b += p.elems().size();
  }
  Indices seg = segment_ids(runtime::SegView(ndp_segdes_irregular(m, len, off)));
  Indices idx(seg.size());
  parallel_for(static_cast<int64_t>(seg.size()), [&](int64_t q) {
    int64_t i = seg[static_cast<size_t>(q)];
    auto [part, first] = src(i);  // the part and element position where instance i starts
    idx[static_cast<size_t>(q)] = base[static_cast<size_t>(part)] + first + (q - off[i]);
  });
  return take(concat(elems), idx);
}

/// Row i of o is row i of a, then row i of b (n rows of C elements each): [x, y] of two regular
/// sequences of short rows (the deep levels of Batcher's merge, [lows, highs]), a loop the
/// compiler unrolls, where a copy a row cost two calls.
template <int64_t C, class T>
void interleave_two_rows(T* o, const T* a, const T* b, int64_t n) {
  parallel_for(n, [&](int64_t i) {
    for (int64_t x = 0; x < C; ++x) o[2 * C * i + x] = a[C * i + x];
    for (int64_t x = 0; x < C; ++x) o[2 * C * i + C + x] = b[C * i + x];
  });
}

/// interleave_two_rows for c a power of two below kLeastGeneratedRun; false for any other c.
template <class T>
bool interleave_two_short_rows(T* o, const T* a, const T* b, int64_t n, int64_t c) {
  switch (c) {
    case 2: interleave_two_rows<2>(o, a, b, n); return true;
    case 4: interleave_two_rows<4>(o, a, b, n); return true;
    case 8: interleave_two_rows<8>(o, a, b, n); return true;
    default: return false;
  }
}

/// interleave of regular sequences of one length c: regular again, and instance i's k·c
/// elements are run i of every part in turn, so the copy needs neither lengths nor offsets.
Vec interleave_regular(std::span<const Vec> parts) {
  const Type* t = parts[0].type();
  const int64_t n = parts[0].size(), k = static_cast<int64_t>(parts.size());
  const int64_t c = parts[0].regular_length();
  const Vec& e0 = parts[0].elems();
  Vec elems;
  if (c == 1) {
    // One element per sequence (the leaves of a recursion): the elements interleave as they are.
    elems = interleave(map_parts(parts, [](const Vec& p) { return p.elems(); }));
  } else if (is_flat_scalar(e0.type()) && n * k * c >= kLeastGenerated && c >= kLeastGeneratedRun && generated_allowed()) {
    // A view (Note [Generated buffers]): a recursion's next level reads it in place (Batcher's
    // halves of [lows, highs]), and only its last is stored. Row q of the result is row q / k
    // of part q % k.
    auto sources = std::make_shared<std::vector<Vec>>(map_parts(parts, [](const Vec& p) { return p.elems(); }));
    Locate locate = [sources, k, c](int64_t p) {
      const int64_t q = p / c;
      return Located{&(*sources)[static_cast<size_t>(q % k)], (q / k) * c + (p - q * c), (q + 1) * c};
    };
    elems = Vec::scalar(e0.type(), n * k * c, generated_view(storage_width(e0.kind()), n * k * c, std::move(locate)));
  } else if (is_flat_scalar(e0.type())) {
    elems = with_scalar(e0.kind(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      std::vector<const T*> data(parts.size());
      for (size_t j = 0; j < parts.size(); ++j) data[j] = parts[j].elems().template data<T>();
      Buf<T> out(n * k * c);
      T* o = out.data();
      if (k == 2 && interleave_two_short_rows(o, data[0], data[1], n, c)) return Vec::scalar(e0.type(), n * k * c, out.share());
      // Pieces [from, to) of instance i's output; part j fills [j·c, (j + 1)·c) of it.
      parallel_regular_runs(n, k * c, [&](int64_t i, int64_t from, int64_t to) {
        for (int64_t j = from / c; j < k && j * c < to; ++j) {
          int64_t lo = std::max(from, j * c), hi = std::min(to, (j + 1) * c);
          copy_run(o + i * k * c + lo, data[static_cast<size_t>(j)] + i * c + (lo - j * c), hi - lo);
        }
      });
      return Vec::scalar(e0.type(), n * k * c, out.share());
    });
  } else {
    std::vector<Vec> all = map_parts(parts, [](const Vec& p) { return p.elems(); });
    Indices idx(static_cast<size_t>(n * k * c));
    const int64_t part_size = n * c;  // every part holds n·c elements
    parallel_regular_runs(n * k, c, [&](int64_t q, int64_t from, int64_t to) {
      for (int64_t x = from; x < to; ++x) idx[static_cast<size_t>(q * c + x)] = (q % k) * part_size + (q / k) * c + x;
    });
    elems = take(concat(all), idx);
  }
  return Vec::seq(t, n * k, uniform_buffer(c, n * k), std::move(elems));
}

}  // namespace

Vec interleave(std::span<const Vec> parts) {
  NDP_ASSERT(!parts.empty(), "interleave of no parts");
  const Type* t = parts[0].type();
  const int64_t n = parts[0].size();
  const int64_t k = static_cast<int64_t>(parts.size());
  for (const Vec& p : parts) NDP_ASSERT(p.size() == n, "interleave of parts of different lengths");
  if (k == 1) return parts[0];
  auto children = [&](auto get) { return map_parts(parts, get); };
  switch (t->kind) {
    case TypeKind::Seq: {
      if (same_uniform(parts)) return interleave_regular(parts);
      // Raw pointers per part, so the loops below do not reload them through the Vecs.
      std::vector<const int64_t*> lens(parts.size()), offs(parts.size());
      for (size_t j = 0; j < parts.size(); ++j) {
        lens[j] = parts[j].lengths();
        offs[j] = parts[j].offsets();
      }
      Buf<int64_t> len(n * k);
      int64_t* l = len.data();
      parallel_for(n, [&](int64_t i) {
        for (int64_t j = 0; j < k; ++j) l[i * k + j] = lens[static_cast<size_t>(j)][i];
      });
      auto off = offsets_of(l, n * k);
      const Vec& e0 = parts[0].elems();
      Vec elems;
      if (is_flat_scalar(e0.type())) {
        elems = with_scalar(e0.kind(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          std::vector<const T*> data(parts.size());
          for (size_t j = 0; j < parts.size(); ++j) data[j] = parts[j].elems().template data<T>();
          Buf<T> out(off[n * k]);
          T* o = out.data();
          const int64_t* oo = off.get();
          parallel_run_pieces(n * k, oo, [&](int64_t q, int64_t from, int64_t to) {
            // Run q is part j of instance i (q = i·k + j).
            const int64_t i = q / k;
            const size_t u = static_cast<size_t>(q - i * k);
            copy_run(o + oo[q] + from, data[u] + offs[u][i] + from, to - from);
          });
          return Vec::scalar(e0.type(), off[n * k], out.share());
        });
      } else {
        elems = gather_elements(parts, l, off.get(), n * k, [&](int64_t q) {
          return std::pair<int64_t, int64_t>(q % k, offs[static_cast<size_t>(q % k)][q / k]);
        });
      }
      return Vec::seq(t, n * k, len.share(), std::move(off), std::move(elems));
    }
    case TypeKind::Pair:
      return Vec::pair(t, interleave(children([](const Vec& p) { return p.first(); })),
                       interleave(children([](const Vec& p) { return p.second(); })));
    case TypeKind::Data: return Vec::data(t, interleave(children([](const Vec& p) { return p.fields(); })));
    case TypeKind::Var: return Vec::open_type(t, n * k);
    default:
      if (same_uniform(parts)) return broadcast_first(parts[0], n * k);
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<const T*> data(parts.size());
        for (size_t j = 0; j < parts.size(); ++j) data[j] = parts[j].template data<T>();
        Buf<T> out(n * k);
        T* o = out.data();
        if (k == 2) {  // the common case (two recursive calls), unrolled
          const T *d0 = data[0], *d1 = data[1];
          parallel_for(n, [&](int64_t i) {
            o[2 * i] = d0[i];
            o[2 * i + 1] = d1[i];
          });
        } else {
          parallel_for(n, [&](int64_t i) {
            for (int64_t j = 0; j < k; ++j) o[i * k + j] = data[static_cast<size_t>(j)][i];
          });
        }
        return Vec::scalar(t, n * k, out.share());
      });
  }
}

// ---- merge ----

FlagSplit::FlagSplit(const bool* flags, int64_t n) : flags_(flags), n_(n) {
  // Fixed blocks, a count per block, so each block knows where its a's and b's start.
  blocks_ = parallel_blocks(n);
  a_start_.assign(static_cast<size_t>(blocks_) + 1, 0);
  parallel_blocks_for(blocks_, [&](int64_t b) {
    int64_t c = 0;
    for (int64_t i = begin(b), e = begin(b + 1); i < e; ++i) c += flags[i];
    a_start_[static_cast<size_t>(b) + 1] = c;
  });
  for (int64_t b = 0; b < blocks_; ++b) a_start_[static_cast<size_t>(b) + 1] += a_start_[static_cast<size_t>(b)];
}

namespace {

/// fn(i, from_a, j) for every instance i in order, j its position in a (from_a) or in b.
template <class Fn>
void for_each_source(const FlagSplit& s, Fn&& fn) {
  const bool* f = s.flags();
  parallel_blocks_for(s.blocks(), [&](int64_t b) {
    int64_t ia = s.a_start(b), ib = s.begin(b) - ia;
    for (int64_t i = s.begin(b), e = s.begin(b + 1); i < e; ++i) {
      if (f[i]) fn(i, true, ia++);
      else fn(i, false, ib++);
    }
  });
}

}  // namespace

Vec merge_flags(const FlagSplit& s, const Vec& a, const Vec& b) {
  const Type* t = a.type();
  const int64_t n = s.size();
  NDP_ASSERT(s.a_count() == a.size() && n - s.a_count() == b.size(), "merge of vectors that do not match their flags");
  switch (t->kind) {
    case TypeKind::Seq: {
      Buf<int64_t> len(n);
      int64_t* l = len.data();
      const int64_t *la = a.lengths(), *lb = b.lengths();
      const int64_t *oa = a.offsets(), *ob = b.offsets();
      // Where each instance's elements start in a or b (which one: the flag).
      std::vector<int64_t> start(static_cast<size_t>(n));
      for_each_source(s, [&](int64_t i, bool from_a, int64_t j) {
        l[i] = from_a ? la[j] : lb[j];
        start[static_cast<size_t>(i)] = from_a ? oa[j] : ob[j];
      });
      auto off = offsets_of(len.data(), n);
      const Vec& ea = a.elems();
      Vec elems;
      if (is_flat_scalar(ea.type())) {
        elems = with_scalar(ea.kind(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          Buf<T> out(off[n]);
          T* o = out.data();
          const int64_t* oo = off.get();
          const T *da = ea.data<T>(), *db = b.elems().data<T>();
          const bool* f = s.flags();
          parallel_run_pieces(n, oo, [&](int64_t i, int64_t from, int64_t to) {
            copy_run(o + oo[i] + from, (f[i] ? da : db) + start[static_cast<size_t>(i)] + from, to - from);
          });
          return Vec::scalar(ea.type(), off[n], out.share());
        });
      } else {
        Vec parts[2] = {a, b};
        const bool* f = s.flags();
        elems = gather_elements(parts, l, off.get(), n, [&](int64_t i) {
          return std::pair<int64_t, int64_t>(f[i] ? 0 : 1, start[static_cast<size_t>(i)]);
        });
      }
      return Vec::seq(t, n, len.share(), std::move(off), std::move(elems));
    }
    case TypeKind::Pair: return Vec::pair(t, merge_flags(s, a.first(), b.first()), merge_flags(s, a.second(), b.second()));
    case TypeKind::Data: return Vec::data(t, merge_flags(s, a.fields(), b.fields()));
    case TypeKind::Var: return Vec::open_type(t, n);
    default: {
      Vec parts[2] = {a, b};
      if (same_uniform(parts) && n > 0) return broadcast_first(a.size() > 0 ? a : b, n);
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Buf<T> out(n);
        T* o = out.data();
        const T *da = a.data<T>(), *db = b.data<T>();
        for_each_source(s, [&](int64_t i, bool from_a, int64_t j) { o[i] = from_a ? da[j] : db[j]; });
        return Vec::scalar(t, n, out.share());
      });
    }
  }
}

}  // namespace ndp::exec::host
