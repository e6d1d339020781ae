// Construction, classification and printing of the tester's monomorphic types.
#include "tests/difftest/gen_type.h"

namespace ndp::difftest {

namespace {

TypeP make(Type::Kind k) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  return t;
}

// Pairs print without parentheses only at the top of an answer and on the right spine
// (language.md §3.9); `paren` says whether this position needs them.
std::string answer_text(const TypeP& t, bool paren) {
  switch (t->kind) {
    case Type::Kind::Seq: return "[" + answer_text(t->a, true) + "]";
    case Type::Kind::Pair: {
      std::string inner = answer_text(t->a, true) + ", " + answer_text(t->b, false);
      return paren ? "(" + inner + ")" : inner;
    }
    default: return type_source(t);
  }
}

}  // namespace

TypeP t_int() {
  static TypeP t = make(Type::Kind::Int);
  return t;
}
TypeP t_float() {
  static TypeP t = make(Type::Kind::Float);
  return t;
}
TypeP t_bool() {
  static TypeP t = make(Type::Kind::Bool);
  return t;
}
TypeP t_char() {
  static TypeP t = make(Type::Kind::Char);
  return t;
}
TypeP t_i32() {
  static TypeP t = make(Type::Kind::I32);
  return t;
}
TypeP t_f32() {
  static TypeP t = make(Type::Kind::F32);
  return t;
}

TypeP t_seq(TypeP elem) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Seq;
  t->a = std::move(elem);
  return t;
}

TypeP t_pair(TypeP a, TypeP b) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Pair;
  t->a = std::move(a);
  t->b = std::move(b);
  return t;
}

TypeP t_data(std::string name, TypeP fields) {
  auto t = std::make_shared<Type>();
  t->kind = Type::Kind::Data;
  t->name = std::move(name);
  t->fields = std::move(fields);
  return t;
}

bool same_type(const TypeP& x, const TypeP& y) {
  if (x == y) return true;
  if (!x || !y || x->kind != y->kind) return false;
  switch (x->kind) {
    case Type::Kind::Seq: return same_type(x->a, y->a);
    case Type::Kind::Pair: return same_type(x->a, y->a) && same_type(x->b, y->b);
    case Type::Kind::Data: return x->name == y->name;
    default: return true;
  }
}

bool is_scalar(const TypeP& t) {
  return t->kind != Type::Kind::Seq && t->kind != Type::Kind::Pair && t->kind != Type::Kind::Data;
}

bool is_number(const TypeP& t) {
  return t->kind == Type::Kind::Int || t->kind == Type::Kind::Float || t->kind == Type::Kind::I32 ||
         t->kind == Type::Kind::F32;
}

bool is_ordinal(const TypeP& t) { return is_number(t) || t->kind == Type::Kind::Char; }

bool is_logical(const TypeP& t) {
  return t->kind == Type::Kind::Int || t->kind == Type::Kind::Bool || t->kind == Type::Kind::I32;
}

bool is_float_like(const TypeP& t) { return t->kind == Type::Kind::Float || t->kind == Type::Kind::F32; }

int seq_depth(const TypeP& t) {
  switch (t->kind) {
    case Type::Kind::Seq: return 1 + seq_depth(t->a);
    case Type::Kind::Pair: return std::max(seq_depth(t->a), seq_depth(t->b));
    case Type::Kind::Data: return seq_depth(t->fields);
    default: return 0;
  }
}

bool mentions_f32(const TypeP& t) {
  switch (t->kind) {
    case Type::Kind::F32: return true;
    case Type::Kind::Seq: return mentions_f32(t->a);
    case Type::Kind::Pair: return mentions_f32(t->a) || mentions_f32(t->b);
    case Type::Kind::Data: return mentions_f32(t->fields);
    default: return false;
  }
}

std::vector<TypeP> tuple_components(const TypeP& t) {
  std::vector<TypeP> out;
  TypeP cur = t;
  while (cur->kind == Type::Kind::Pair) {
    out.push_back(cur->a);
    cur = cur->b;
  }
  out.push_back(cur);
  return out;
}

std::string type_source(const TypeP& t) {
  switch (t->kind) {
    case Type::Kind::Int: return "int";
    case Type::Kind::Float: return "float";
    case Type::Kind::Bool: return "bool";
    case Type::Kind::Char: return "char";
    case Type::Kind::I32: return "i32";
    case Type::Kind::F32: return "f32";
    case Type::Kind::Seq: return "[" + type_source(t->a) + "]";
    case Type::Kind::Pair: return "(" + type_source(t->a) + ", " + type_source(t->b) + ")";
    case Type::Kind::Data: return t->name;
  }
  return "int";
}

std::string type_answer(const TypeP& t) { return answer_text(t, false); }

}  // namespace ndp::difftest
