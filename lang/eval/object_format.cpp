// Writing and reading NESL's object format: see Note [Object format] in object_format.h.
#include "lang/eval/object_format.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "lang/runtime_errors.h"

namespace ndp::lang::eval {

namespace {

const Type* fields_type(const Type* t, TypeContext& types) {
  return types.subst(t->data->fields, t->args);
}

class Writer {
 public:
  explicit Writer(TypeContext& types) : types_(types) {}

  bool write(const Type* t, const std::vector<const Value*>& vs) {
    switch (t->kind) {
      case TypeKind::Seq: {
        out_ += "[";
        std::vector<const Value*> elems;
        for (const Value* v : vs) {
          out_ += fmt::format(" {}", v->length());
          for (const Value& e : v->elems()) elems.push_back(&e);
        }
        out_ += " ]\n";
        return write(t->a, elems);
      }
      case TypeKind::Pair: {
        std::vector<const Value*> as, bs;
        for (const Value* v : vs) {
          as.push_back(&v->first());
          bs.push_back(&v->second());
        }
        return write(t->a, as) && write(t->b, bs);
      }
      case TypeKind::Data: {
        std::vector<const Value*> fields;
        for (const Value* v : vs) fields.push_back(&v->data().fields);
        return write(fields_type(t, types_), fields);
      }
      case TypeKind::Fn:
        error_ = "ERROR: write_object cannot write function values.";
        return false;
      case TypeKind::Var:
        error_ = "ERROR: write_object needs a value of a known type.";
        return false;
      default:
        out_ += "(";
        for (const Value* v : vs) out_ += " " + scalar_text(*v);
        out_ += " )\n";
        return true;
    }
  }

  std::string out_, error_;

 private:
  static std::string scalar_text(const Value& v) {
    switch (v.kind()) {
      case ValueKind::Int: return fmt::format("{}", v.as_int());
      case ValueKind::Float: return fmt::format("{:.17g}", v.as_float());
      case ValueKind::Bool: return v.as_bool() ? "T" : "F";
      case ValueKind::Char: return fmt::format("{}", static_cast<int>(v.as_char()));
      case ValueKind::I32: return fmt::format("{}", v.as_i32());
      case ValueKind::F32: return fmt::format("{:.9g}", v.as_f32());
      case ValueKind::Stream: return fmt::format("{}", v.as_stream());
      default: return "?";
    }
  }
  TypeContext& types_;
};

class Reader {
 public:
  Reader(std::FILE* f, TypeContext& types) : f_(f), types_(types) {}

  bool read(const Type* t, size_t n, std::vector<Value>* out) {
    switch (t->kind) {
      case TypeKind::Seq: {
        std::vector<std::string> toks;
        if (!vector_tokens('[', ']', &toks)) return false;
        if (toks.size() != n) return bad("a descriptor of the wrong length");
        std::vector<size_t> lengths;
        size_t total = 0;
        for (const std::string& tok : toks) {
          char* end = nullptr;
          errno = 0;
          long long l = std::strtoll(tok.c_str(), &end, 10);
          if (*end || errno || l < 0) return bad("a bad segment length");
          lengths.push_back(static_cast<size_t>(l));
          total += static_cast<size_t>(l);
        }
        std::vector<Value> elems;
        if (!read(t->a, total, &elems)) return false;
        size_t pos = 0;
        for (size_t l : lengths) {
          out->push_back(Value::seq(std::vector<Value>(elems.begin() + static_cast<ptrdiff_t>(pos),
                                                       elems.begin() + static_cast<ptrdiff_t>(pos + l))));
          pos += l;
        }
        return true;
      }
      case TypeKind::Pair: {
        std::vector<Value> as, bs;
        if (!read(t->a, n, &as) || !read(t->b, n, &bs)) return false;
        for (size_t i = 0; i < n; ++i) out->push_back(Value::pair(as[i], bs[i]));
        return true;
      }
      case TypeKind::Data: {
        std::vector<Value> fields;
        if (!read(fields_type(t, types_), n, &fields)) return false;
        for (Value& v : fields) out->push_back(Value::data(t->data, std::move(v)));
        return true;
      }
      case TypeKind::Fn:
      case TypeKind::Var:
        error_ = "ERROR: read_object cannot read a value of this type.";
        return false;
      default: {
        std::vector<std::string> toks;
        if (!vector_tokens('(', ')', &toks)) return false;
        if (toks.size() != n) return bad("a data vector of the wrong length");
        for (const std::string& tok : toks) {
          Value v;
          if (!scalar(t->kind, tok, &v)) return bad("a bad scalar");
          out->push_back(std::move(v));
        }
        return true;
      }
    }
  }

  std::string error_;

 private:
  bool bad(const char* what) {
    error_ = std::string("ERROR: read_object found ") + what + ".";
    return false;
  }

  int skip_space() {
    int ch;
    do ch = std::getc(f_);
    while (ch != EOF && std::isspace(ch));
    return ch;
  }

  /// Reads `open tok tok ... close` into toks.
  bool vector_tokens(char open, char close, std::vector<std::string>* toks) {
    int ch = skip_space();
    if (ch == EOF) {
      error_ = message(RuntimeErrorId::EndOfFile);
      return false;
    }
    if (ch != open) return bad(open == '[' ? "no [ where a descriptor was expected" : "no ( where data was expected");
    for (;;) {
      ch = skip_space();
      if (ch == EOF) return bad("the end of the file inside a vector");
      if (ch == close) return true;
      std::string tok;
      while (ch != EOF && !std::isspace(ch) && ch != close) {
        tok += static_cast<char>(ch);
        ch = std::getc(f_);
      }
      toks->push_back(std::move(tok));
      if (ch == close) return true;
    }
  }

  static bool scalar(TypeKind k, const std::string& tok, Value* v) {
    char* end = nullptr;
    errno = 0;
    switch (k) {
      case TypeKind::Bool:
        if (tok != "T" && tok != "F") return false;
        *v = Value::bool_(tok == "T");
        return true;
      case TypeKind::Float: *v = Value::float_(std::strtod(tok.c_str(), &end)); break;
      case TypeKind::F32: *v = Value::f32(std::strtof(tok.c_str(), &end)); break;
      default: {
        long long x = std::strtoll(tok.c_str(), &end, 10);
        if (errno) return false;
        if (k == TypeKind::Int) *v = Value::int_(x);
        else if (k == TypeKind::I32) *v = Value::i32(static_cast<int32_t>(x));
        else if (k == TypeKind::Char) {
          if (x < 0 || x > 255) return false;
          *v = Value::char_(static_cast<uint8_t>(x));
        } else if (k == TypeKind::Stream) *v = Value::stream(x);
        else return false;
      }
    }
    return end && *end == '\0' && !tok.empty();
  }

  std::FILE* f_;
  TypeContext& types_;
};

}  // namespace

bool write_object_text(const Value& v, const Type* t, TypeContext& types, std::string* text, std::string* error) {
  Writer w(types);
  bool ok = w.write(t, {&v});
  *text = std::move(w.out_);
  *error = std::move(w.error_);
  return ok;
}

bool read_object_from(std::FILE* f, const Type* t, TypeContext& types, Value* out, std::string* error) {
  Reader r(f, types);
  std::vector<Value> vs;
  if (!r.read(t, 1, &vs)) {
    *error = std::move(r.error_);
    return false;
  }
  *out = std::move(vs[0]);
  return true;
}

}  // namespace ndp::lang::eval
