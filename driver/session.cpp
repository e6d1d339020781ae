// The session: stdlib start-up, evaluation of top-level forms on the chosen backend, answers.
#include "driver/session.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/kernel_dumps.h"
#include "driver/llvm_kernels.h"
#include "driver/session_impl.h"
#include "exec/host/convert.h"
#include "flatten/pipeline.h"
#include "include/ndp/interrupt.h"
#include "lang/runtime_errors.h"

namespace ndp::driver {

namespace {

struct EmbeddedSource {
  const char* name;
  const char* text;
};

const EmbeddedSource kStdlib[] = {
#include "stdlib_sources.inc"
};

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Interp: return "interp";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "interp";
}

std::optional<DumpStage> parse_stage(std::string_view name) {
  if (name == "core") return DumpStage::Core;
  if (name == "flat") return DumpStage::Flat;
  if (name == "llvm") return DumpStage::Llvm;
  if (name == "ptx") return DumpStage::Ptx;
  return std::nullopt;
}

std::optional<Backend> parse_backend(std::string_view name) {
  if (name == "interp") return Backend::Interp;
  if (name == "cpu") return Backend::Cpu;
  if (name == "cuda") return Backend::Cuda;
  return std::nullopt;
}

std::string backend_unavailable_reason(Backend b) {
  switch (b) {
    case Backend::Interp: return "";
    case Backend::Cpu:
      return "";
    case Backend::Cuda: return exec::cuda::CudaExecutor::unavailable_reason();
  }
  return "unknown backend";
}

Session::Impl::Impl(SessionOptions o) : opts(o), interp(prog, lang::eval::InterpOptions{o.out}) {
  install_llvm_kernels();
  load_stdlib();
}

void Session::Impl::load_stdlib() {
  checker.set_library_mode(true);
  for (const EmbeddedSource& src : kStdlib) {
    uint32_t file = sm.add(src.name, src.text);
    auto forms = frontend::parse_program(ast, sm, file, diags);
    bool ok = !diags.has_errors();
    flush_diags();
    for (const auto* form : forms) ok = ok && run_form(*form, /*print_answers=*/false);
    // The stdlib ships with ndp: a failure here is a bug in ndp, reported above.
    if (!ok) throw lang::InternalError(std::string("the standard library failed to load (") + src.name + ")");
  }
  checker.set_library_mode(false);
  library_files = static_cast<uint32_t>(std::size(kStdlib));
  interp.set_library_files(library_files);
}

void Session::Impl::report_warnings(const flatten::Program& program) {
  for (const lang::Diagnostic& w : program.warnings)
    if (warned.insert({w.span.file, w.span.begin}).second) diags.add(w);
  flush_diags();
}

void Session::Impl::flush_diags() {
  if (!diags.all().empty()) {
    std::string text = format_diagnostics(sm, diags.all());
    if (capture) {
      for (const lang::Diagnostic& d : diags.all())
        if (d.severity == lang::Severity::Error && !capture->failed) {
          capture->failed = true;
          capture->first_span = d.span;
          capture->first_message = d.message;
        }
      capture->text += text;
    } else {
      // fwrite, not fputs: a quoted source line may hold a NUL byte, and the caret line follows it.
      std::fwrite(text.data(), 1, text.size(), opts.err);
      std::fflush(opts.err);
    }
  }
  diags.clear();
}

void Session::Impl::print_lines(const lang::Lines& lines) {
  // fwrite, not fputs: a char or string answer may contain a NUL byte, printed raw (§5.3).
  std::string text = lang::render_lines(lines);
  std::fwrite(text.data(), 1, text.size(), opts.out);
  std::fflush(opts.out);
}

void Session::Impl::report_runtime_error(const lang::eval::RuntimeError& e) {
  // An interrupted form also stops the file it is in (`load`): the user asked for the prompt.
  if (e.message == lang::message(lang::RuntimeErrorId::Interrupted)) interrupted = true;
  std::string text = lang::format_runtime_error(sm, e.message, e.span);
  if (capture) {
    if (!capture->failed) {
      capture->failed = true;
      capture->first_span = e.span;
      capture->first_message = e.message;
    }
    capture->text += text;
    return;
  }
  std::fflush(opts.out);
  std::fwrite(text.data(), 1, text.size(), opts.err);  // (NUL bytes as in flush_diags)
  std::fflush(opts.err);
}

// Note [Globals kept as vectors]
// A top-level form's value on a flat backend is a vector of one instance. Made into an
// interpreter Value, a sequence of 10^7 points is 10^7 objects: seconds of allocation and page
// faults, where the program that made it took milliseconds, and again when the next form reads
// it back into a vector. So a form whose value goes to one global (`x = e $`, or `e $` into
// `it`) keeps the vector there (Global::set_vector): a Global statement reads it as it is (on
// cuda uploaded once, or kept on the device where it was made), the answer prints from a
// Value of the elements it shows (print_length a sequence, exec::host::shown_value), and the
// whole Value is made only where something needs one (the interp backend, `ndp compile`'s
// image). A value holding functions, and a tuple pattern's parts, go through Values as before.
struct KeptVector {
  std::shared_ptr<const exec::host::Vec> vec;
  std::shared_ptr<const void> device;  // on cuda: the same value on the device
};

namespace {

bool holds_functions(const lang::Type* t) {
  if (t == nullptr) return true;
  switch (t->kind) {
    case lang::TypeKind::Fn: case lang::TypeKind::Var: case lang::TypeKind::Data: case lang::TypeKind::Stream:
      return true;  // functions, or what may hold them; streams stay as they were
    case lang::TypeKind::Seq: return holds_functions(t->a);
    case lang::TypeKind::Pair: return holds_functions(t->a) || holds_functions(t->b);
    default: return false;
  }
}

}  // namespace

/// Runs a top-level body on the session's backend. For an assignment the top frame's slots
/// are filled from the value (the flat backends have no frame of their own).
lang::eval::RunResult Session::Impl::run_top(const lang::core::TopExpr& top, bool assignment, KeptVector* kept) {
  if (opts.backend == Backend::Interp) return interp.run(top);
  lang::eval::RunResult r;
  try {
    flatten::Program program = flatten::flatten(prog, top.body);
    report_warnings(program);
    save_ptx_for_check(program);
    if (kept != nullptr && holds_functions(top.body->type)) kept = nullptr;
    exec::host::Vec value;
    std::shared_ptr<const void> device;
    r = run_flat(program, {}, &value, kept != nullptr && opts.backend == Backend::Cuda ? &device : nullptr);
    if (r.ok && kept != nullptr) {
      const int64_t shown = std::max(print.print_length, 0) + 1;  // one past the limit prints `...`
      r.value = exec::host::shown_value(value, 0, shown);
      kept->vec = std::make_shared<const exec::host::Vec>(std::move(value));
      kept->device = std::move(device);
    } else if (r.ok) {
      r.value = exec::host::to_value(value, 0);
    }
  } catch (const flatten::Unsupported& u) {
    r.ok = false;
    r.error = lang::eval::RuntimeError{std::string("not supported by the ") + backend_name(opts.backend) + " backend yet: " + u.message, u.span};
    return r;
  } catch (const Interrupted&) {  // while flattening (Note [Cancellation] in include/ndp/interrupt.h)
    interrupt_flag().store(false);
    r.ok = false;
    r.error = lang::eval::RuntimeError{lang::message(lang::RuntimeErrorId::Interrupted), top.body->span};
    return r;
  }
  if (r.ok && assignment && (kept == nullptr || !kept->vec)) {  // the body is `let PATTERN = value in PATTERN-as-a-value`
    r.frame.resize(top.num_slots);
    bind_slots(top.body->pattern, r.value, r.frame);
  }
  return r;
}

lang::eval::RunResult Session::Impl::run_flat(const flatten::Program& program,
                                              std::span<const exec::host::BoundGlobal> bound,
                                              exec::host::Vec* result, std::shared_ptr<const void>* device_result) {
  if (opts.backend == Backend::Cuda) {
    if (!cuda) {
      cuda = std::make_unique<exec::cuda::CudaExecutor>(prog, opts.out);
      cuda->set_library_files(library_files);
    }
    int64_t before = cuda->host_fallbacks();
    lang::eval::RunResult r = cuda->run_bound(program, bound, result, device_result);
    // Where a program leaves the device (Note [GPU lifted primitives]).
    if (const char* d = std::getenv("NDP_DEBUG"); d != nullptr && std::atoi(d) >= 1)
      std::fprintf(opts.err, "ndp: cuda: %lld primitive applications ran on the host; kernels: %s\n",
                   static_cast<long long>(cuda->host_fallbacks() - before), cuda->kernel_stats().c_str());
    return r;
  }
  if (!cpu) {
    cpu = std::make_unique<exec::cpu::CpuExecutor>(prog, opts.out);
    cpu->set_library_files(library_files);
  }
  return cpu->run_bound(program, bound, result);
}

void Session::Impl::bind_slots(const lang::core::Pattern* p, const lang::Value& v, std::vector<lang::Value>& frame) {
  switch (p->kind) {
    case lang::core::PatternKind::Var: frame.at(p->slot) = v; return;
    case lang::core::PatternKind::Tuple:
      bind_slots(p->left, v.first(), frame);
      bind_slots(p->right, v.second(), frame);
      return;
    case lang::core::PatternKind::Con: bind_slots(p->left, v.data().fields, frame); return;
  }
}

/// Runs an expression or assignment form and stores what it defines; a failed run restores the
/// bindings the form replaced, so `it` and the variables keep their previous values.
lang::eval::RunResult Session::Impl::run_and_bind(const frontend::CheckedForm& cf) {
  const bool assignment = cf.kind == lang::ast::TopKind::Assign;
  // Note [Globals kept as vectors]: a value that goes to one global whole.
  const bool one_global = assignment ? cf.top.body->pattern->kind == lang::core::PatternKind::Var && cf.assign_slots.size() == 1
                                     : cf.kind == lang::ast::TopKind::Expr;
  KeptVector kept;
  lang::eval::RunResult r = run_top(cf.top, assignment, one_global ? &kept : nullptr);
  if (!r.ok) {
    checker.restore(cf);
    return r;
  }
  if (kept.vec) {
    auto& g = *prog.globals.at(assignment ? cf.assign_slots.front().second : cf.global);
    std::shared_ptr<const exec::host::Vec> vec = kept.vec;
    g.set_vector(vec, std::move(kept.device), [vec] { return exec::host::to_value(*vec, 0); });
  } else if (assignment) {
    for (auto [slot, global] : cf.assign_slots) prog.globals.at(global)->set_value(r.frame.at(slot));
  } else if (cf.kind == lang::ast::TopKind::Expr) {
    prog.globals.at(cf.global)->set_value(r.value);
  }
  return r;
}

/// Runs one checked form, reporting a runtime error; returns the value on success.
std::optional<lang::Value> Session::Impl::run_checked(const frontend::CheckedForm& cf) {
  lang::eval::RunResult r = run_and_bind(cf);
  if (!r.ok) {
    report_runtime_error(r.error);
    return std::nullopt;
  }
  return r.value;
}

bool Session::Impl::run_form(const lang::ast::TopLevel& form, bool print_answers, bool echo_definitions) {
  if (form.kind == lang::ast::TopKind::Command && form.name != "load") return run_command(form);
  std::optional<frontend::CheckedForm> cf = checker.check(form);
  if (!cf) {
    flush_diags();
    return false;
  }
  flush_diags();  // warnings
  for (const std::string& note : cf->notes) {
    std::fputs((note + "\n").c_str(), opts.out);
    std::fflush(opts.out);
  }
  switch (cf->kind) {
    case lang::ast::TopKind::Function:
    case lang::ast::TopKind::Datatype:
      if (print_answers && echo_definitions)
        print_lines(lang::answer_lines(cf->echo_name, "fn", cf->type, cf->type_vars));
      return true;
    case lang::ast::TopKind::Expr:
    case lang::ast::TopKind::Assign: {
      std::optional<lang::Value> v = run_checked(*cf);
      if (!v) return false;
      if (print_answers) print_lines(lang::answer_lines(cf->echo_name, value_text(*v, cf->type), cf->type, cf->type_vars));
      return true;
    }
    case lang::ast::TopKind::Command: {  // load EXP
      std::string path = last_loaded;
      if (form.command_exp) {
        lang::eval::RunResult r = interp.run(cf->top);
        if (!r.ok) {
          report_runtime_error(r.error);
          return false;
        }
        path = r.value.to_string();
      } else if (path.empty()) {
        error_at(form.span, "no file has been loaded yet, so `load` has nothing to reload");
        return false;
      }
      return load_file(path, form.span);
    }
  }
  return false;
}

void Session::Impl::error_at(lang::Span span, std::string message) {
  diags.error(span, std::move(message));
  flush_diags();
}

bool Session::Impl::load_file(const std::string& path, lang::Span where) {
  std::optional<std::string> text;
  std::string found;
  for (const std::string& candidate : {path, path + ".ndp", path + ".nesl"}) {
    if (std::filesystem::is_regular_file(candidate) && (text = read_file(candidate))) {
      found = candidate;
      break;
    }
  }
  if (!text) {
    error_at(where, fmt::format("File {} does not exist.", path));
    return false;
  }
  if (load_depth > 32) {
    error_at(where, fmt::format("load of {} nested too deeply (a file loads itself?)", path));
    return false;
  }
  last_loaded = path;
  ++load_depth;
  bool ok = eval_text(found, std::move(*text), /*print_answers=*/false);
  --load_depth;
  return ok;
}

bool Session::Impl::eval_text(std::string name, std::string text, bool print_answers, bool echo_definitions,
                              uint32_t first_line) {
  uint32_t file = sm.add(std::move(name), std::move(text), lang::LineCol{first_line, 1});
  auto forms = frontend::parse_program(ast, sm, file, diags);
  bool ok = !diags.has_errors();
  // The parser reads the whole text first; its errors are shown where they are in the text,
  // between the answers of the forms before and after them, as if read form by form.
  std::vector<lang::Diagnostic> parse_errors = diags.all();
  diags.clear();
  size_t shown = 0;
  auto show_parse_errors_before = [&](uint32_t offset) {
    for (; shown < parse_errors.size() && parse_errors[shown].span.begin < offset; ++shown) diags.add(parse_errors[shown]);
    flush_diags();
  };
  if (load_depth == 0) interrupted = false;
  for (const auto* form : forms) {
    show_parse_errors_before(form->span.begin);
    ok &= run_form(*form, print_answers, echo_definitions);
    if (exit_requested || interrupted) break;
  }
  if (!exit_requested && !interrupted) show_parse_errors_before(UINT32_MAX);
  return ok;
}

/// The Core IR of a function form, or the Core/Flat IR of an expression or assignment.
std::string Session::Impl::dump_form(Stage stage, const frontend::CheckedForm& cf) {
  if (cf.kind == lang::ast::TopKind::Function) {
    if (stage != Stage::Core) return "";  // flat code exists per instantiation: dump a call
    return lang::core::dump_function(prog, prog.globals.at(cf.global)->fn);
  }
  if (!cf.top.body) return "";
  if (stage == Stage::Core) return cf.echo_name + " = " + lang::core::dump_expr(prog, cf.top.body);
  try {
    flatten::Program program = flatten::flatten(prog, cf.top.body);
    if (stage == Stage::Flat) return flatten::print_program(program);
    return dump_kernels(stage, program);
  } catch (const flatten::Unsupported& u) {
    diags.error(u.span, "not supported by the flat backends yet: " + u.message);
    std::string t = format_diagnostics(sm, diags.all());
    diags.clear();
    return t;
  }
}

/// Parses `text` as one expression form for tests and REPL commands.
const lang::ast::TopLevel* Session::Impl::parse_expr_form(std::string_view text, std::string_view name, lang::LineCol origin) {
  uint32_t file = sm.add(std::string(name), std::string(text) + "\n$", origin);
  auto forms = frontend::parse_program(ast, sm, file, diags);
  if (diags.has_errors()) return nullptr;
  if (forms.size() != 1 || forms[0]->kind != lang::ast::TopKind::Expr) {
    diags.error(forms.empty() ? lang::Span{} : forms[0]->span, "expected one expression");
    return nullptr;
  }
  return forms[0];
}

ExprOutcome Session::Impl::diag_outcome() {
  ExprOutcome o;
  o.status = ExprOutcome::Status::CompileError;
  o.message = format_diagnostics(sm, diags.all());
  diags.clear();
  return o;
}


Session::Session(SessionOptions opts) : impl_(std::make_unique<Impl>(opts)) {}
Session::~Session() = default;

bool Session::eval_text(std::string name, std::string text, bool print_answers, bool echo_definitions, uint32_t first_line) {
  return impl_->eval_text(std::move(name), std::move(text), print_answers, echo_definitions, first_line);
}

bool Session::dump_file(Stage stage, std::string name, std::string text) {
  Impl& s = *impl_;
  return s.check_forms(std::move(name), std::move(text), [&](const frontend::CheckedForm& cf) {
    std::string dump = s.dump_form(stage, cf);
    if (!dump.empty()) std::fputs((dump + "\n").c_str(), s.opts.out);
    // Run it too, so that later forms see the values of the globals it defines.
    if (cf.kind == lang::ast::TopKind::Expr || cf.kind == lang::ast::TopKind::Assign) return s.run_checked(cf).has_value();
    return true;
  });
}

bool Session::load_file(const std::string& path) { return impl_->load_file(path, lang::Span{}); }

bool Session::check_text(std::string name, std::string text) {
  return impl_->check_forms(std::move(name), std::move(text), [](const frontend::CheckedForm&) { return true; });
}

ExprOutcome Session::eval_expr(std::string_view text, std::string_view name, uint32_t line, uint32_t col) {
  Impl& s = *impl_;
  const lang::ast::TopLevel* form = s.parse_expr_form(text, name, lang::LineCol{line, col});
  if (!form) return s.diag_outcome();
  std::optional<frontend::CheckedForm> cf = s.checker.check(*form);
  if (!cf) return s.diag_outcome();
  ExprOutcome o;
  o.type = lang::type_to_string(cf->type, cf->type_vars);
  lang::eval::RunResult r = s.run_and_bind(*cf);
  if (!r.ok) {
    o.status = ExprOutcome::Status::RuntimeError;
    o.message = r.error.message;
    return o;
  }
  o.value = s.value_text(r.value, cf->type);
  return o;
}

ExprOutcome Session::type_of(std::string_view text) {
  Impl& s = *impl_;
  const lang::ast::TopLevel* form = s.parse_expr_form(text, "<type>");
  if (!form) return s.diag_outcome();
  std::optional<frontend::CheckedForm> cf = s.checker.check(*form);
  if (!cf) return s.diag_outcome();
  ExprOutcome o;
  o.type = lang::type_to_string(cf->type, cf->type_vars);
  return o;
}

std::string Session::dump(Stage stage, std::string_view text) {
  Impl& s = *impl_;
  const lang::ast::TopLevel* form = s.parse_expr_form(text, "<dump>");
  if (!form) return diag_text(s);
  std::optional<frontend::CheckedForm> cf = s.checker.check(*form);
  if (!cf) return diag_text(s);
  return s.dump_form(stage, *cf);
}

std::string Session::diag_text(Impl& s) {
  std::string t = format_diagnostics(s.sm, s.diags.all());
  s.diags.clear();
  return t;
}

std::FILE* Session::out() const { return impl_->opts.out; }
std::FILE* Session::err() const { return impl_->opts.err; }
bool Session::exit_requested() const { return impl_->exit_requested; }
void Session::set_backend(Backend b) { impl_->opts.backend = b; }
Backend Session::backend() const { return impl_->opts.backend; }
int Session::print_length() const { return impl_->print.print_length; }
bool Session::input_complete(std::string_view text) { return frontend::input_is_complete(text); }

}  // namespace ndp::driver
