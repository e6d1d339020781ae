// The primitive table (lang/prims.def) as data.
#include "lang/core.h"

namespace ndp::lang::core {

static const PrimInfo kPrims[] = {
#define NDP_PRIM(id, name, type, arity) {name, type, arity},
#include "lang/prims.def"
#undef NDP_PRIM
};

const PrimInfo& prim_info(PrimId id) { return kPrims[static_cast<size_t>(id)]; }

}  // namespace ndp::lang::core
