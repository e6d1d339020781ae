// NESL types after inference: interned, immutable, compared by pointer.
//
// Note [Types]
// Types that leave the type checker are built only through TypeContext, which hash-conses
// them, so two equal types are the same pointer and substitution never grows memory without
// bound (the interpreter substitutes type arguments at polymorphic calls).
//
// A polymorphic function has a TypeScheme: type variables 0..n-1, each with a class. Inside the
// function's Core IR, `Var(i)` refers to the scheme's variable i. There are no nested
// polymorphic scopes (NESL has no local function definitions), so one index space per function
// suffices. Tuples are right-nested pairs, exactly as in NESL: (a, b, c) is Pair(a, Pair(b, c)).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ndp::lang {

/// NESL's type classes. number ⊂ ordinal ⊂ any, logical ⊂ any; number and logical are
/// incomparable (language.md §3.6).
enum class TypeClass : uint8_t { Any, Ordinal, Number, Logical };
const char* class_name(TypeClass c);
/// The narrower of two classes if one contains the other; otherwise false.
bool meet_class(TypeClass a, TypeClass b, TypeClass* out);

enum class TypeKind : uint8_t {
  Int,     // 64-bit
  Float,   // binary64
  Bool,
  Char,
  I32,     // extension: 32-bit int
  F32,     // extension: binary32
  Stream,  // I/O streams (library.md §13)
  Var,     // scheme variable `index` with class `cls`
  Seq,     // [elem]
  Pair,    // (a, b)
  Fn,      // a -> b
  Data,    // user datatype `data` applied to `args`
};

struct DataDef;

struct Type {
  TypeKind kind;
  TypeClass cls = TypeClass::Any;  // Var only
  uint32_t index = 0;              // Var only
  const Type* a = nullptr;         // Seq elem, Pair first, Fn argument
  const Type* b = nullptr;         // Pair second, Fn result
  const DataDef* data = nullptr;   // Data only
  std::vector<const Type*> args;   // Data parameters

  bool is_scalar() const { return kind <= TypeKind::F32; }
  bool in_class(TypeClass c) const;  // for concrete types
};

/// A user datatype: `datatype point(int, int)` or `datatype box(a) :: (a in any)`.
struct DataDef {
  std::string name;             // lower case
  uint32_t id = 0;              // unique per session
  std::vector<TypeClass> params;  // classes of parameters, in context order
  const Type* fields = nullptr;   // field type over Var(0..k-1) (the constructor's argument)
};

/// `forall vars. type`; vars[i] is the class of Var(i).
struct TypeScheme {
  std::vector<TypeClass> vars;
  const Type* type = nullptr;
  bool is_mono() const { return vars.empty(); }
};

/// Owns and interns all types of a session.
class TypeContext {
 public:
  TypeContext();
  ~TypeContext();
  TypeContext(const TypeContext&) = delete;
  TypeContext& operator=(const TypeContext&) = delete;

  const Type* int_() const { return int_t_; }
  const Type* float_() const { return float_t_; }
  const Type* bool_() const { return bool_t_; }
  const Type* char_() const { return char_t_; }
  const Type* i32() const { return i32_t_; }
  const Type* f32() const { return f32_t_; }
  const Type* stream() const { return stream_t_; }
  const Type* string() { return seq(char_t_); }

  const Type* var(uint32_t index, TypeClass cls);
  const Type* seq(const Type* elem);
  const Type* pair(const Type* a, const Type* b);
  const Type* fn(const Type* arg, const Type* result);
  const Type* data(const DataDef* def, std::vector<const Type*> args);

  /// Replaces Var(i) by args[i] (args.size() must cover every index that occurs).
  const Type* subst(const Type* t, const std::vector<const Type*>& args);

  DataDef* new_datadef(std::string name);

 private:
  const Type* intern(Type t);
  struct Key;
  struct KeyHash;
  // Interning is thread-safe: the cpu backend's tasks may make types while running (Note
  // [Small segments in one task] in exec/cpu/executor.cpp).
  std::mutex mu_;
  std::unordered_map<std::string, const Type*> table_;
  std::vector<std::unique_ptr<Type>> owned_;
  std::vector<std::unique_ptr<DataDef>> datadefs_;
  const Type *int_t_, *float_t_, *bool_t_, *char_t_, *i32_t_, *f32_t_, *stream_t_;
};

bool contains_vars(const Type* t);

/// A closed type without datatypes in NESL syntax: int float bool char i32 f32 stream, [T],
/// and (T1, ..., Tk) as right-nested pairs; null if `text` is not one. For the embedding API,
/// whose header spells its handles' types so (include/ndp/ndp.hpp), without the front end.
const Type* read_plain_type(TypeContext& types, std::string_view text);

/// "int", "float", "bool", "char", "i32", "f32", "stream" for the base kinds; "?" otherwise.
const char* base_type_name(TypeKind k);

// ---- Printing (language.md §3.9 and §5.5) ----

/// One line of a printed answer: indentation and text (language.md §5.5).
struct PrintLine {
  int indent = 0;
  std::string text;
};
using Lines = std::vector<PrintLine>;

/// §5.5's join(A, B) with the 120-column rule.
Lines join_lines(const Lines& a, const Lines& b);
Lines lines_of(std::string s);
/// J(X1, ..., Xk), joined right to left.
Lines join_all(const std::vector<Lines>& parts);

/// The type with its ` :: (a in C; ...)` context, variables named by CMU's rule
/// (§3.9: a..e if at most five, else a0, a1, ...; ordered by last occurrence, function
/// results before arguments), as a line list ready for an answer.
Lines type_lines(const Type* t, const std::vector<TypeClass>& var_classes);
/// The same on one line (used in error messages and `:type`).
std::string type_to_string(const Type* t, const std::vector<TypeClass>& var_classes);
std::string type_to_string(const TypeScheme& s);
/// Writes lines as the REPL does in non-interactive mode: each line + '\n'.
std::string render_lines(const Lines& lines);

}  // namespace ndp::lang
