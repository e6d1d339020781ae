// Dispatch of the native primitives to their groups, and helpers the groups share.
#include "lang/diagnostics.h"
#include "lang/eval/prim_call.h"

namespace ndp::lang::eval {

using core::PrimId;

const Type* PrimCall::type_arg(size_t i) const {
  NDP_ASSERT(type_args && i < type_args->size(), "primitive node lacks the type argument it needs");
  const Type* t = (*type_args)[i];
  if (frame_targs && !frame_targs->empty() && contains_vars(t)) t = env->types->subst(t, *frame_targs);
  return t;
}

Value apply_prim(const PrimCall& call, const Value* args) {
  switch (call.id) {
    case PrimId::Not: case PrimId::Or: case PrimId::And: case PrimId::Xor: case PrimId::Nor:
    case PrimId::Nand:
    case PrimId::Eq: case PrimId::Ne: case PrimId::Lt: case PrimId::Gt: case PrimId::Le:
    case PrimId::Ge:
    case PrimId::Add: case PrimId::Sub: case PrimId::Mul: case PrimId::Div: case PrimId::Negate:
    case PrimId::Power: case PrimId::Rem: case PrimId::Lshift: case PrimId::Rshift:
    case PrimId::Sqrt: case PrimId::Ln: case PrimId::Exp: case PrimId::Sin: case PrimId::Cos:
    case PrimId::Tan: case PrimId::Asin: case PrimId::Acos: case PrimId::Atan: case PrimId::Sinh:
    case PrimId::Cosh: case PrimId::Tanh: case PrimId::Expt:
    case PrimId::Btoi: case PrimId::CodeChar: case PrimId::CharCode: case PrimId::ToFloat:
    case PrimId::Ceil: case PrimId::Floor: case PrimId::Trunc: case PrimId::Round:
    case PrimId::ToI32: case PrimId::ToF32: case PrimId::ToI64: case PrimId::ToF64:
    case PrimId::Rand: case PrimId::RandSeed:
    case PrimId::Select:
      return apply_scalar_prim(call, args);

    case PrimId::Length: case PrimId::Dist: case PrimId::Index: case PrimId::Iseq:
    case PrimId::Elt: case PrimId::Rep:
    case PrimId::PlusScan: case PrimId::MultScan: case PrimId::MaxScan: case PrimId::MinScan:
    case PrimId::OrScan: case PrimId::AndScan: case PrimId::XorScan:
    case PrimId::Sum: case PrimId::Product: case PrimId::MaxVal: case PrimId::MinVal:
    case PrimId::AnyRed: case PrimId::AllRed: case PrimId::Parity:
    case PrimId::Gather: case PrimId::Write: case PrimId::Put: case PrimId::Permute:
    case PrimId::Join:
    case PrimId::Pack: case PrimId::Identity: case PrimId::PrimDefault: case PrimId::Eql: case PrimId::Hash:
    case PrimId::Append: case PrimId::Partition: case PrimId::Flatten:
    case PrimId::Rank: case PrimId::RankDown:
    case PrimId::ToString: case PrimId::Pad: case PrimId::ExpString:
    case PrimId::PlusCombine: case PrimId::MultCombine: case PrimId::MaxCombine:
    case PrimId::MinCombine: case PrimId::AndCombine: case PrimId::OrCombine:
    case PrimId::XorCombine:
      return apply_seq_prim(call, args);

    case PrimId::PrintChar: case PrimId::PrintString: case PrimId::Error:
    case PrimId::RuntimeErrorPrim:
    case PrimId::StreamConst: case PrimId::OpenInFile: case PrimId::OpenOutFile:
    case PrimId::OpenAppendFile: case PrimId::CloseFile: case PrimId::WriteChar:
    case PrimId::WriteString: case PrimId::WriteObject: case PrimId::ReadChar:
    case PrimId::ReadString: case PrimId::ReadObject: case PrimId::ShellCommand:
    case PrimId::GetEnv: case PrimId::Spawn:
      return apply_io_prim(call, args);

    case PrimId::Count_:
      break;
  }
  throw InternalError("internal error: apply_prim: unknown primitive");
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
  call.fail("No identity value for a function type.");
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
