// The generic lifted primitive: each instance converted to a lang::Value, the interpreter's
// apply_prim, and the results converted back. Correct for every primitive (I/O runs once per
// instance, in instance order); the natives are tested against it.
#include "exec/host/convert.h"
#include "exec/host/lifted_prims.h"

namespace ndp::exec::host {

using lang::Value;

Vec apply_fallback_prim(const PrimContext& ctx, const LiftedCall& c, std::span<const Vec> args,
                        const std::function<void(int64_t)>& before_instance) {
  size_t arity = args.size();
  int64_t n = args.empty() ? 0 : args[0].size();
  std::vector<std::vector<Value>> in;
  in.reserve(arity);
  for (const Vec& a : args) in.push_back(to_values(a));
  lang::eval::PrimCall call{c.id, c.span, c.type_args, nullptr, ctx.env};
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  Value a[4];
  for (int64_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < arity; ++j) a[j] = in[j][static_cast<size_t>(i)];
    if (before_instance) before_instance(i);
    out.push_back(lang::eval::apply_prim(call, a));
  }
  return from_values(*ctx.types, c.result, out);
}

}  // namespace ndp::exec::host
