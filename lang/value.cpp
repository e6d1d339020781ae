// Construction and access of run-time values; structural equality.
#include "lang/value.h"

#include "lang/diagnostics.h"

namespace ndp::lang {

Value Value::seq(std::vector<Value> elems) {
  Value x(ValueKind::Seq);
  x.obj_ = std::make_shared<const SeqObj>(SeqObj{std::move(elems)});
  return x;
}

Value Value::pair(Value a, Value b) {
  Value x(ValueKind::Pair);
  x.obj_ = std::make_shared<const PairObj>(PairObj{std::move(a), std::move(b)});
  return x;
}

Value Value::tuple(std::vector<Value> parts) {
  NDP_ASSERT(!parts.empty(), "empty tuple");
  Value v = parts.back();
  for (size_t i = parts.size() - 1; i-- > 0;) v = pair(parts[i], v);
  return v;
}

Value Value::data(const DataDef* def, Value fields) {
  Value x(ValueKind::Data);
  x.obj_ = std::make_shared<const DataObj>(DataObj{def, std::move(fields)});
  return x;
}

Value Value::fn(std::shared_ptr<const FnObj> f) {
  Value x(ValueKind::Fn);
  x.obj_ = std::move(f);
  return x;
}

Value Value::string(std::string_view s) {
  std::vector<Value> elems;
  elems.reserve(s.size());
  for (char c : s) elems.push_back(char_(static_cast<uint8_t>(c)));
  return seq(std::move(elems));
}

const std::vector<Value>& Value::elems() const {
  NDP_ASSERT(kind_ == ValueKind::Seq, "not a sequence");
  return static_cast<const SeqObj*>(obj_.get())->elems;
}

const Value& Value::first() const {
  NDP_ASSERT(kind_ == ValueKind::Pair, "not a pair");
  return static_cast<const PairObj*>(obj_.get())->a;
}

const Value& Value::second() const {
  NDP_ASSERT(kind_ == ValueKind::Pair, "not a pair");
  return static_cast<const PairObj*>(obj_.get())->b;
}

const DataObj& Value::data() const {
  NDP_ASSERT(kind_ == ValueKind::Data, "not a datatype value");
  return *static_cast<const DataObj*>(obj_.get());
}

const FnObj& Value::fn() const {
  NDP_ASSERT(kind_ == ValueKind::Fn, "not a function");
  return *static_cast<const FnObj*>(obj_.get());
}

std::string Value::to_string() const {
  std::string s;
  for (const Value& c : elems()) s += static_cast<char>(c.as_char());
  return s;
}

bool values_equal(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::Int: return a.as_int() == b.as_int();
    case ValueKind::Float: return a.as_float() == b.as_float();
    case ValueKind::Bool: return a.as_bool() == b.as_bool();
    case ValueKind::Char: return a.as_char() == b.as_char();
    case ValueKind::I32: return a.as_i32() == b.as_i32();
    case ValueKind::F32: return a.as_f32() == b.as_f32();
    case ValueKind::Stream: return a.as_stream() == b.as_stream();
    case ValueKind::Seq: {
      const auto& x = a.elems();
      const auto& y = b.elems();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i)
        if (!values_equal(x[i], y[i])) return false;
      return true;
    }
    case ValueKind::Pair: return values_equal(a.first(), b.first()) && values_equal(a.second(), b.second());
    case ValueKind::Data:
      return a.data().def == b.data().def && values_equal(a.data().fields, b.data().fields);
    case ValueKind::Fn: return a.fn().target == b.fn().target && a.fn().id == b.fn().id;
  }
  return false;
}

}  // namespace ndp::lang
