// Running programs in fresh sessions with captured output, and tolerant comparison of answers.
#include "tests/difftest/runner.h"

#include <fmt/format.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace ndp::difftest {

namespace {

// A FILE* backed by memory, so that a session's output and diagnostics can be read back.
class MemStream {
 public:
  MemStream() : file_(open_memstream(&buf_, &len_)) {}
  ~MemStream() {
    if (file_) std::fclose(file_);
    std::free(buf_);
  }
  MemStream(const MemStream&) = delete;
  MemStream& operator=(const MemStream&) = delete;
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buf_ ? buf_ : "", len_);
  }

 private:
  char* buf_ = nullptr;
  size_t len_ = 0;
  std::FILE* file_;
};

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Length of the number token at `i` (0 if none): [-]digits[.digits][E[-]digits], or
// inf / -inf / nan as whole words.
size_t number_at(const std::string& s, size_t i) {
  if (i > 0 && (word_char(s[i - 1]) || s[i - 1] == '.')) return 0;
  size_t j = i;
  if (j < s.size() && s[j] == '-') ++j;
  for (const char* w : {"inf", "nan"}) {
    size_t n = std::strlen(w);
    if (s.compare(j, n, w) == 0 && (j + n >= s.size() || !word_char(s[j + n]))) return j + n - i;
  }
  size_t digits = j;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == digits) return 0;
  if (j + 1 < s.size() && s[j] == '.' && std::isdigit(static_cast<unsigned char>(s[j + 1]))) {
    ++j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  }
  if (j < s.size() && s[j] == 'E') {
    size_t k = j + 1;
    if (k < s.size() && s[k] == '-') ++k;
    if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
      while (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) ++k;
      j = k;
    }
  }
  return j - i;
}

struct Token {
  bool number;
  std::string text;
};

std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  std::string pending;
  for (size_t i = 0; i < s.size();) {
    size_t n = number_at(s, i);
    if (n == 0) {
      pending += s[i++];
      continue;
    }
    if (!pending.empty()) out.push_back({false, std::move(pending)});
    pending.clear();
    out.push_back({true, s.substr(i, n)});
    i += n;
  }
  if (!pending.empty()) out.push_back({false, pending});
  return out;
}

bool floats_close(const std::string& a, const std::string& b, double tol) {
  double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (x == y) return true;
  if (std::isinf(x) || std::isinf(y)) return false;
  return std::fabs(x - y) <= tol * std::max(std::fabs(x), std::fabs(y));
}

const char* status_name(driver::ExprOutcome::Status s) {
  switch (s) {
    case driver::ExprOutcome::Status::Ok: return "ok";
    case driver::ExprOutcome::Status::CompileError: return "compile error";
    case driver::ExprOutcome::Status::RuntimeError: return "runtime error";
  }
  return "?";
}

std::string first_line(const std::string& s) {
  std::string t = s.substr(0, s.find('\n'));
  return t.size() > 300 ? t.substr(0, 300) + "..." : t;
}

}  // namespace

RunOutcome run_program(const std::string& defs, const std::string& expr, driver::Backend backend) {
  RunOutcome o;
  auto start = std::chrono::steady_clock::now();
  MemStream out, err;
  try {
    driver::SessionOptions opts;
    opts.out = out.file();
    opts.err = err.file();
    opts.backend = backend;
    driver::Session session(opts);
    if (!defs.empty()) {
      o.defs_ok = session.eval_text("difftest.ndp", defs, /*print_answers=*/false);
      o.defs_diag = err.text();
    }
    o.expr = session.eval_expr(expr, "difftest-expr");
  } catch (const std::exception& e) {
    o.internal = true;
    o.internal_what = e.what();
  } catch (...) {
    o.internal = true;
    o.internal_what = "unknown exception";
  }
  o.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return o;
}

std::string describe(const RunOutcome& o) {
  if (o.internal) return "internal error: " + first_line(o.internal_what);
  std::string prefix = o.defs_ok ? "" : "definitions failed (" + first_line(o.defs_diag) + "); ";
  switch (o.expr.status) {
    case driver::ExprOutcome::Status::Ok: return prefix + "ok: " + o.expr.value + " : " + o.expr.type;
    case driver::ExprOutcome::Status::RuntimeError: return prefix + "runtime error: " + first_line(o.expr.message);
    case driver::ExprOutcome::Status::CompileError: return prefix + "compile error: " + first_line(o.expr.message);
  }
  return prefix;
}

std::string expected_text(const RunOutcome& o) {
  switch (o.expr.status) {
    case driver::ExprOutcome::Status::Ok: return o.expr.value + " : " + o.expr.type;
    case driver::ExprOutcome::Status::RuntimeError: return "error: " + first_line(o.expr.message);
    case driver::ExprOutcome::Status::CompileError: return "compile error";
  }
  return "error";
}

bool values_close(const std::string& a, const std::string& b, double rel_tol) {
  if (a == b) return true;
  std::vector<Token> x = tokenize(a), y = tokenize(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].number != y[i].number) return false;
    if (x[i].text == y[i].text) continue;
    if (!x[i].number) return false;
    auto is_float = [](const std::string& t) { return t.find_first_of(".Ein") != std::string::npos; };
    if (!is_float(x[i].text) && !is_float(y[i].text)) return false;
    if (!floats_close(x[i].text, y[i].text, rel_tol)) return false;
  }
  return true;
}

Verdict compare(const RunOutcome& ref, const RunOutcome& test) {
  Verdict v;
  auto fail = [&](std::string why) {
    v.mismatch = true;
    v.detail = std::move(why);
    return v;
  };
  if (ref.internal || test.internal) return fail("internal error");
  if (ref.defs_ok != test.defs_ok) return fail("the definitions fail on one backend only");
  if (ref.expr.status != test.expr.status)
    return fail(fmt::format("status differs ({} vs {})", status_name(ref.expr.status), status_name(test.expr.status)));
  switch (ref.expr.status) {
    case driver::ExprOutcome::Status::Ok: {
      if (ref.expr.type != test.expr.type) return fail("types differ");
      double tol = ref.expr.type.find("f32") != std::string::npos ? 1e-5 : 1e-9;
      if (!values_close(ref.expr.value, test.expr.value, tol)) return fail("values differ");
      break;
    }
    case driver::ExprOutcome::Status::RuntimeError:
    case driver::ExprOutcome::Status::CompileError:
      if (ref.expr.message != test.expr.message)
        v.warnings.push_back(fmt::format("{} messages differ: \"{}\" vs \"{}\"", status_name(ref.expr.status),
                                         first_line(ref.expr.message), first_line(test.expr.message)));
      break;
  }
  return v;
}

}  // namespace ndp::difftest
