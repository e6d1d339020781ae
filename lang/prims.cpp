// The primitive table (lang/prims.def) as data.
#include "lang/core.h"

#include <iterator>

namespace ndp::lang::core {

static const PrimInfo kPrims[] = {
#define NDP_PRIM(id, name, type, arity, family, op, identity, effect) \
  {name, type, arity, PrimFamily::family, PrimOperator::op, PrimIdentity::identity, PrimEffect::effect},
#include "lang/prims.def"
#undef NDP_PRIM
};
static_assert(std::size(kPrims) == static_cast<size_t>(PrimId::Count_), "one PrimInfo per PrimId");

const PrimInfo& prim_info(PrimId id) { return kPrims[static_cast<size_t>(id)]; }

}  // namespace ndp::lang::core
