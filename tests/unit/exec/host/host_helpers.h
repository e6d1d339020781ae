// Test helpers for host vectors: the uniform and regular form of a Vec, comparison of values
// with a tolerance, and a harness that compares native lifted primitives with the fallback.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "exec/host/convert.h"
#include "exec/host/lifted_prims.h"
#include "lang/eval/rand.h"
#include "lang/eval/streams.h"
#include "tests/unit/flatten/flat_builder.h"

namespace ndp::test::exec_test {

using namespace ndp::test::flat_ir;
using exec::host::Vec;

/// v in the representation of Note [Uniform buffers] (exec/host/vec.h) wherever it allows:
/// scalars whose instances are all equal over a uniform buffer, sequences whose lengths are all
/// equal regular, at every level. The values are v's.
inline Vec uniform_form(const Vec& v) {
  using exec::host::with_scalar;
  const Type* t = v.type();
  int64_t n = v.size();
  switch (t->kind) {
    case lang::TypeKind::Seq: {
      Vec elems = uniform_form(v.elems());
      bool equal = true;
      for (int64_t i = 1; i < n && equal; ++i) equal = v.length(i) == v.length(0);
      if (equal && n > 0) return Vec::seq(t, n, exec::host::uniform_buffer(v.length(0), n), elems);
      return Vec::seq(t, n, v.shared_buffer(), v.offsets_buffer(), elems);
    }
    case lang::TypeKind::Pair: return Vec::pair(t, uniform_form(v.first()), uniform_form(v.second()));
    case lang::TypeKind::Data: return Vec::data(t, uniform_form(v.fields()));
    case lang::TypeKind::Var: return v;
    default:
      return with_scalar(t->kind, [&](auto tag) {
        using T = typename decltype(tag)::type;
        const T* d = v.template data<T>();
        for (int64_t i = 1; i < n; ++i)
          if (std::memcmp(&d[i], &d[0], sizeof(T)) != 0) return v;
        return n > 0 ? exec::host::broadcast_first(v, n) : v;
      });
  }
}

/// Deep equality with a relative tolerance on floats (reductions and scans may reassociate,
/// extensions.md §4); NaN equals NaN.
inline bool close_values(const Value& a, const Value& b, double tol) {
  if (a.kind() != b.kind()) return false;
  auto close = [&](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    if (x == y) return true;
    return std::fabs(x - y) <= tol * std::max(std::fabs(x), std::fabs(y));
  };
  switch (a.kind()) {
    case lang::ValueKind::Float: return close(a.as_float(), b.as_float());
    case lang::ValueKind::F32: return close(a.as_f32(), b.as_f32());
    case lang::ValueKind::Seq:
      if (a.length() != b.length()) return false;
      for (size_t i = 0; i < a.length(); ++i)
        if (!close_values(a.elems()[i], b.elems()[i], tol)) return false;
      return true;
    case lang::ValueKind::Pair: return close_values(a.first(), b.first(), tol) && close_values(a.second(), b.second(), tol);
    case lang::ValueKind::Data: return close_values(a.data().fields, b.data().fields, tol);
    default: return lang::values_equal(a, b);
  }
}

/// Runs lifted primitives natively and through the fallback on the same arguments.
struct PrimHarness {
  lang::core::Program prog;
  lang::TypeContext& T = prog.types;
  std::FILE* out = std::tmpfile();
  lang::eval::StreamTable streams{out};
  lang::eval::RandState rand;
  lang::eval::PrimEnv env{&prog.types, out, &streams, &rand};
  exec::host::PrimContext ctx{&prog.types, &env};
  lang::Span span{1, 5, 9};
  ~PrimHarness() { std::fclose(out); }

  Vec make(const Type* t, const std::vector<Value>& vs) { return exec::host::from_values(T, t, vs); }

  struct Outcome {
    bool native = false;  // a native version ran
    std::optional<Vec> value;
    std::string error;
  };

  /// Which entry point runs the primitive: its native version (if any), the per-instance
  /// fallback, or apply_lifted_prim (native where there is one, with its shortcuts).
  enum class Path { native, fallback, lifted };

  /// Runs the primitive; an error must carry the call's span.
  Outcome apply(Path path, PrimId id, const std::vector<const Type*>& targs, const Type* result,
                const std::vector<Vec>& args) {
    exec::host::LiftedCall c{id, span, &targs, result};
    Outcome o;
    try {
      switch (path) {
        case Path::native:
          o.value = exec::host::apply_native_prim(ctx, c, args);
          o.native = o.value.has_value();
          break;
        case Path::fallback: o.value = exec::host::apply_fallback_prim(ctx, c, args); break;
        case Path::lifted: o.value = exec::host::apply_lifted_prim(ctx, c, args); break;
      }
    } catch (lang::eval::EvalError& e) {
      o.native = path == Path::native;
      o.error = e.message;
      CHECK(e.span.file == span.file);
      CHECK(e.span.begin == span.begin);
    }
    return o;
  }

  /// Native and fallback agree (same error, or close values). Returns the error ("" if none).
  std::string same(PrimId id, const std::vector<const Type*>& targs, const Type* result, const std::vector<Vec>& args,
                   double tol = 0) {
    Outcome n = apply(Path::native, id, targs, result, args);
    INFO("primitive " << lang::core::prim_info(id).name);
    REQUIRE_MESSAGE(n.native, "no native version");
    Outcome f = apply(Path::fallback, id, targs, result, args);
    CHECK(n.error == f.error);
    if (n.error.empty() && f.error.empty()) {
      REQUIRE(n.value->size() == f.value->size());
      CHECK(n.value->type() == result);
      auto nv = exec::host::to_values(*n.value), fv = exec::host::to_values(*f.value);
      size_t bad = 0;
      for (size_t i = 0; i < nv.size(); ++i)
        if (!close_values(nv[i], fv[i], tol)) ++bad;
      CHECK_MESSAGE(bad == 0, bad << " of " << nv.size() << " instances differ");
    }
    return n.error;
  }
};

}  // namespace ndp::test::exec_test
