// The embedding API's session: compile with errors as exceptions, and calls through a global
// argument (exec/host/bound_global.h).
#include "driver/embedded_session.h"

#include <fmt/format.h>

#include <cctype>
#include <utility>

#include "driver/session_impl.h"
#include "exec/host/convert.h"
#include "flatten/pipeline.h"
#include "include/ndp/ndp.hpp"

namespace ndp::driver {

using lang::Type;
using lang::TypeKind;

struct EmbeddedSession::Entry {
  std::string name;
  uint32_t argument = 0;  // the global each call binds
  const Type* arg_type = nullptr;
  const Type* result_type = nullptr;
  lang::core::TopExpr top;  // `f(ARG)`: the interpreter runs it
  flatten::Program flat;    // the same, flattened: the cpu and cuda backends run it
};

namespace {

/// Reads a type in the NESL syntax the header's Traits write: int float bool char i32 f32,
/// [T], and (T1, ..., Tk) as right-nested pairs.
class TypeReader {
 public:
  TypeReader(lang::TypeContext& types, std::string_view text) : types_(types), text_(text) {}

  const Type* read() {
    const Type* t = type();
    skip_space();
    return pos_ == text_.size() ? t : nullptr;
  }

 private:
  const Type* type() {
    skip_space();
    if (pos_ >= text_.size()) return nullptr;
    if (text_[pos_] == '[') {
      ++pos_;
      const Type* e = type();
      return e && eat(']') ? types_.seq(e) : nullptr;
    }
    if (text_[pos_] == '(') {
      ++pos_;
      std::vector<const Type*> parts;
      do {
        const Type* p = type();
        if (!p) return nullptr;
        parts.push_back(p);
      } while (eat(','));
      if (!eat(')')) return nullptr;
      const Type* t = parts.back();
      for (size_t i = parts.size() - 1; i-- > 0;) t = types_.pair(parts[i], t);
      return t;
    }
    size_t start = pos_;
    while (pos_ < text_.size() && std::isalnum(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    std::string_view word = text_.substr(start, pos_ - start);
    if (word == "int") return types_.int_();
    if (word == "float") return types_.float_();
    if (word == "bool") return types_.bool_();
    if (word == "char") return types_.char_();
    if (word == "i32") return types_.i32();
    if (word == "f32") return types_.f32();
    return nullptr;
  }
  void skip_space() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  lang::TypeContext& types_;
  std::string_view text_;
  size_t pos_ = 0;
};

/// Binds the scheme variables of `pattern` so that it equals `concrete`; false if it cannot.
bool match(const Type* pattern, const Type* concrete, const std::vector<lang::TypeClass>& classes,
           std::vector<const Type*>& binds) {
  if (pattern->kind == TypeKind::Var) {
    const Type*& b = binds.at(pattern->index);
    if (b) return b == concrete;
    if (!concrete->in_class(classes.at(pattern->index))) return false;
    b = concrete;
    return true;
  }
  if (pattern->kind != concrete->kind) return false;
  switch (pattern->kind) {
    case TypeKind::Seq: return match(pattern->a, concrete->a, classes, binds);
    case TypeKind::Pair:
    case TypeKind::Fn:
      return match(pattern->a, concrete->a, classes, binds) && match(pattern->b, concrete->b, classes, binds);
    case TypeKind::Data:
      if (pattern->data != concrete->data) return false;
      for (size_t i = 0; i < pattern->args.size(); ++i)
        if (!match(pattern->args[i], concrete->args[i], classes, binds)) return false;
      return true;
    default: return true;
  }
}

[[noreturn]] void api_error(std::string message) {
  throw ndp::Error("error: " + message, message);
}

}  // namespace

EmbeddedSession::EmbeddedSession(Backend backend, std::FILE* out)
    : impl_(std::make_unique<Session::Impl>(SessionOptions{out, stderr, backend, false})) {}

EmbeddedSession::~EmbeddedSession() = default;

void EmbeddedSession::throw_captured() {
  Session::Impl& s = *impl_;
  CapturedErrors c = std::move(*s.capture);
  s.capture = nullptr;
  std::string file;
  unsigned line = 0, col = 0;
  if (c.first_span.valid()) {
    file = s.sm.name(c.first_span.file);
    lang::LineCol lc = s.sm.position(c.first_span);
    line = lc.line;
    col = lc.col;
  }
  while (!c.text.empty() && c.text.back() == '\n') c.text.pop_back();
  throw ndp::Error(std::move(c.text), std::move(c.first_message), std::move(file), line, col);
}

void EmbeddedSession::compile(std::string name, std::string text) {
  Session::Impl& s = *impl_;
  CapturedErrors captured;
  s.capture = &captured;
  s.eval_text(std::move(name), std::move(text), /*print_answers=*/false, /*echo_definitions=*/false);
  if (captured.failed) throw_captured();
  s.capture = nullptr;
  if (!captured.text.empty()) std::fputs(captured.text.c_str(), stderr);  // warnings
}

std::shared_ptr<const EmbeddedSession::Entry> EmbeddedSession::entry(std::string_view name, std::string_view arg_type,
                                                                     std::string_view result_type) {
  Session::Impl& s = *impl_;
  lang::core::Program& prog = s.prog;
  std::optional<uint32_t> id = s.checker.lookup(name);
  if (!id || prog.globals.at(*id)->kind != lang::core::Global::Kind::Function)
    api_error(fmt::format("the program has no function named '{}'", name));
  const lang::core::Global& g = *prog.globals[*id];
  const Type* arg = TypeReader(prog.types, arg_type).read();
  const Type* result = TypeReader(prog.types, result_type).read();
  NDP_ASSERT(arg && result, "the embedding header wrote a type the session cannot read");
  const lang::TypeScheme& scheme = g.scheme;
  std::vector<const Type*> targs(scheme.vars.size());
  if (!match(scheme.type, prog.types.fn(arg, result), scheme.vars, targs))
    api_error(fmt::format("function '{}' has type {}, which does not fit the handle's {} -> {}", name,
                          lang::type_to_string(scheme), lang::type_to_string(arg, {}),
                          lang::type_to_string(result, {})));
  for (const Type*& t : targs)
    if (!t) t = prog.types.int_();  // a variable the types do not mention: any instance serves

  auto e = std::make_shared<Entry>();
  e->name = std::string(name);
  e->arg_type = arg;
  e->result_type = result;
  lang::core::Global* a = prog.new_global(lang::core::Global::Kind::Variable, fmt::format("<argument of {}>", name));
  a->scheme.type = arg;
  e->argument = static_cast<uint32_t>(prog.globals.size() - 1);
  // f(ARG) placed at the function's definition: an error inside it is reported where it is.
  lang::Span at = g.fn.span;
  lang::core::Expr* callee = prog.new_expr(lang::core::Kind::FnRef, prog.types.fn(arg, result), at);
  callee->id = *id;
  callee->type_args = targs;
  lang::core::Expr* argument = prog.new_expr(lang::core::Kind::Global, arg, at);
  argument->id = e->argument;
  lang::core::Expr* call = prog.new_expr(lang::core::Kind::Call, result, at);
  call->args = {callee, argument};
  e->top.body = call;
  if (s.opts.backend != Backend::Interp) {
    try {
      e->flat = flatten::flatten(prog, call);
    } catch (const flatten::Unsupported& u) {
      CapturedErrors captured;
      s.capture = &captured;
      s.error_at(u.span, std::string("not supported by the ") + backend_name(s.opts.backend) + " backend yet: " + u.message);
      throw_captured();
    }
  }
  return e;
}

exec::host::Vec EmbeddedSession::call(const Entry& e, const exec::host::Vec& argument) {
  Session::Impl& s = *impl_;
  exec::host::BoundGlobal bound[] = {{e.argument, argument}};
  exec::host::Vec result;
  lang::eval::RunResult r;
  if (s.opts.backend == Backend::Interp) {
    lang::core::Global& g = *s.prog.globals.at(e.argument);
    g.value = exec::host::to_value(argument, 0);
    g.has_value = true;
    r = s.interp.run(e.top);
    g.value = {};
    g.has_value = false;
    if (r.ok) result = exec::host::from_value(s.prog.types, e.result_type, r.value, 1);
  } else {
    r = s.run_flat(e.flat, bound, &result);
  }
  if (!r.ok) {
    CapturedErrors captured;
    s.capture = &captured;
    s.report_runtime_error(r.error);
    throw_captured();
  }
  return result;
}

std::string EmbeddedSession::eval(std::string_view expression) {
  Session::Impl& s = *impl_;
  CapturedErrors captured;
  s.capture = &captured;
  const lang::ast::TopLevel* form = s.parse_expr_form(expression, "<eval>");
  std::optional<frontend::CheckedForm> cf = form ? s.checker.check(*form) : std::nullopt;
  s.flush_diags();
  if (!cf) throw_captured();
  std::optional<lang::Value> v = s.run_checked(*cf);
  if (!v) throw_captured();
  s.capture = nullptr;
  return s.value_text(*v, cf->type);
}

}  // namespace ndp::driver
