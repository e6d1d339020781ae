// Dispatch of a lifted primitive: the native group that handles it, else the fallback.
#include "exec/host/lifted_prims.h"

#include <algorithm>

#include "lang/diagnostics.h"

namespace ndp::exec::host {


std::optional<Vec> apply_native_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args) {
  return lang::core::is_elementwise(c.id) ? native_scalar_prim(ctx, c, args) : native_seq_prim(ctx, c, args);
}

Vec apply_lifted_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args) {
  NDP_ASSERT(static_cast<int>(args.size()) == lang::core::prim_info(c.id).arity, "lifted primitive with a wrong arity");
  for (const Vec& a : args) NDP_ASSERT(a.size() == args[0].size(), "lifted primitive arguments of different lengths");
  // An elementwise primitive of uniform arguments has a uniform result (Note [Uniform buffers]
  // in vec.h): computed on one instance, which also raises any error the first instance would.
  int64_t n = args.empty() ? 0 : args[0].size();
  if (n > 1 && lang::core::is_elementwise(c.id) && all_uniform(args))
    return broadcast_first(apply_lifted_prim(ctx, c, first_instances(args)), n);
  if (std::optional<Vec> v = apply_native_prim(ctx, c, args)) return std::move(*v);
  return apply_fallback_prim(ctx, c, args);
}

}  // namespace ndp::exec::host
