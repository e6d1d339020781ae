// Sequence primitives (library.md §4–§11, extensions.md §3–§4): generators, element access,
// scans and reductions, gather/scatter, packing, nesting, ranking, strings, *_combine.
//
// Note [Sequence error messages]
// CMU's messages (Appendix B) where CMU checks. ndp-only checks use (the texts live in
// lang/runtime_errors.def, which every backend raises them from):
//   dist / index with a negative length     `Negative length in function DIST.` (`... INDEX.`)
//   rep with a bad index                    `Sequence reference (a[i]) out of bounds: index I, length N.`
//   put with #v /= #i                       `Length mismatch in function PUT: lengths #v and #i.`
//   put with a bad index                    `Index out of bounds for function <-: index I, length N.`
//   permute: lengths, bounds, duplicates    `Bad arguments to function PERMUTE.`
//   join: lengths, or positions that are    `Bad arguments to function JOIN.`
//     not a permutation of [0, #v1+#v2)
//   partition with a negative count         `Negative length in function PARTITION.`
//   exp_string with negative digits         `In function exp_string, digits_after_point is negative.`
//   *_combine with #idx /= #vals            `Length mismatch in function PLUS_COMBINE.` (etc.)
//   *_combine with a bad index              `Index out of bounds for function PLUS_COMBINE:
//                                            index I at position P, length N.`
// Collisions in `<-`, `put` and `*_combine` resolve in ascending source position (the last
// write wins; combine folds in that order).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "include/ndp/memory_limit.h"
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"
#include "lang/eval/rand.h"
#include "lang/eval/scalar_ops.h"
#include "lang/runtime_errors.h"

namespace ndp::lang::eval {

using core::PrimId;

namespace {

using Op = core::PrimOperator;
using Identity = core::PrimIdentity;

[[noreturn]] void bad_element(const PrimCall& c, ValueKind k) {
  throw InternalError(std::string("internal error: primitive ") + core::prim_info(c.id).name +
                      " applied to elements of kind " + kind_name(k));
}

ValueKind kind_of_type(const PrimCall& c, const Type* t) {
  switch (t->kind) {
    case TypeKind::Int: return ValueKind::Int;
    case TypeKind::Float: return ValueKind::Float;
    case TypeKind::Bool: return ValueKind::Bool;
    case TypeKind::Char: return ValueKind::Char;
    case TypeKind::I32: return ValueKind::I32;
    case TypeKind::F32: return ValueKind::F32;
    default: break;
  }
  throw InternalError(std::string("internal error: ") + core::prim_info(c.id).name +
                      " needs a scalar element type, got " + type_to_string(t, {}));
}

/// A fold's identity (lang/prims.def) for one element type (library.md §5, with ndp's fixes:
/// float max/min use ∓inf, char max/min use codes 0/255).
Value identity(const PrimCall& c, Identity id, ValueKind k) {
  switch (id) {
    case Identity::Zero:
      switch (k) {
        case ValueKind::Int: return Value::int_(0);
        case ValueKind::I32: return Value::i32(0);
        case ValueKind::Float: return Value::float_(0.0);
        case ValueKind::F32: return Value::f32(0.0f);
        case ValueKind::Bool: return Value::bool_(false);
        default: break;
      }
      break;
    case Identity::One:
      switch (k) {
        case ValueKind::Int: return Value::int_(1);
        case ValueKind::I32: return Value::i32(1);
        case ValueKind::Float: return Value::float_(1.0);
        case ValueKind::F32: return Value::f32(1.0f);
        default: break;
      }
      break;
    case Identity::AllOnes:
      switch (k) {
        case ValueKind::Int: return Value::int_(-1);
        case ValueKind::I32: return Value::i32(-1);
        case ValueKind::Bool: return Value::bool_(true);
        default: break;
      }
      break;
    case Identity::Lowest:
      switch (k) {
        case ValueKind::Int: return Value::int_(std::numeric_limits<int64_t>::min());
        case ValueKind::I32: return Value::i32(std::numeric_limits<int32_t>::min());
        case ValueKind::Float: return Value::float_(-std::numeric_limits<double>::infinity());
        case ValueKind::F32: return Value::f32(-std::numeric_limits<float>::infinity());
        case ValueKind::Char: return Value::char_(0);
        default: break;
      }
      break;
    case Identity::Highest:
      switch (k) {
        case ValueKind::Int: return Value::int_(std::numeric_limits<int64_t>::max());
        case ValueKind::I32: return Value::i32(std::numeric_limits<int32_t>::max());
        case ValueKind::Float: return Value::float_(std::numeric_limits<double>::infinity());
        case ValueKind::F32: return Value::f32(std::numeric_limits<float>::infinity());
        case ValueKind::Char: return Value::char_(255);
        default: break;
      }
      break;
    case Identity::None: break;
  }
  bad_element(c, k);
}

template <class T>
T pick(Op op, T acc, T x) {
  // x replaces acc only when strictly better, so a NaN never displaces a number.
  return op == Op::Max ? (x > acc ? x : acc) : (x < acc ? x : acc);
}

/// acc ⊕ x for one operator family.
Value combine(const PrimCall& c, Op op, const Value& acc, const Value& x) {
  ValueKind k = acc.kind();
  switch (op) {
    case Op::Plus:
    case Op::Mult: {
      bool plus = op == Op::Plus;
      switch (k) {
        case ValueKind::Int: {
          uint64_t a = static_cast<uint64_t>(acc.as_int()), b = static_cast<uint64_t>(x.as_int());
          return Value::int_(static_cast<int64_t>(plus ? a + b : a * b));
        }
        case ValueKind::I32: {
          uint32_t a = static_cast<uint32_t>(acc.as_i32()), b = static_cast<uint32_t>(x.as_i32());
          return Value::i32(static_cast<int32_t>(plus ? a + b : a * b));
        }
        case ValueKind::Float:
          return Value::float_(plus ? acc.as_float() + x.as_float() : acc.as_float() * x.as_float());
        case ValueKind::F32: return Value::f32(plus ? acc.as_f32() + x.as_f32() : acc.as_f32() * x.as_f32());
        default: break;
      }
      break;
    }
    case Op::Max:
    case Op::Min:
      switch (k) {
        case ValueKind::Int: return Value::int_(pick(op, acc.as_int(), x.as_int()));
        case ValueKind::I32: return Value::i32(pick(op, acc.as_i32(), x.as_i32()));
        case ValueKind::Float: return Value::float_(pick(op, acc.as_float(), x.as_float()));
        case ValueKind::F32: return Value::f32(pick(op, acc.as_f32(), x.as_f32()));
        case ValueKind::Char: return Value::char_(pick(op, acc.as_char(), x.as_char()));
        default: break;
      }
      break;
    case Op::Or:
    case Op::And:
    case Op::Xor: {
      auto bits = [op](auto a, auto b) { return op == Op::Or ? (a | b) : op == Op::And ? (a & b) : (a ^ b); };
      switch (k) {
        case ValueKind::Int: return Value::int_(bits(acc.as_int(), x.as_int()));
        case ValueKind::I32: return Value::i32(static_cast<int32_t>(bits(acc.as_i32(), x.as_i32())));
        case ValueKind::Bool: return Value::bool_(bits(acc.as_bool(), x.as_bool()) != 0);
        default: break;
      }
      break;
    }
    case Op::None: break;
  }
  bad_element(c, k);
}

Value scan(const PrimCall& c, const Value& v) {
  const auto& xs = v.elems();
  if (xs.empty()) return v;
  Op op = core::prim_operator(c.id);
  std::vector<Value> out;
  out.reserve(xs.size());
  Value acc = identity(c, core::prim_identity(c.id), xs[0].kind());
  for (const Value& x : xs) {
    c.poll_interrupt(out.size());
    out.push_back(acc);
    acc = combine(c, op, acc, x);
  }
  return Value::seq(std::move(out));
}

Value reduce(const PrimCall& c, const Value& v) {
  const auto& xs = v.elems();
  Op op = core::prim_operator(c.id);
  // An empty sequence carries no element kind: the primitive's type argument gives it.
  ValueKind k = xs.empty() ? kind_of_type(c, c.type_arg(0)) : xs[0].kind();
  Value acc = identity(c, core::prim_identity(c.id), k);
  for (size_t i = 0; i < xs.size(); ++i) {
    c.poll_interrupt(i);
    acc = combine(c, op, acc, xs[i]);
  }
  return acc;
}

/// prim_max_index / prim_min_index: the extreme as reduce folds it, then the least index holding
/// it by `==` (so -0.0 and 0.0 are one value), or max_int where none does (a NaN extreme).
Value index_of_extreme(const PrimCall& c, const Value& v) {
  PrimCall extreme = c, eq = c;
  extreme.id = *core::index_of_extreme(c.id);
  eq.id = PrimId::Eq;
  const Value m = reduce(extreme, v);
  const auto& xs = v.elems();
  for (size_t i = 0; i < xs.size(); ++i) {
    c.poll_interrupt(i);
    const Value args[2] = {xs[i], m};
    if (apply_scalar_prim(eq, args).as_bool()) return Value::int_(static_cast<int64_t>(i));
  }
  return Value::int_(std::numeric_limits<int64_t>::max());
}

/// Checks an index against a length and returns it as size_t.
/// `i` as an index into a sequence of length n; else the error `error`, which names the index
/// and the length.
size_t checked_index(const PrimCall& c, const Value& i, size_t n, RuntimeErrorId error) {
  int64_t x = i.as_int();
  if (x < 0 || static_cast<uint64_t>(x) >= n) c.fail(message(error, x, n));
  return static_cast<size_t>(x);
}

/// `i` as a target position in a result of length n (permute, join); else `error`, CMU's text,
/// which covers duplicate positions too and so names no index.
size_t checked_position(const PrimCall& c, const Value& i, size_t n, RuntimeErrorId error) {
  int64_t x = i.as_int();
  if (x < 0 || static_cast<uint64_t>(x) >= n) c.fail(message(error));
  return static_cast<size_t>(x);
}

Value combine_prim(const PrimCall& c, const Value* a) {
  const auto& dest = a[0].elems();
  const auto& idx = a[1].elems();
  const auto& vals = a[2].elems();
  std::string name = core::prim_info(c.id).name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::toupper(ch); });
  if (idx.size() != vals.size()) c.fail(message(RuntimeErrorId::CombineLengthMismatch, name));
  Op op = core::prim_operator(c.id);
  std::vector<Value> out = dest;
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t k = idx[i].as_int();
    if (k < 0 || static_cast<uint64_t>(k) >= out.size())
      c.fail(message(RuntimeErrorId::CombineBounds, name, k, i, out.size()));
    out[static_cast<size_t>(k)] = combine(c, op, out[static_cast<size_t>(k)], vals[i]);
  }
  return Value::seq(std::move(out));
}

template <class Key>
std::vector<size_t> stable_order(const std::vector<Value>& xs, Key key, bool down) {
  std::vector<size_t> order(xs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // NaN sorts above every number (a strict weak order, so stable_sort stays well defined).
  auto less = [&](size_t i, size_t j) {
    auto a = key(xs[i]), b = key(xs[j]);
    if constexpr (std::is_floating_point_v<decltype(a)>) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
    }
    return a < b;
  };
  if (down)
    std::stable_sort(order.begin(), order.end(), [&](size_t i, size_t j) { return less(j, i); });
  else
    std::stable_sort(order.begin(), order.end(), less);
  return order;
}

Value rank(const PrimCall& c, const Value& v) {
  const auto& xs = v.elems();
  bool down = c.id == PrimId::RankDown;
  std::vector<size_t> order;
  if (!xs.empty()) {
    switch (xs[0].kind()) {
      case ValueKind::Int: order = stable_order(xs, [](const Value& x) { return x.as_int(); }, down); break;
      case ValueKind::Float: order = stable_order(xs, [](const Value& x) { return x.as_float(); }, down); break;
      case ValueKind::I32: order = stable_order(xs, [](const Value& x) { return x.as_i32(); }, down); break;
      case ValueKind::F32: order = stable_order(xs, [](const Value& x) { return x.as_f32(); }, down); break;
      case ValueKind::Char: order = stable_order(xs, [](const Value& x) { return x.as_char(); }, down); break;
      default: bad_element(c, xs[0].kind());
    }
  }
  std::vector<Value> out(xs.size());
  for (size_t k = 0; k < order.size(); ++k) out[order[k]] = Value::int_(static_cast<int64_t>(k));
  return Value::seq(std::move(out));
}

uint64_t hash_value(const Value& v) {
  auto h = [](uint64_t x) { return RandState::mix(x); };
  switch (v.kind()) {
    case ValueKind::Int: return h(static_cast<uint64_t>(v.as_int()));
    case ValueKind::Float: {
      double d = v.as_float();
      if (d == 0) d = 0;  // eql(0.0, -0.0), so they must hash alike
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return h(bits ^ 0x1);
    }
    case ValueKind::Bool: return h(v.as_bool() ? 0x11 : 0x10);
    case ValueKind::Char: return h(0x200 + v.as_char());
    case ValueKind::I32: return h(static_cast<uint64_t>(static_cast<int64_t>(v.as_i32())));
    case ValueKind::F32: {
      float f = v.as_f32();
      if (f == 0) f = 0;
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      return h(bits ^ 0x3);
    }
    case ValueKind::Stream: return h(static_cast<uint64_t>(v.as_stream()) ^ 0x4);
    case ValueKind::Seq: {
      uint64_t acc = h(v.length() ^ 0x5);
      for (const Value& x : v.elems()) acc = h(acc ^ hash_value(x));
      return acc;
    }
    case ValueKind::Pair: return h(hash_value(v.first()) * 31 ^ hash_value(v.second()));
    case ValueKind::Data: return h(hash_value(v.data().fields) ^ v.data().def->id);
    case ValueKind::Fn: return h((static_cast<uint64_t>(v.fn().target) << 32) ^ v.fn().id);
  }
  return 0;
}

Value join(const PrimCall& c, const Value* a) {
  const auto& v1 = a[0].elems();
  const auto& p1 = a[1].elems();
  const auto& v2 = a[2].elems();
  const auto& p2 = a[3].elems();
  RuntimeErrorId msg = RuntimeErrorId::JoinBadArguments;
  if (v1.size() != p1.size() || v2.size() != p2.size()) c.fail(message(msg));
  size_t n = v1.size() + v2.size();
  std::vector<Value> out(n);
  std::vector<bool> seen(n, false);
  auto place = [&](const std::vector<Value>& vs, const std::vector<Value>& ps) {
    for (size_t j = 0; j < vs.size(); ++j) {
      size_t k = checked_position(c, ps[j], n, msg);
      if (seen[k]) c.fail(message(msg));
      seen[k] = true;
      out[k] = vs[j];
    }
  };
  place(v1, p1);
  place(v2, p2);
  return Value::seq(std::move(out));
}

Value partition(const PrimCall& c, const Value& v, const Value& counts) {
  const auto& xs = v.elems();
  std::vector<Value> out;
  out.reserve(counts.length());
  for (const Value& cv : counts.elems())
    if (cv.as_int() < 0) c.fail(message(RuntimeErrorId::PartitionNegativeLength));
  size_t pos = 0;
  for (const Value& cv : counts.elems()) {
    int64_t n = cv.as_int();
    if (static_cast<uint64_t>(n) > xs.size() - pos) c.fail(message(RuntimeErrorId::PartitionLengthMismatch));
    out.push_back(Value::seq(std::vector<Value>(xs.begin() + static_cast<ptrdiff_t>(pos),
                                                xs.begin() + static_cast<ptrdiff_t>(pos + static_cast<size_t>(n)))));
    pos += static_cast<size_t>(n);
  }
  if (pos != xs.size()) c.fail(message(RuntimeErrorId::PartitionLengthMismatch));
  return Value::seq(std::move(out));
}

}  // namespace

Value apply_seq_prim(const PrimCall& c, const Value* a) {
  switch (core::prim_family(c.id)) {
    case core::PrimFamily::Scan: return scan(c, a[0]);
    case core::PrimFamily::Reduce: return reduce(c, a[0]);
    case core::PrimFamily::Combine: return combine_prim(c, a);
    default: break;
  }
  switch (c.id) {
    case PrimId::Length: return Value::int_(static_cast<int64_t>(a[0].length()));
    case PrimId::Dist: {
      int64_t n = a[1].as_int();
      if (n < 0) c.fail(message(RuntimeErrorId::DistNegativeLength));
      require_memory(static_cast<uint64_t>(n), sizeof(Value));
      std::vector<Value> out;
      out.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        c.poll_interrupt(static_cast<uint64_t>(i));
        out.push_back(a[0]);
      }
      return Value::seq(std::move(out));
    }
    case PrimId::Index: {
      int64_t n = a[0].as_int();
      if (n < 0) c.fail(message(RuntimeErrorId::IndexNegativeLength));
      require_memory(static_cast<uint64_t>(n), sizeof(Value));
      std::vector<Value> out;
      out.reserve(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        c.poll_interrupt(static_cast<uint64_t>(i));
        out.push_back(Value::int_(i));
      }
      return Value::seq(std::move(out));
    }
    case PrimId::Iseq: {
      int64_t s = a[0].as_int(), d = a[1].as_int(), e = a[2].as_int();
      if (d < 1 || e < s) c.fail(message(RuntimeErrorId::IseqBadRange));
      const uint64_t n = range_length(s, d, e);
      require_memory(n, sizeof(Value));
      std::vector<Value> out;
      out.reserve(n);
      for (uint64_t k = 0; k < n; ++k) {
        c.poll_interrupt(k);
        out.push_back(Value::int_(static_cast<int64_t>(static_cast<uint64_t>(s) + k * static_cast<uint64_t>(d))));
      }
      return Value::seq(std::move(out));
    }
    case PrimId::Elt:
      return a[0].elems()[checked_index(c, a[1], a[0].length(), RuntimeErrorId::SeqRefBounds)];
    case PrimId::Rep: {
      size_t i = checked_index(c, a[2], a[0].length(), RuntimeErrorId::SeqRefBounds);
      std::vector<Value> out = a[0].elems();
      out[i] = a[1];
      return Value::seq(std::move(out));
    }
    case PrimId::Gather: {
      const auto& vs = a[0].elems();
      std::vector<Value> out;
      out.reserve(a[1].length());
      for (const Value& i : a[1].elems())
        out.push_back(vs[checked_index(c, i, vs.size(), RuntimeErrorId::GatherBounds)]);
      return Value::seq(std::move(out));
    }
    case PrimId::Write: {
      std::vector<Value> out = a[0].elems();
      for (const Value& p : a[1].elems())
        out[checked_index(c, p.first(), out.size(), RuntimeErrorId::WriteBounds)] = p.second();
      return Value::seq(std::move(out));
    }
    case PrimId::Put: {
      const auto& vs = a[0].elems();
      const auto& is = a[1].elems();
      if (vs.size() != is.size()) c.fail(message(RuntimeErrorId::PutLengthMismatch, vs.size(), is.size()));
      std::vector<Value> out = a[2].elems();
      for (size_t j = 0; j < vs.size(); ++j)
        out[checked_index(c, is[j], out.size(), RuntimeErrorId::WriteBounds)] = vs[j];
      return Value::seq(std::move(out));
    }
    case PrimId::Permute: {
      const auto& vs = a[0].elems();
      const auto& is = a[1].elems();
      RuntimeErrorId msg = RuntimeErrorId::PermuteBadArguments;
      if (vs.size() != is.size()) c.fail(message(msg));
      std::vector<Value> out(vs.size());
      std::vector<bool> seen(vs.size(), false);
      for (size_t j = 0; j < vs.size(); ++j) {
        size_t k = checked_position(c, is[j], vs.size(), msg);
        if (seen[k]) c.fail(message(msg));
        seen[k] = true;
        out[k] = vs[j];
      }
      return Value::seq(std::move(out));
    }
    case PrimId::Join: return join(c, a);
    case PrimId::Pack: {
      std::vector<Value> out;
      for (const Value& p : a[0].elems())
        if (p.second().as_bool()) out.push_back(p.first());
      return Value::seq(std::move(out));
    }
    case PrimId::Identity: return identity_of(a[0]);
    case PrimId::PrimDefault: return identity_of_type(c, c.type_arg(0));
    case PrimId::Eql: return Value::bool_(values_equal(a[0], a[1]));
    case PrimId::Hash: {
      int64_t l = a[1].as_int();
      if (l < 1) c.fail(message(RuntimeErrorId::HashNotPositive));
      // CMU: a non-negative int hashes to itself, reduced rem l.
      if (a[0].kind() == ValueKind::Int && a[0].as_int() >= 0) return Value::int_(a[0].as_int() % l);
      return Value::int_(static_cast<int64_t>(hash_value(a[0]) % static_cast<uint64_t>(l)));
    }
    case PrimId::Append: {
      std::vector<Value> out = a[0].elems();
      out.insert(out.end(), a[1].elems().begin(), a[1].elems().end());
      return Value::seq(std::move(out));
    }
    case PrimId::Partition: return partition(c, a[0], a[1]);
    case PrimId::Flatten: {
      std::vector<Value> out;
      for (const Value& s : a[0].elems()) out.insert(out.end(), s.elems().begin(), s.elems().end());
      return Value::seq(std::move(out));
    }
    case PrimId::Rank: case PrimId::RankDown: return rank(c, a[0]);
    case PrimId::MaxIndexPrim: case PrimId::MinIndexPrim: return index_of_extreme(c, a[0]);
    case PrimId::ReversePrim: {
      std::vector<Value> out = a[0].elems();
      std::reverse(out.begin(), out.end());
      return Value::seq(std::move(out));
    }
    case PrimId::ToString: return Value::string(nesl_string_of(a[0]));
    case PrimId::Pad: {
      std::string s = a[0].to_string();
      int64_t l = a[1].as_int();
      uint64_t width = l < 0 ? uint64_t{0} - static_cast<uint64_t>(l) : static_cast<uint64_t>(l);
      if (s.size() >= width) return a[0];
      std::string fill(static_cast<size_t>(width) - s.size(), ' ');
      return Value::string(l > 0 ? s + fill : fill + s);
    }
    case PrimId::ExpString: {
      int64_t d = a[1].as_int();
      if (d > 8) c.fail(message(RuntimeErrorId::ExpStringTooLarge));
      if (d < 0) c.fail(message(RuntimeErrorId::ExpStringNegative));
      return Value::string(exp_string(a[0].as_float(), static_cast<int>(d)));
    }
    default: break;
  }
  throw InternalError(std::string("internal error: not a sequence primitive: ") + core::prim_info(c.id).name);
}

}  // namespace ndp::lang::eval
