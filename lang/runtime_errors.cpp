// The runtime error messages (lang/runtime_errors.def) as data.
#include "lang/runtime_errors.h"

#include <iterator>

namespace ndp::lang {

static const char* const kMessages[] = {
#define NDP_RUNTIME_ERROR(id, text) text,
#include "lang/runtime_errors.def"
#undef NDP_RUNTIME_ERROR
};
static_assert(std::size(kMessages) == static_cast<size_t>(RuntimeErrorId::Count_), "one text per RuntimeErrorId");

const char* message(RuntimeErrorId id) { return kMessages[static_cast<size_t>(id)]; }

}  // namespace ndp::lang
