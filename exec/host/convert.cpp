// Value <-> Vec: Lit and Global values enter the flat world here, the entry function's result
// and the fallback primitives' arguments leave it.
#include "exec/host/convert.h"

#include <algorithm>

#include "lang/diagnostics.h"

namespace ndp::exec::host {

using lang::Type;
using lang::TypeKind;
using lang::Value;

namespace {

template <class T>
T scalar_of(const Value& v) {
  if constexpr (std::is_same_v<T, double>) return v.as_float();
  else if constexpr (std::is_same_v<T, bool>) return v.as_bool();
  else if constexpr (std::is_same_v<T, uint8_t>) return v.as_char();
  else if constexpr (std::is_same_v<T, int32_t>) return v.as_i32();
  else if constexpr (std::is_same_v<T, float>) return v.as_f32();
  else return v.as_int();  // int and stream
}

Value value_of(TypeKind k, const Vec& v, int64_t i) {
  switch (k) {
    case TypeKind::Int: return Value::int_(v.data<int64_t>()[i]);
    case TypeKind::Float: return Value::float_(v.data<double>()[i]);
    case TypeKind::Bool: return Value::bool_(v.data<bool>()[i]);
    case TypeKind::Char: return Value::char_(v.data<uint8_t>()[i]);
    case TypeKind::I32: return Value::i32(v.data<int32_t>()[i]);
    case TypeKind::F32: return Value::f32(v.data<float>()[i]);
    case TypeKind::Stream: return Value::stream(v.data<int64_t>()[i]);
    case TypeKind::Fn: return Value::fn(function_of(v.data<int64_t>()[i]));
    default: break;
  }
  throw lang::InternalError("internal error: value_of: not a scalar kind");
}

}  // namespace

Vec from_values(lang::TypeContext& types, const Type* t, std::span<const Value> vs) {
  int64_t n = static_cast<int64_t>(vs.size());
  switch (t->kind) {
    case TypeKind::Seq: {
      Buf<int64_t> len(n);
      std::vector<Value> all;
      for (int64_t i = 0; i < n; ++i) {
        const auto& xs = vs[static_cast<size_t>(i)].elems();
        len[i] = static_cast<int64_t>(xs.size());
        all.insert(all.end(), xs.begin(), xs.end());
      }
      Vec elems = from_values(types, t->a, all);
      return Vec::seq(t, n, len.share(), std::move(elems));
    }
    case TypeKind::Pair: {
      std::vector<Value> a, b;
      a.reserve(vs.size());
      b.reserve(vs.size());
      for (const Value& v : vs) {
        a.push_back(v.first());
        b.push_back(v.second());
      }
      return Vec::pair(t, from_values(types, t->a, a), from_values(types, t->b, b));
    }
    case TypeKind::Data: {
      std::vector<Value> f;
      f.reserve(vs.size());
      for (const Value& v : vs) f.push_back(v.data().fields);
      return Vec::data(t, from_values(types, types.subst(t->data->fields, t->args), f));
    }
    case TypeKind::Fn: {
      Buf<int64_t> out(n);
      for (int64_t i = 0; i < n; ++i) out[i] = function_id(vs[static_cast<size_t>(i)].fn());
      return Vec::scalar(t, n, out.share());
    }
    case TypeKind::Var: throw lang::InternalError("internal error: cpu backend: a Vec of an open type");
    default:
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        Buf<T> out(n);
        for (int64_t i = 0; i < n; ++i) out[i] = scalar_of<T>(vs[static_cast<size_t>(i)]);
        return Vec::scalar(t, n, out.share());
      });
  }
}

Vec from_value(lang::TypeContext& types, const Type* t, const Value& v, int64_t n) {
  return replicate_one(from_values(types, t, std::span<const Value>(&v, 1)), n);
}

std::vector<Value> to_values(const Vec& v) {
  const Type* t = v.type();
  int64_t n = v.size();
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  switch (t->kind) {
    case TypeKind::Seq: {
      std::vector<Value> all = to_values(v.elems());
      const int64_t* off = v.offsets();
      for (int64_t i = 0; i < n; ++i)
        out.push_back(Value::seq(std::vector<Value>(all.begin() + off[i], all.begin() + off[i + 1])));
      return out;
    }
    case TypeKind::Pair: {
      std::vector<Value> a = to_values(v.first()), b = to_values(v.second());
      for (int64_t i = 0; i < n; ++i) out.push_back(Value::pair(a[static_cast<size_t>(i)], b[static_cast<size_t>(i)]));
      return out;
    }
    case TypeKind::Data: {
      std::vector<Value> f = to_values(v.fields());
      for (int64_t i = 0; i < n; ++i) out.push_back(Value::data(t->data, f[static_cast<size_t>(i)]));
      return out;
    }
    case TypeKind::Var:
      if (n != 0) fail_function_value();
      return out;
    default:
      for (int64_t i = 0; i < n; ++i) out.push_back(value_of(t->kind, v, i));
      return out;
  }
}

Value to_value(const Vec& v, int64_t i) {
  int64_t idx[1] = {i};
  return to_values(take(v, idx))[0];
}

namespace {

/// v with each sequence row but a string's cut to its first `keep` elements, at every depth.
Vec cut_rows(const Vec& v, int64_t keep) {
  switch (v.kind()) {
    case lang::TypeKind::Pair: return Vec::pair(v.type(), cut_rows(v.first(), keep), cut_rows(v.second(), keep));
    case lang::TypeKind::Data: return Vec::data(v.type(), cut_rows(v.fields(), keep));
    case lang::TypeKind::Seq: {
      if (v.type()->a->kind == lang::TypeKind::Char) return v;
      const int64_t n = v.size();
      const int64_t* offsets = v.offsets();
      Buf<int64_t> lengths(n);
      std::vector<int64_t> kept;
      for (int64_t r = 0; r < n; ++r) {
        lengths[r] = std::min(v.length(r), keep);
        for (int64_t k = 0; k < lengths[r]; ++k) kept.push_back(offsets[r] + k);
      }
      return Vec::seq(v.type(), n, lengths.share(), cut_rows(take(v.elems(), kept), keep));
    }
    default: return v;
  }
}

}  // namespace

Value shown_value(const Vec& v, int64_t i, int64_t keep) { return to_value(cut_rows(v, keep), i); }

}  // namespace ndp::exec::host
