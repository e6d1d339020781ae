// Run-time values of the reference interpreter, and their printing (language.md §5.3–5.6).
//
// Note [Values]
// Values are dynamically tagged. Scalars are stored inline; sequences, pairs, datatype values
// and function values are immutable heap objects shared by reference count, so copying a
// Value is cheap and "update" operations (rep, <-) build new sequences. An empty sequence does
// not know its element type: operations that need it (the identity of sum over [] float, the
// printing of "" vs []) get the static type from the Core IR instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "lang/types.h"

namespace ndp::lang {

enum class ValueKind : uint8_t { Int, Float, Bool, Char, I32, F32, Stream, Seq, Pair, Data, Fn };

struct SeqObj;
struct PairObj;
struct DataObj;
struct FnObj;

class Value {
 public:
  Value() : kind_(ValueKind::Bool), b_(false) {}
  static Value int_(int64_t v) { Value x(ValueKind::Int); x.i_ = v; return x; }
  static Value float_(double v) { Value x(ValueKind::Float); x.f_ = v; return x; }
  static Value bool_(bool v) { Value x(ValueKind::Bool); x.b_ = v; return x; }
  static Value char_(uint8_t v) { Value x(ValueKind::Char); x.c_ = v; return x; }
  static Value i32(int32_t v) { Value x(ValueKind::I32); x.i32_ = v; return x; }
  static Value f32(float v) { Value x(ValueKind::F32); x.f32_ = v; return x; }
  static Value stream(int64_t handle) { Value x(ValueKind::Stream); x.i_ = handle; return x; }
  static Value seq(std::vector<Value> elems);
  static Value pair(Value a, Value b);
  /// Right-nested tuple of the given components (at least one).
  static Value tuple(std::vector<Value> parts);
  static Value data(const DataDef* def, Value fields);
  static Value fn(std::shared_ptr<const FnObj> f);
  static Value string(std::string_view s);

  ValueKind kind() const { return kind_; }
  int64_t as_int() const { return i_; }
  double as_float() const { return f_; }
  bool as_bool() const { return b_; }
  uint8_t as_char() const { return c_; }
  int32_t as_i32() const { return i32_; }
  float as_f32() const { return f32_; }
  int64_t as_stream() const { return i_; }
  const std::vector<Value>& elems() const;  // Seq
  size_t length() const { return elems().size(); }
  const Value& first() const;   // Pair
  const Value& second() const;  // Pair
  const DataObj& data() const;
  const FnObj& fn() const;
  /// The bytes of a sequence of chars.
  std::string to_string() const;

 private:
  explicit Value(ValueKind k) : kind_(k), i_(0) {}
  ValueKind kind_;
  union {
    int64_t i_;
    double f_;
    bool b_;
    uint8_t c_;
    int32_t i32_;
    float f32_;
  };
  std::shared_ptr<const void> obj_;
};

struct SeqObj {
  std::vector<Value> elems;
};
struct PairObj {
  Value a, b;
};
struct DataObj {
  const DataDef* def;
  Value fields;
};

/// A function value: a global function, a primitive or a datatype constructor, with the type
/// arguments it was instantiated at (closed types, after substitution).
namespace core {
struct Expr;
}

struct FnObj {
  enum class Target : uint8_t { Global, Prim, Constructor, Lambda } target;
  uint32_t id = 0;  // global id / PrimId / DataDef id / lambda id (core::Program::lambda_count)
  const DataDef* data = nullptr;  // Constructor
  std::vector<const Type*> type_args;  // Lambda: those of its enclosing frame
  // Lambda (Note [Lambdas] in lang/core.h): its node, the size of its enclosing frame and the
  // captured values, in the order of lambda->captures.
  const core::Expr* lambda = nullptr;
  uint32_t frame_slots = 0;
  std::vector<Value> env;
};

/// Deep structural equality (library.md `eql`): floats compare with ==, functions by target.
bool values_equal(const Value& a, const Value& b);

// ---- Printing ----

struct PrintOptions {
  int print_length = 100;  // `set print_length N`; elements per sequence at each level
};

/// The REPL's format (language.md §5.3, floats §5.4): `[1, 2]`, `"ab"`, `(1, 2.5)`,
/// `point(1, 2)`, `fn`, `T`. The static type decides strings vs sequences and empty `""`.
std::string format_value(const Value& v, const Type* type, const PrintOptions& opts = {});
/// §5.4 float format: 15 significant digits, `1.0E7`, `inf`, `-inf`, `nan`.
std::string format_float(double x);
/// f32: the shortest decimal that reads back to the same f32, in NESL's float style.
std::string format_f32(float x);

/// `@x` (library.md §11): `t`/`f`, 8-digit floats with `e+N`, strings as char sequences.
std::string nesl_string_of(const Value& v);
/// exp_string(x, digits) (library.md §11).
std::string exp_string(double x, int digits_after_point);

/// A whole answer `NAME = VALUE : TYPE` broken into lines by the 120-column rule (§5.5).
Lines answer_lines(const std::string& name, const std::string& value_text, const Type* type,
                   const std::vector<TypeClass>& var_classes);

}  // namespace ndp::lang
