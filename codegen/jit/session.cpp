// The session: stdlib start-up, evaluation of top-level forms, REPL commands and answers.
#include "codegen/jit/session.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/common/kernel_compiler.h"
#include "codegen/cpu/flat_exec.h"
#include "codegen/cuda/cuda_exec.h"
#include "codegen/cuda/consumer_kernels.h"
#include "runtime/gpu/consumer_program.h"
#include "codegen/cpu/kernel_jit.h"
#include "flatten/passes/ir_walk.h"
#include "flatten/pipeline.h"
#include "frontend/frontend.h"
#include "lang/core.h"
#include "lang/diagnostics.h"
#include "lang/eval/interp.h"
#include "lang/value.h"

namespace ndp::jit {

namespace {

struct EmbeddedSource {
  const char* name;
  const char* text;
};

const EmbeddedSource kStdlib[] = {
#include "stdlib_sources.inc"
};

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* kHelpText =
    "ndp top-level forms (end each with $ or ;):\n"
    "  EXP                     evaluate EXP and bind it to `it`\n"
    "  PATTERN = EXP           define global variables\n"
    "  function NAME(ARGS) = EXP      define a function (optionally `: TYPE`)\n"
    "  datatype NAME(TYPES) [:: CONTEXT]  define a datatype\n"
    "NESL commands:\n"
    "  load \"FILE\"             evaluate every form of FILE (FILE, FILE.ndp, FILE.nesl)\n"
    "  load                    reload the last file\n"
    "  set print_length N      print at most N elements per sequence (default 100)\n"
    "  set arg_check on|off    accepted; ndp always checks arguments\n"
    "  set verbose on|off      accepted; ndp never prints progress messages\n"
    "  show status             print the settings\n"
    "  describe NAME           type and documentation of a function\n"
    "  apropos TEXT            names that contain TEXT\n"
    "  help, ?                 this text\n"
    "  exit                    leave ndp\n"
    "REPL commands:\n"
    "  :help                   this text\n"
    "  :type EXP               the type of EXP, without evaluating it\n"
    "  :load FILE              same as load \"FILE\"\n"
    "  :backend interp|cpu|cuda   choose the backend\n"
    "  :time EXP               evaluate EXP and print the time it took\n"
    "  :dump core|flat|llvm|ptx EXP   print EXP in an intermediate representation\n"
    "  :quit                   leave ndp\n";

}  // namespace

const char* backend_name(Backend b) {
  switch (b) {
    case Backend::Interp: return "interp";
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
  }
  return "interp";
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
    case Backend::Cuda: return codegen::cuda::CudaExecutor::unavailable_reason();
  }
  return "unknown backend";
}

struct Session::Impl {
  SessionOptions opts;
  lang::SourceManager sm;
  lang::ast::AstContext ast;
  lang::core::Program prog;
  lang::DiagnosticEngine diags;
  frontend::Checker checker{prog, diags};
  lang::eval::Interpreter interp;
  std::unique_ptr<codegen::cpu::CpuExecutor> cpu;  // made on first use
  std::unique_ptr<codegen::cuda::CudaExecutor> cuda;  // made on first use
  lang::PrintOptions print;
  bool exit_requested = false;
  bool verbose = false;
  bool arg_check = true;
  std::string last_loaded;
  int load_depth = 0;

  explicit Impl(SessionOptions o) : opts(o), interp(prog, lang::eval::InterpOptions{o.out}) { load_stdlib(); }

  void load_stdlib() {
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
    interp.set_library_files(static_cast<uint32_t>(std::size(kStdlib)));
  }

  void flush_diags() {
    if (!diags.all().empty()) {
      std::fputs(format_diagnostics(sm, diags.all()).c_str(), opts.err);
      std::fflush(opts.err);
    }
    diags.clear();
  }

  void print_lines(const lang::Lines& lines) {
    // fwrite, not fputs: a char or string answer may contain a NUL byte, printed raw (§5.3).
    std::string text = lang::render_lines(lines);
    std::fwrite(text.data(), 1, text.size(), opts.out);
    std::fflush(opts.out);
  }

  void report_runtime_error(const lang::eval::RuntimeError& e) {
    std::string text = "RUNTIME ERROR: " + e.message + "\n";
    if (e.span.valid()) text += format_diagnostic(sm, lang::Diagnostic{lang::Severity::Note, e.span, "raised here", {}});
    std::fflush(opts.out);
    std::fputs(text.c_str(), opts.err);
    std::fflush(opts.err);
  }

  /// Runs a top-level body on the session's backend. For an assignment the top frame's slots
  /// are filled from the value (the flat backends have no frame of their own).
  lang::eval::RunResult run_top(const lang::core::TopExpr& top, bool assignment) {
    if (opts.backend == Backend::Interp) return interp.run(top);
    lang::eval::RunResult r;
    try {
      flat::Program program = flat::flatten(prog, top.body);
      save_ptx_for_check(program);
      if (opts.backend == Backend::Cuda) {
        if (!cuda) {
          cuda = std::make_unique<codegen::cuda::CudaExecutor>(prog, opts.out);
          cuda->set_library_files(static_cast<uint32_t>(std::size(kStdlib)));
        }
        int64_t before = cuda->host_fallbacks();
        r = cuda->run(program);
        // Where a program leaves the device (Note [GPU lifted primitives]).
        if (const char* d = std::getenv("NDP_DEBUG"); d != nullptr && std::atoi(d) >= 1)
          std::fprintf(opts.err, "ndp: cuda: %lld primitive applications ran on the host; kernels: %s\n",
                       static_cast<long long>(cuda->host_fallbacks() - before), cuda->kernel_stats().c_str());
      } else {
        if (!cpu) {
          cpu = std::make_unique<codegen::cpu::CpuExecutor>(prog, opts.out);
          cpu->set_library_files(static_cast<uint32_t>(std::size(kStdlib)));
        }
        r = cpu->run(program);
      }
    } catch (const flat::Unsupported& u) {
      r.ok = false;
      r.error = lang::eval::RuntimeError{std::string("not supported by the ") + backend_name(opts.backend) + " backend yet: " + u.message, u.span};
      return r;
    }
    if (r.ok && assignment) {  // the body is `let PATTERN = value in PATTERN-as-a-value`
      r.frame.resize(top.num_slots);
      bind_slots(top.body->pattern, r.value, r.frame);
    }
    return r;
  }

  static void bind_slots(const lang::core::Pattern* p, const lang::Value& v, std::vector<lang::Value>& frame) {
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
  lang::eval::RunResult run_and_bind(const frontend::CheckedForm& cf) {
    lang::eval::RunResult r = run_top(cf.top, cf.kind == lang::ast::TopKind::Assign);
    if (!r.ok) {
      checker.restore(cf);
      return r;
    }
    if (cf.kind == lang::ast::TopKind::Assign) {
      for (auto [slot, global] : cf.assign_slots) {
        auto& g = *prog.globals.at(global);
        g.value = r.frame.at(slot);
        g.has_value = true;
      }
    } else if (cf.kind == lang::ast::TopKind::Expr) {
      auto& g = *prog.globals.at(cf.global);
      g.value = r.value;
      g.has_value = true;
    }
    return r;
  }

  /// Runs one checked form, reporting a runtime error; returns the value on success.
  std::optional<lang::Value> run_checked(const frontend::CheckedForm& cf) {
    lang::eval::RunResult r = run_and_bind(cf);
    if (!r.ok) {
      report_runtime_error(r.error);
      return std::nullopt;
    }
    return r.value;
  }

  std::string value_text(const lang::Value& v, const lang::Type* t) { return lang::format_value(v, t, print); }

  bool run_form(const lang::ast::TopLevel& form, bool print_answers, bool echo_definitions = true) {
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

  void error_at(lang::Span span, std::string message) {
    diags.error(span, std::move(message));
    flush_diags();
  }

  bool load_file(const std::string& path, lang::Span where) {
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

  bool eval_text(std::string name, std::string text, bool print_answers, bool echo_definitions = true) {
    uint32_t file = sm.add(std::move(name), std::move(text));
    auto forms = frontend::parse_program(ast, sm, file, diags);
    bool ok = !diags.has_errors();
    flush_diags();
    for (const auto* form : forms) {
      ok &= run_form(*form, print_answers, echo_definitions);
      if (exit_requested) break;
    }
    return ok;
  }

  bool run_command(const lang::ast::TopLevel& form) {
    const auto& args = form.command_args;
    auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
    const std::string& word = form.name;
    if (word == "exit") {
      exit_requested = true;
      return true;
    }
    if (word == "help" || word == "?") {
      std::fputs(kHelpText, opts.out);
      return true;
    }
    if (word == "set") {
      if (arg(0) == "print_length" && args.size() == 2) {
        char* end = nullptr;
        long n = std::strtol(arg(1).c_str(), &end, 10);
        if (*end == '\0' && n >= 0) {
          print.print_length = static_cast<int>(n);
          return true;
        }
      } else if ((arg(0) == "arg_check" || arg(0) == "verbose") && args.size() == 2 &&
                 (arg(1) == "on" || arg(1) == "off")) {
        (arg(0) == "verbose" ? verbose : arg_check) = arg(1) == "on";
        return true;
      }
    }
    if (word == "show" && arg(0) == "status" && args.size() == 1) {
      std::fputs(fmt::format("verbose: {}\narg_check: {}\nprint_length: {}\nbackend: {}\n", verbose ? "on" : "off",
                             arg_check ? "on" : "off", print.print_length, backend_name(opts.backend))
                     .c_str(),
                 opts.out);
      return true;
    }
    if (word == "describe" && args.size() == 1) return describe(form, arg(0));
    if (word == "apropos" && args.size() == 1) {
      for (const std::string& n : checker.names())
        if (n.find(arg(0)) != std::string::npos) std::fputs((n + "\n").c_str(), opts.out);
      return true;
    }
    std::string all = upper(word);
    for (const std::string& a : args) all += " " + upper(a);
    error_at(form.span, "Unknown top level command: " + all);
    return false;
  }

  bool describe(const lang::ast::TopLevel& form, const std::string& name) {
    std::optional<uint32_t> id = checker.lookup(name);
    if (!id) {
      error_at(form.span, fmt::format("{} is undefined.", name));
      return false;
    }
    const auto& g = *prog.globals.at(*id);
    std::string kind = g.kind == lang::core::Global::Kind::Variable ? "variable"
                       : g.kind == lang::core::Global::Kind::Constructor ? "datatype constructor"
                       : g.kind == lang::core::Global::Kind::Prim ? "primitive function"
                                                                     : "function";
    std::string text = fmt::format("{} : {}\n  {}{}\n", g.name, lang::type_to_string(g.scheme), kind,
                                   g.library ? " (standard library)" : "");
    if (g.kind == lang::core::Global::Kind::Function && !g.fn.doc.empty()) text += "  " + g.fn.doc + "\n";
    std::fputs(text.c_str(), opts.out);
    return true;
  }

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

  /// Calls f(kernel statement, its function) for every fused kernel of a flat program (Kernel
  /// statements and the consumer kernels).
  static void for_each_kernel(const flat::Program& program,
                              const std::function<void(const flat::Stmt&, const flat::Function&)>& f) {
    for (const flat::Function& fn : program.functions) {
      std::function<void(const flat::Block&)> walk = [&](const flat::Block& b) {
        for (const flat::Stmt& s : b.stmts) {
          if (flat::has_kernel(s.op) && s.kernel) f(s, fn);
          flat::for_each_sub_block(s, walk);
        }
      };
      walk(fn.body);
    }
  }

  /// The LLVM IR (host) or PTX (sm_90) of every fused kernel of a flat program.
  static std::string dump_kernels(Stage stage, const flat::Program& program) {
    std::string out;
    int count = 0;
    for_each_kernel(program, [&](const flat::Stmt& s, const flat::Function& fn) {
      // A consumer kernel's values: the cpu backend evaluates them a window at a time with the
      // kernel loop; the GPU's passes call them as the element function (Note [Consumer kernels]).
      bool consumer = s.op != flat::Op::Kernel;
      std::string what = !consumer ? "" : fmt::format(" (the values of {}{})", flat::op_name(s.op),
                                                      s.op == flat::Op::PackKernel ? "" : std::string(" ") + lang::core::prim_info(s.prim).name);
      out += fmt::format("; kernel {} of function {}{}\n", count++, fn.name, what);
      try {
        out += stage == Stage::Llvm ? codegen::cpu::host_kernel_ir(*s.kernel)
               : consumer           ? codegen::compile_element_ptx(*s.kernel)
                                    : codegen::compile_ptx(*s.kernel);
      } catch (const std::exception& e) {
        out += fmt::format("; code generation failed: {}\n", e.what());
      }
    });
    if (count == 0) out = "; no fused kernels in this form (fusion needs a chain of two or more elementwise operations)";
    return out;
  }

  /// With NDP_PTX_CHECK_DIR set (tools/test.sh), writes the sm_90 PTX of every distinct fused
  /// kernel of each flattened form into that folder, one file per kernel key, so that CI,
  /// which has no GPU, can assemble each with ptxas (tools/check-ptx.sh). A consumer kernel's
  /// element function goes in as the cuda backend compiles it: in its consumer program
  /// (<hash>.consumer.ptx), which must compile without a stack frame. A kernel LLVM cannot
  /// compile leaves its error message in the file, which ptxas then rejects.
  static void save_ptx_for_check(const flat::Program& program) {
    static const char* dir = std::getenv("NDP_PTX_CHECK_DIR");
    if (dir == nullptr || *dir == '\0') return;
    static std::set<std::string> seen;  // a session runs its forms one at a time
    auto save = [&](const std::string& key, const std::string& suffix, const std::function<std::string()>& make) {
      if (!seen.insert(key).second) return;
      std::string ptx;
      try {
        ptx = make();
      } catch (const std::exception& e) {
        ptx = std::string("code generation failed: ") + e.what() + "\n";
      }
      if (ptx.empty()) return;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      std::ofstream(std::filesystem::path(dir) / (codegen::stable_hash_hex(key) + suffix)) << ptx;
    };
    for_each_kernel(program, [&](const flat::Stmt& s, const flat::Function& fn) {
      if (s.op == flat::Op::Kernel) {
        save(s.kernel->key(), ".ptx", [&] { return codegen::compile_ptx(*s.kernel); });
        return;
      }
      // The programs over one segment and over several (one and the same for a pack).
      for (bool one_segment : {true, false}) {
        const rt::gpu::ConsumerKernels use = codegen::cuda::consumer_kernels_of(s, fn.vars.at(s.dst).type, one_segment);
        save(s.kernel->key() + " " + use.key(), ".consumer.ptx", [&]() -> std::string {
          std::string_view consumers = rt::gpu::consumer_ptx(use.image);
          if (consumers.empty()) return "";  // a build without the consumer kernels
          rt::cuda::Result<std::string> whole =
              rt::gpu::consumer_program(consumers, codegen::compile_element_ptx(*s.kernel), use.entries);
          return whole.ok() ? whole.value() : "consumer program failed: " + whole.status().message() + "\n";
        });
      }
    });
  }

  /// The Core IR of a function form, or the Core/Flat IR of an expression or assignment.
  std::string dump_form(Stage stage, const frontend::CheckedForm& cf) {
    if (cf.kind == lang::ast::TopKind::Function) {
      if (stage != Stage::Core) return "";  // flat code exists per instantiation: dump a call
      return lang::core::dump_function(prog, prog.globals.at(cf.global)->fn);
    }
    if (!cf.top.body) return "";
    if (stage == Stage::Core) return cf.echo_name + " = " + lang::core::dump_expr(prog, cf.top.body);
    try {
      flat::Program program = flat::flatten(prog, cf.top.body);
      if (stage == Stage::Flat) return flat::print_program(program);
      return dump_kernels(stage, program);
    } catch (const flat::Unsupported& u) {
      diags.error(u.span, "not supported by the flat backends yet: " + u.message);
      std::string t = format_diagnostics(sm, diags.all());
      diags.clear();
      return t;
    }
  }

  /// Parses `text` as one expression form for tests and REPL commands.
  const lang::ast::TopLevel* parse_expr_form(std::string_view text, std::string_view name) {
    uint32_t file = sm.add(std::string(name), std::string(text) + "\n$");
    auto forms = frontend::parse_program(ast, sm, file, diags);
    if (diags.has_errors()) return nullptr;
    if (forms.size() != 1 || forms[0]->kind != lang::ast::TopKind::Expr) {
      diags.error(forms.empty() ? lang::Span{} : forms[0]->span, "expected one expression");
      return nullptr;
    }
    return forms[0];
  }

  ExprOutcome diag_outcome() {
    ExprOutcome o;
    o.status = ExprOutcome::Status::CompileError;
    o.message = format_diagnostics(sm, diags.all());
    diags.clear();
    return o;
  }
};

Session::Session(SessionOptions opts) : impl_(std::make_unique<Impl>(opts)) {}
Session::~Session() = default;

bool Session::eval_text(std::string name, std::string text, bool print_answers, bool echo_definitions) {
  return impl_->eval_text(std::move(name), std::move(text), print_answers, echo_definitions);
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

ExprOutcome Session::eval_expr(std::string_view text, std::string_view name) {
  Impl& s = *impl_;
  const lang::ast::TopLevel* form = s.parse_expr_form(text, name);
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

bool Session::exit_requested() const { return impl_->exit_requested; }
void Session::set_backend(Backend b) { impl_->opts.backend = b; }
Backend Session::backend() const { return impl_->opts.backend; }
int Session::print_length() const { return impl_->print.print_length; }
bool Session::input_complete(std::string_view text) { return frontend::input_is_complete(text); }

}  // namespace ndp::jit
