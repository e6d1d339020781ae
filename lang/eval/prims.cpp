// Dispatch of the native primitives to their groups, and helpers the groups share.
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"
#include "lang/runtime_errors.h"

namespace ndp::lang::eval {

using core::PrimId;

const Type* PrimCall::type_arg(size_t i) const {
  NDP_ASSERT(type_args && i < type_args->size(), "primitive node lacks the type argument it needs");
  const Type* t = (*type_args)[i];
  if (frame_targs && !frame_targs->empty() && contains_vars(t)) t = env->types->subst(t, *frame_targs);
  return t;
}

Value apply_prim(const PrimCall& call, const Value* args) {
  if (call.id >= PrimId::Count_) throw InternalError("internal error: apply_prim: unknown primitive");
  switch (core::prim_family(call.id)) {
    case core::PrimFamily::Elementwise:
    case core::PrimFamily::Random:
      return apply_scalar_prim(call, args);
    case core::PrimFamily::Sequence:
    case core::PrimFamily::Scan:
    case core::PrimFamily::Reduce:
    case core::PrimFamily::Combine:
      return apply_seq_prim(call, args);
    case core::PrimFamily::Io:
      return apply_io_prim(call, args);
  }
  throw InternalError("internal error: apply_prim: unknown primitive family");
}

Value identity_of_type(const PrimCall& call, const Type* t) {
  switch (t->kind) {
    case TypeKind::Int: return Value::int_(0);
    case TypeKind::Float: return Value::float_(0.0);
    case TypeKind::Bool: return Value::bool_(false);
    case TypeKind::Char: return Value::char_(' ');
    case TypeKind::I32: return Value::i32(0);
    case TypeKind::F32: return Value::f32(0.0f);
    case TypeKind::Stream: return Value::stream(0);
    case TypeKind::Seq: return Value::seq({});
    case TypeKind::Pair: return Value::pair(identity_of_type(call, t->a), identity_of_type(call, t->b));
    case TypeKind::Data:
      return Value::data(t->data, identity_of_type(call, call.env->types->subst(t->data->fields, t->args)));
    case TypeKind::Fn:
    case TypeKind::Var: break;
  }
  call.fail(message(RuntimeErrorId::NoIdentityForFunction));
}

Value identity_of(const Value& v) {
  switch (v.kind()) {
    case ValueKind::Int: return Value::int_(0);
    case ValueKind::Float: return Value::float_(0.0);
    case ValueKind::Bool: return Value::bool_(false);
    case ValueKind::Char: return Value::char_(' ');
    case ValueKind::I32: return Value::i32(0);
    case ValueKind::F32: return Value::f32(0.0f);
    case ValueKind::Stream: return Value::stream(0);
    case ValueKind::Seq: return Value::seq({});
    case ValueKind::Pair: return Value::pair(identity_of(v.first()), identity_of(v.second()));
    case ValueKind::Data: return Value::data(v.data().def, identity_of(v.data().fields));
    case ValueKind::Fn: return v;
  }
  return v;
}

const char* kind_name(ValueKind k) {
  switch (k) {
    case ValueKind::Int: return "int";
    case ValueKind::Float: return "float";
    case ValueKind::Bool: return "bool";
    case ValueKind::Char: return "char";
    case ValueKind::I32: return "i32";
    case ValueKind::F32: return "f32";
    case ValueKind::Stream: return "stream";
    case ValueKind::Seq: return "sequence";
    case ValueKind::Pair: return "pair";
    case ValueKind::Data: return "datatype value";
    case ValueKind::Fn: return "function";
  }
  return "?";
}

}  // namespace ndp::lang::eval
