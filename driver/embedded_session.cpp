// The embedding API's session: compile with errors as exceptions, and calls through a global
// argument (exec/host/bound_global.h).
#include "driver/embedded_session.h"

#include <fmt/format.h>

#include <utility>

#include "driver/session_impl.h"
#include "exec/api/api_impl.h"
#include "exec/host/convert.h"
#include "flatten/pipeline.h"
#include "include/ndp/ndp.hpp"

namespace ndp::driver {

using lang::Type;
using lang::TypeKind;

namespace {

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

namespace {

/// Errors of the session go to `errors` while it lives (`slot`: Session::Impl::capture).
struct Capture {
  CapturedErrors*& slot;
  CapturedErrors errors;
  explicit Capture(CapturedErrors*& s) : slot(s) { slot = &errors; }
  ~Capture() { slot = nullptr; }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
};

}  // namespace

void EmbeddedSession::throw_captured(CapturedErrors c) {
  detail::fail_at(impl_->sm, c.first_span, std::move(c.text), std::move(c.first_message));
}

void EmbeddedSession::compile(std::string name, std::string text) {
  Session::Impl& s = *impl_;
  std::string warnings;
  {
    Capture c(s.capture);
    s.eval_text(std::move(name), std::move(text), /*print_answers=*/false, /*echo_definitions=*/false);
    if (c.errors.failed) throw_captured(std::move(c.errors));
    warnings = std::move(c.errors.text);
  }
  if (!warnings.empty()) std::fputs(warnings.c_str(), stderr);
}

std::shared_ptr<const EmbeddedSession::Entry> EmbeddedSession::entry(std::string_view name, std::string_view arg_type,
                                                                     std::string_view result_type) {
  Session::Impl& s = *impl_;
  lang::core::Program& prog = s.prog;
  std::optional<uint32_t> id = s.checker.lookup(name);
  if (!id || prog.globals.at(*id)->kind != lang::core::Global::Kind::Function)
    api_error(fmt::format("the program has no function named '{}'", name));
  const lang::core::Global& g = *prog.globals[*id];
  const Type* arg = lang::read_plain_type(prog.types, arg_type);
  const Type* result = lang::read_plain_type(prog.types, result_type);
  NDP_ASSERT(arg && result, "the embedding header wrote a type the session cannot read");
  std::vector<const Type*> targs(g.scheme.vars.size());
  if (!match(g.scheme.type, prog.types.fn(arg, result), g.scheme.vars, targs))
    api_error(fmt::format("function '{}' has type {}, which does not fit the handle's {} -> {}", name,
                          lang::type_to_string(g.scheme), lang::type_to_string(arg, {}),
                          lang::type_to_string(result, {})));
  return make_entry(*id, arg, result, std::move(targs), s.opts.backend != Backend::Interp);
}

std::shared_ptr<const EmbeddedSession::Entry> EmbeddedSession::entry(uint32_t global, const Type* arg,
                                                                     const Type* result) {
  NDP_ASSERT(impl_->prog.globals.at(global)->scheme.is_mono(), "a compiled entry of a polymorphic function");
  return make_entry(global, arg, result, {}, /*flat=*/true);
}

std::shared_ptr<const EmbeddedSession::Entry> EmbeddedSession::make_entry(uint32_t id, const Type* arg,
                                                                          const Type* result,
                                                                          std::vector<const Type*> targs, bool flat) {
  Session::Impl& s = *impl_;
  lang::core::Program& prog = s.prog;
  const lang::core::Global& g = *prog.globals[id];
  for (const Type*& t : targs)
    if (!t) t = prog.types.int_();  // a variable the types do not mention: any instance serves

  auto e = std::make_shared<Entry>();
  e->name = g.name;
  e->arg_type = arg;
  e->result_type = result;
  lang::core::Global* a = prog.new_global(lang::core::Global::Kind::Variable, fmt::format("<argument of {}>", g.name));
  a->scheme.type = arg;
  e->argument = static_cast<uint32_t>(prog.globals.size() - 1);
  // f(ARG) placed at the function's definition: an error inside it is reported where it is.
  lang::Span at = g.fn.span;
  lang::core::Expr* callee = prog.new_expr(lang::core::Kind::FnRef, prog.types.fn(arg, result), at);
  callee->id = id;
  callee->type_args = std::move(targs);
  lang::core::Expr* argument = prog.new_expr(lang::core::Kind::Global, arg, at);
  argument->id = e->argument;
  lang::core::Expr* call = prog.new_expr(lang::core::Kind::Call, result, at);
  call->args = {callee, argument};
  calls_[e.get()] = call;
  if (flat) {
    try {
      e->flat = flatten::flatten(prog, call);
    } catch (const flatten::Unsupported& u) {
      Capture c(s.capture);
      s.error_at(u.span, std::string("not supported by the ") + backend_name(s.opts.backend) + " backend yet: " + u.message);
      throw_captured(std::move(c.errors));
    }
  }
  return e;
}

exec::host::ExecValue EmbeddedSession::call(const Entry& e, const exec::host::ExecValue& argument, bool device_result) {
  Session::Impl& s = *impl_;
  exec::host::BoundGlobal bound[] = {{e.argument, argument.vec, argument.device}};
  exec::host::ExecValue result;
  lang::eval::RunResult r;
  if (s.opts.backend == Backend::Interp) {
    NDP_ASSERT(!argument.device, "a device vector on the interp backend");
    lang::core::Global& g = *s.prog.globals.at(e.argument);
    g.set_value(exec::host::to_value(argument.vec, 0));
    r = s.interp.run(lang::core::TopExpr{calls_.at(&e), 0});
    g.clear_value();
    if (r.ok) result.vec = exec::host::from_value(s.prog.types, e.result_type, r.value, 1);
  } else {
    r = s.run_flat(e.flat, bound, &result.vec,
                   device_result && s.opts.backend == Backend::Cuda ? &result.device : nullptr);
  }
  if (!r.ok) {
    Capture c(s.capture);
    s.report_runtime_error(r.error);
    throw_captured(std::move(c.errors));
  }
  return result;
}

std::string EmbeddedSession::eval(std::string_view expression) {
  Session::Impl& s = *impl_;
  Capture c(s.capture);
  const lang::ast::TopLevel* form = s.parse_expr_form(expression, "<eval>");
  std::optional<frontend::CheckedForm> cf = form ? s.checker.check(*form) : std::nullopt;
  s.flush_diags();
  if (!cf) throw_captured(std::move(c.errors));
  std::optional<lang::Value> v = s.run_checked(*cf);
  if (!v) throw_captured(std::move(c.errors));
  return s.value_text(*v, cf->type);
}

}  // namespace ndp::driver

namespace ndp::driver {

std::vector<uint32_t> EmbeddedSession::user_functions() const {
  const Session::Impl& s = *impl_;
  std::vector<uint32_t> out;
  for (uint32_t id = 0; id < s.prog.globals.size(); ++id) {
    const lang::core::Global& g = *s.prog.globals[id];
    if (g.kind != lang::core::Global::Kind::Function || g.library || !g.fn.body) continue;
    if (s.checker.lookup(g.name) == id) out.push_back(id);
  }
  return out;
}

std::optional<uint32_t> EmbeddedSession::lookup(std::string_view name) const { return impl_->checker.lookup(name); }

const lang::core::Program& EmbeddedSession::core() const { return impl_->prog; }

lang::TypeContext& EmbeddedSession::types() { return impl_->prog.types; }

std::string EmbeddedSession::error_text(lang::Span span, const std::string& message) const {
  return lang::format_diagnostic(impl_->sm, lang::Diagnostic{lang::Severity::Error, span, message, {}});
}

std::string EmbeddedSession::place(lang::Span span) const {
  return fmt::format("{}:{}", impl_->sm.name(span.file), impl_->sm.position(span).line);
}

std::string EmbeddedSession::image(std::span<const Entry* const> entries) const {
  const Session::Impl& s = *impl_;
  std::vector<flatten::SourceBuffer> sources;
  for (uint32_t file = 1; file <= s.sm.count(); ++file) {
    flatten::SourceBuffer b;
    b.name = s.sm.name(file);
    if (file > s.library_files) b.text = s.sm.text(file);
    b.origin = s.sm.origin(file);
    sources.push_back(std::move(b));
  }
  return flatten::write_image(s.prog, sources, s.library_files, entries);
}

}  // namespace ndp::driver
