// The monomorphic NESL types that the differential tester generates programs over.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ndp::difftest {

struct Type;
using TypeP = std::shared_ptr<const Type>;

/// A concrete (monomorphic) type. Generated programs never need type variables: every
/// expression is built for one requested type, which also lets the self-test compare the
/// checker's inferred type with the one the generator intended.
struct Type {
  enum class Kind { Int, Float, Bool, Char, I32, F32, Seq, Pair, Data };
  Kind kind = Kind::Int;
  TypeP a, b;        // Seq: a = element; Pair: a, b = components
  std::string name;  // Data: the datatype's name
  TypeP fields;      // Data: the constructor's argument type (right-nested pairs)
};

TypeP t_int();
TypeP t_float();
TypeP t_bool();
TypeP t_char();
TypeP t_i32();
TypeP t_f32();
TypeP t_seq(TypeP elem);
TypeP t_pair(TypeP a, TypeP b);
TypeP t_data(std::string name, TypeP fields);

bool same_type(const TypeP& x, const TypeP& y);
bool is_scalar(const TypeP& t);
bool is_number(const TypeP& t);   // int, float, i32, f32
bool is_ordinal(const TypeP& t);  // number or char
bool is_logical(const TypeP& t);  // int, bool, i32
bool is_float_like(const TypeP& t);
/// How many sequence levels `t` nests, counting through tuples and datatype fields.
int seq_depth(const TypeP& t);
/// True when the type contains f32 anywhere (answers then use the f32 tolerance).
bool mentions_f32(const TypeP& t);
/// The components of a constructor's field type, flattened along the right spine.
std::vector<TypeP> tuple_components(const TypeP& t);

/// Source syntax, usable after `[]` and in signatures: `int`, `[int]`, `(int, float)`.
std::string type_source(const TypeP& t);
/// How ndp prints the type of an answer (language.md §3.9): `int, float`, `[(int, char)]`.
std::string type_answer(const TypeP& t);

}  // namespace ndp::difftest
