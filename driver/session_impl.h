// Private to driver/: the state of a Session, shared by the files that implement it
// (session.cpp: evaluation of forms; commands.cpp: the NESL and REPL commands).
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "driver/session.h"
#include "exec/cpu/executor.h"
#include "exec/cuda/executor.h"
#include "frontend/frontend.h"
#include "lang/core.h"
#include "lang/diagnostics.h"
#include "lang/eval/interp.h"
#include "lang/value.h"

namespace ndp::driver {

struct KeptVector;  // session.cpp (Note [Globals kept as vectors])

/// Errors kept instead of printed (the embedding API turns them into exceptions).
struct CapturedErrors {
  std::string text;          // every diagnostic and runtime error, as they would print
  bool failed = false;       // an error (not only warnings) was captured
  lang::Span first_span;     // the first error's place and message
  std::string first_message;
};

struct Session::Impl {
  SessionOptions opts;
  CapturedErrors* capture = nullptr;  // when set, errors go here, not to opts.err
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::core::Program prog;
  lang::DiagnosticEngine diags;
  frontend::Checker checker{prog, diags};
  lang::eval::Interpreter interp;
  std::unique_ptr<exec::cpu::CpuExecutor> cpu;  // made on first use
  std::unique_ptr<exec::cuda::CudaExecutor> cuda;  // made on first use
  lang::PrintOptions print;
  uint32_t library_files = 0;  // source buffers 1..library_files hold the standard library
  bool exit_requested = false;
  bool interrupted = false;  // a form of the text being evaluated was interrupted: stop the text
  bool verbose = false;
  bool arg_check = true;
  std::string last_loaded;
  int load_depth = 0;

  explicit Impl(SessionOptions o);

  void load_stdlib();

  void flush_diags();

  /// The flattener's warnings (an `at LEVEL` not honoured), each place once a session.
  void report_warnings(const flatten::Program& program);
  std::set<std::pair<uint32_t, uint32_t>> warned;  // (file, offset) of the warnings given

  void print_lines(const lang::Lines& lines);

  void report_runtime_error(const lang::eval::RuntimeError& e);

  /// Runs a top-level body on the session's backend. For an assignment the top frame's slots
  /// are filled from the value (the flat backends have no frame of their own).
  /// `kept`, where given and the body's value can stay a vector (Note [Globals kept as
  /// vectors] in session.cpp), receives it, and the result's value is only what prints.
  lang::eval::RunResult run_top(const lang::core::TopExpr& top, bool assignment, KeptVector* kept = nullptr);

  /// Runs a flattened body on the cpu or cuda backend (made on first use), with `bound` globals
  /// (exec/host/bound_global.h); the result is left in `*result`.
  lang::eval::RunResult run_flat(const flatten::Program& program, std::span<const exec::host::BoundGlobal> bound,
                                 exec::host::Vec* result, std::shared_ptr<const void>* device_result = nullptr);

  static void bind_slots(const lang::core::Pattern* p, const lang::Value& v, std::vector<lang::Value>& frame);

  /// Runs an expression or assignment form and stores what it defines; a failed run restores the
  /// bindings the form replaced, so `it` and the variables keep their previous values.
  lang::eval::RunResult run_and_bind(const frontend::CheckedForm& cf);

  /// Runs one checked form, reporting a runtime error; returns the value on success.
  std::optional<lang::Value> run_checked(const frontend::CheckedForm& cf);

  std::string value_text(const lang::Value& v, const lang::Type* t) { return lang::format_value(v, t, print); }

  bool run_form(const lang::ast::TopLevel& form, bool print_answers, bool echo_definitions = true);

  void error_at(lang::Span span, std::string message);

  bool load_file(const std::string& path, lang::Span where);

  bool eval_text(std::string name, std::string text, bool print_answers, bool echo_definitions = true,
                 uint32_t first_line = 1);

  // ---- NESL top-level commands (driver/commands.cpp) ----
  /// help, set, show status, describe, apropos, exit.
  bool run_command(const lang::ast::TopLevel& form);
  bool describe(const lang::ast::TopLevel& form, const std::string& name);

  /// Parses a buffer and type-checks each form (commands are skipped), reporting diagnostics;
  /// `then` runs on each form that checks. False if anything failed.
  template <class Then>
  bool check_forms(std::string name, std::string text, Then then) {
    uint32_t file = sm.add(std::move(name), std::move(text));
    auto forms = frontend::parse_program(ast, sm, file, diags);
    bool ok = !diags.has_errors();
    flush_diags();
    for (const auto* form : forms) {
      if (form->kind == lang::ast::TopKind::Command) continue;
      std::optional<frontend::CheckedForm> cf = checker.check(*form);
      flush_diags();
      ok = cf && then(*cf) && ok;
    }
    return ok;
  }



  /// The Core IR of a function form, or the Core/Flat IR of an expression or assignment.
  std::string dump_form(Stage stage, const frontend::CheckedForm& cf);

  /// Parses `text` as one expression form for tests and REPL commands.
  const lang::ast::TopLevel* parse_expr_form(std::string_view text, std::string_view name, lang::LineCol origin = {1, 1});

  ExprOutcome diag_outcome();
};

}  // namespace ndp::driver
