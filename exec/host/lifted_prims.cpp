// Dispatch of a lifted primitive: the native group that handles it, else the fallback.
#include "exec/host/lifted_prims.h"

#include <algorithm>

#include "lang/diagnostics.h"

namespace ndp::exec::host {

using lang::core::PrimId;

bool elementwise_scalar(PrimId id) {
  switch (id) {
    case PrimId::Not: case PrimId::Or: case PrimId::And: case PrimId::Xor: case PrimId::Nor: case PrimId::Nand:
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le: case PrimId::Ge:
    case PrimId::Add: case PrimId::Sub: case PrimId::Mul: case PrimId::Div: case PrimId::Negate:
    case PrimId::Power: case PrimId::Rem: case PrimId::Lshift: case PrimId::Rshift:
    case PrimId::Sqrt: case PrimId::Ln: case PrimId::Exp: case PrimId::Sin: case PrimId::Cos: case PrimId::Tan:
    case PrimId::Asin: case PrimId::Acos: case PrimId::Atan: case PrimId::Sinh: case PrimId::Cosh:
    case PrimId::Tanh: case PrimId::Expt:
    case PrimId::Btoi: case PrimId::CodeChar: case PrimId::CharCode: case PrimId::ToFloat: case PrimId::Ceil:
    case PrimId::Floor: case PrimId::Trunc: case PrimId::Round: case PrimId::ToI32: case PrimId::ToF32:
    case PrimId::ToI64: case PrimId::ToF64: case PrimId::Select:
      return true;
    default:
      return false;
  }
}

std::optional<Vec> apply_native_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args) {
  return elementwise_scalar(c.id) ? native_scalar_prim(ctx, c, args) : native_seq_prim(ctx, c, args);
}

Vec apply_lifted_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args) {
  NDP_ASSERT(static_cast<int>(args.size()) == lang::core::prim_info(c.id).arity, "lifted primitive with a wrong arity");
  for (const Vec& a : args) NDP_ASSERT(a.size() == args[0].size(), "lifted primitive arguments of different lengths");
  // An elementwise primitive of uniform arguments has a uniform result (Note [Uniform buffers]
  // in vec.h): computed on one instance, which also raises any error the first instance would.
  int64_t n = args.empty() ? 0 : args[0].size();
  if (n > 1 && elementwise_scalar(c.id) && all_uniform(args))
    return broadcast_first(apply_lifted_prim(ctx, c, first_instances(args)), n);
  if (std::optional<Vec> v = apply_native_prim(ctx, c, args)) return std::move(*v);
  return apply_fallback_prim(ctx, c, args);
}

}  // namespace ndp::exec::host
