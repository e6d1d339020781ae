// The primitive table (lang/prims.def) as data.
#include "lang/core.h"

namespace ndp::lang::core {

static const PrimInfo kPrims[] = {
#define NDP_PRIM(id, name, type, arity) {name, type, arity},
#include "lang/prims.def"
#undef NDP_PRIM
};

const PrimInfo& prim_info(PrimId id) { return kPrims[static_cast<size_t>(id)]; }

bool prim_has_effect(PrimId id) {
  switch (id) {
    case PrimId::Rand: case PrimId::RandSeed:
    case PrimId::PrintChar: case PrimId::PrintString: case PrimId::Error:
    case PrimId::OpenInFile: case PrimId::OpenOutFile: case PrimId::OpenAppendFile: case PrimId::CloseFile:
    case PrimId::WriteChar: case PrimId::WriteString: case PrimId::WriteObject:
    case PrimId::ReadChar: case PrimId::ReadString: case PrimId::ReadObject:
    case PrimId::ShellCommand: case PrimId::GetEnv: case PrimId::Spawn:
      return true;
    default:
      return false;
  }
}

}  // namespace ndp::lang::core
