// Printing of values: the REPL format (language.md §5.3–5.5) and `@` (library.md §11).
//
// Note [Printed streams]
// NESL prints no stream values (CMU has none at top level); ndp prints a stream as `stream`
// in both the REPL format and `@`, so an answer that holds one stays readable.
#include "lang/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace ndp::lang {

namespace {

// A decimal number D[0].D[1..] × 10^E with trailing zeros already removed from D.
struct Decimal {
  std::string digits;
  int exponent = 0;
};

// Splits C's `%e`-style text ("d.ddde+XX", also what to_chars writes) into digits and exponent.
Decimal parse_scientific(const std::string& text) {
  Decimal d;
  size_t e = text.find_first_of("eE");
  for (size_t i = 0; i < e; ++i)
    if (text[i] >= '0' && text[i] <= '9') d.digits += text[i];
  d.exponent = std::atoi(text.c_str() + e + 1);
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
  return d;
}

// NESL's layout of a rounded magnitude: positional for 10^-3 <= v < 10^7, otherwise
// `D.DDD` + exponent, where only the exponent's spelling differs between the REPL (`E7`,
// `E-4`) and `@` (`e+7`, `e-4`).
std::string layout(const Decimal& d, bool at_style) {
  const std::string& D = d.digits;
  const int E = d.exponent;
  if (E >= -3 && E < 7) {
    if (E < 0) return "0." + std::string(static_cast<size_t>(-E - 1), '0') + D;
    size_t int_len = static_cast<size_t>(E) + 1;
    std::string int_part = D.substr(0, std::min(int_len, D.size()));
    if (int_part.size() < int_len) int_part.append(int_len - int_part.size(), '0');
    std::string frac = D.size() > int_len ? D.substr(int_len) : "0";
    return int_part + "." + frac;
  }
  std::string s = D.substr(0, 1) + "." + (D.size() > 1 ? D.substr(1) : "0");
  if (at_style) return s + (E < 0 ? "e-" : "e+") + std::to_string(std::abs(E));
  return s + "E" + std::to_string(E);
}

// Values printed without the digit recipe: zero of either sign is `0.0` everywhere, and
// inf/nan, which NESL cannot print, take extensions.md §1's spelling.
bool special_float(double x, std::string* out) {
  if (std::isnan(x)) {
    *out = "nan";
    return true;
  }
  if (std::isinf(x)) {
    *out = x > 0 ? "inf" : "-inf";
    return true;
  }
  if (x == 0) {
    *out = "0.0";
    return true;
  }
  return false;
}

std::string sci_text(double magnitude, int digits_after_point) {
  int n = std::snprintf(nullptr, 0, "%.*e", digits_after_point, magnitude);
  std::string buf(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(buf.data(), buf.size(), "%.*e", digits_after_point, magnitude);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

// `@`'s 8 significant digits. library.md §11 states it with log10 and a scaled round; %.7e is
// the same rounding done exactly, and it also works for subnormals and huge magnitudes.
std::string float_at(double x) {
  std::string special;
  if (special_float(x, &special)) return special;
  std::string s = layout(parse_scientific(sci_text(std::fabs(x), 7)), true);
  return x < 0 ? "-" + s : s;
}

// ---- REPL format ----

// A type in the context of the datatype whose fields it describes: a field type is written
// over the datatype's parameters Var(0..k-1), and env maps them to the instance's arguments
// (each again relative to its own env). This avoids needing a TypeContext to substitute.
struct TypeRef {
  const Type* type = nullptr;
  const std::vector<TypeRef>* env = nullptr;
};

TypeRef resolve(TypeRef r) {
  while (r.type && r.type->kind == TypeKind::Var && r.env && r.type->index < r.env->size())
    r = (*r.env)[r.type->index];
  // A variable left over means the type is not known here; the printer then goes by the tags.
  if (r.type && r.type->kind == TypeKind::Var) return {};
  return r;
}

TypeRef child(TypeRef r, TypeKind kind, bool second) {
  r = resolve(r);
  if (!r.type || r.type->kind != kind) return {};
  return TypeRef{second ? r.type->b : r.type->a, r.env};
}

class ReplPrinter {
 public:
  explicit ReplPrinter(const PrintOptions& opts) : limit_(opts.print_length < 0 ? 0 : opts.print_length) {}

  void value(const Value& v, TypeRef ty) {
    switch (v.kind()) {
      case ValueKind::Int: out_ += std::to_string(v.as_int()); return;
      case ValueKind::Float: out_ += format_float(v.as_float()); return;
      case ValueKind::Bool: out_ += v.as_bool() ? "T" : "F"; return;
      case ValueKind::Char:
        out_ += '`';
        out_ += static_cast<char>(v.as_char());
        return;
      case ValueKind::I32: out_ += std::to_string(v.as_i32()); return;
      case ValueKind::F32: out_ += format_f32(v.as_f32()); return;
      case ValueKind::Stream: out_ += "stream"; return;  // Note [Printed streams]
      case ValueKind::Fn: out_ += "fn"; return;
      case ValueKind::Seq: sequence(v, ty); return;
      case ValueKind::Pair:
        out_ += '(';
        tuple_body(v, ty);
        out_ += ')';
        return;
      case ValueKind::Data: data(v, ty); return;
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void sequence(const Value& v, TypeRef ty) {
    const std::vector<Value>& elems = v.elems();
    TypeRef elem = child(ty, TypeKind::Seq, false);
    TypeRef elem_resolved = resolve(elem);
    // The static type decides (it is the only way to know that an empty sequence is ""); the
    // element tags are the fallback where the type is unknown.
    bool is_string = elem_resolved.type ? elem_resolved.type->kind == TypeKind::Char
                                        : !elems.empty() && elems.front().kind() == ValueKind::Char;
    if (is_string) {
      out_ += '"';
      for (const Value& c : elems) {
        char ch = static_cast<char>(c.as_char());
        if (ch == '"' || ch == '\\') out_ += '\\';
        out_ += ch;
      }
      out_ += '"';
      return;
    }
    if (elems.empty()) {
      out_ += "[]";
      return;
    }
    if (limit_ == 0) {
      out_ += "[...]";
      return;
    }
    out_ += '[';
    size_t shown = std::min(elems.size(), static_cast<size_t>(limit_));
    for (size_t i = 0; i < shown; ++i) {
      if (i > 0) out_ += ", ";
      value(elems[i], elem);
    }
    out_ += shown < elems.size() ? ",...]" : "]";
  }

  // Components without the outer parentheses: the right component continues the flat list,
  // a left component that is a pair keeps its own parentheses.
  void tuple_body(const Value& p, TypeRef ty) {
    TypeRef left = child(ty, TypeKind::Pair, false);
    TypeRef right = child(ty, TypeKind::Pair, true);
    if (p.first().kind() == ValueKind::Pair) {
      out_ += '(';
      tuple_body(p.first(), left);
      out_ += ')';
    } else {
      value(p.first(), left);
    }
    out_ += ", ";
    if (p.second().kind() == ValueKind::Pair)
      tuple_body(p.second(), right);
    else
      value(p.second(), right);
  }

  void data(const Value& v, TypeRef ty) {
    const DataObj& obj = v.data();
    TypeRef r = resolve(ty);
    std::vector<TypeRef> env;
    if (r.type && r.type->kind == TypeKind::Data)
      for (const Type* arg : r.type->args) env.push_back(TypeRef{arg, r.env});
    TypeRef fields{obj.def->fields, &env};
    out_ += obj.def->name;
    out_ += '(';
    if (obj.fields.kind() == ValueKind::Pair)
      tuple_body(obj.fields, fields);
    else
      value(obj.fields, fields);
    out_ += ')';
  }

  int limit_;
  std::string out_;
};

// ---- `@` format ----

void at_value(const Value& v, std::string& out);

void at_tuple_body(const Value& p, std::string& out) {
  if (p.first().kind() == ValueKind::Pair) {
    out += '(';
    at_tuple_body(p.first(), out);
    out += ')';
  } else {
    at_value(p.first(), out);
  }
  out += ", ";
  if (p.second().kind() == ValueKind::Pair)
    at_tuple_body(p.second(), out);
  else
    at_value(p.second(), out);
}

void at_value(const Value& v, std::string& out) {
  switch (v.kind()) {
    case ValueKind::Int: out += std::to_string(v.as_int()); return;
    case ValueKind::Float: out += float_at(v.as_float()); return;
    case ValueKind::Bool: out += v.as_bool() ? "t" : "f"; return;
    case ValueKind::Char:
      out += '`';
      out += static_cast<char>(v.as_char());
      return;
    case ValueKind::I32: out += std::to_string(v.as_i32()); return;
    case ValueKind::F32: out += float_at(static_cast<double>(v.as_f32())); return;
    case ValueKind::Stream: out += "stream"; return;  // Note [Printed streams]
    case ValueKind::Fn: out += "function"; return;
    case ValueKind::Seq: {
      out += '[';
      bool first = true;
      for (const Value& e : v.elems()) {
        if (!first) out += ", ";
        first = false;
        at_value(e, out);
      }
      out += ']';
      return;
    }
    case ValueKind::Pair:
      out += '(';
      at_tuple_body(v, out);
      out += ')';
      return;
    // A datatype value is its field tuple, as a whole (parenthesised when it has several
    // fields), also where it is a tuple's right component.
    case ValueKind::Data: at_value(v.data().fields, out); return;
  }
}

}  // namespace

std::string format_float(double x) {
  std::string special;
  if (special_float(x, &special)) return special;
  // §5.4: %.14e rounding is what CMU's VCODE writes; trailing zeros then vanish.
  std::string s = layout(parse_scientific(sci_text(std::fabs(x), 14)), false);
  return x < 0 ? "-" + s : s;
}

std::string format_f32(float x) {
  std::string special;
  if (special_float(static_cast<double>(x), &special)) return special;
  // to_chars without a precision gives the shortest text that reads back to the same float.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, std::fabs(x), std::chars_format::scientific);
  std::string s = layout(parse_scientific(std::string(buf, res.ptr)), false);
  return x < 0 ? "-" + s : s;
}

std::string format_value(const Value& v, const Type* type, const PrintOptions& opts) {
  ReplPrinter p(opts);
  p.value(v, TypeRef{type, nullptr});
  return p.take();
}

std::string nesl_string_of(const Value& v) {
  std::string out;
  at_value(v, out);
  return out;
}

std::string exp_string(double x, int digits_after_point) {
  // The caller reports digits_after_point > 8 as a NESL runtime error before calling.
  std::string special;
  if (special_float(x, &special)) return special;
  std::string s = sci_text(x, std::max(digits_after_point, 0));
  // C writes at least two exponent digits ("e+03"); NESL writes none extra ("e+3").
  size_t e = s.find('e');
  std::string mantissa = s.substr(0, e);
  char sign = s[e + 1];
  int exponent = std::abs(std::atoi(s.c_str() + e + 1));
  return mantissa + "e" + sign + std::to_string(exponent);
}

Lines answer_lines(const std::string& name, const std::string& value_text, const Type* type,
                   const std::vector<TypeClass>& var_classes) {
  return join_all({lines_of(name), lines_of(" = "), lines_of(value_text), lines_of(" : "),
                   type_lines(type, var_classes)});
}

}  // namespace ndp::lang
