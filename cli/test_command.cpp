// `ndp test`: runs `%test` cases (extensions.md §5) on every available backend, REPL
// transcripts (NAME.in fed to the non-interactive REPL, stdout compared with NAME.out) and
// error tests (files whose `% expect: LINE:COL: TEXT %` comments name required diagnostics).
// Transcripts and error tests run once, on the interpreter's REPL and the front end, whatever
// --backend says; only `%test` cases run per backend.
//
// Note [Float tolerance]
// extensions.md §4: reductions and scans of floats may differ between backends by rounding, so
// an expected value matches when it prints the same except that each float literal may differ
// from the expected one by a relative 1e-9 (1e-5 when the answer's type mentions f32). A case
// written `EXPR ==> exact VALUE` compares the printed text exactly (for tests of rounding
// itself, such as *_combine's left fold).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"

namespace ndp::cli {

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return "";
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

/// Output captured into a string through a FILE* (the session writes to FILE*s).
class Capture {
 public:
  Capture() { file_ = open_memstream(&buf_, &len_); }
  ~Capture() {
    if (file_) std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return std::string(buf_, len_);
  }

 private:
  std::FILE* file_ = nullptr;
  char* buf_ = nullptr;
  size_t len_ = 0;
};

/// A comment of a source file: its text (between the `%`s) and the line it starts on.
struct Comment {
  std::string text;
  int line = 0;
};

/// Finds comments the way the lexer does: `%` outside strings and character literals.
std::vector<Comment> comments_of(const std::string& src) {
  std::vector<Comment> out;
  int line = 1;
  for (size_t i = 0; i < src.size(); ++i) {
    char c = src[i];
    if (c == '\n') ++line;
    if (c == '"') {
      for (++i; i < src.size() && src[i] != '"'; ++i) {
        if (src[i] == '\\') ++i;
        if (i < src.size() && src[i] == '\n') ++line;
      }
    } else if (c == '`') {
      if (i + 1 < src.size() && src[i + 1] == '\n') ++line;
      ++i;
    } else if (c == '%') {
      size_t end = src.find('%', i + 1);
      if (end == std::string::npos) end = src.size();
      Comment cm{src.substr(i + 1, end - i - 1), line};
      for (size_t k = i; k < end; ++k)
        if (src[k] == '\n') ++line;
      out.push_back(std::move(cm));
      i = end;
    }
  }
  return out;
}

struct Case {
  int line;
  int col;  // of the expression, 1-based
  std::string expr;
  std::string expected;
  bool exact = false;  // `==> exact VALUE`: no float tolerance
};

std::vector<Case> test_cases(const std::string& src, std::vector<std::string>* malformed) {
  std::vector<Case> cases;
  for (const Comment& cm : comments_of(src)) {
    if (cm.text.rfind("test", 0) != 0) continue;
    std::istringstream lines(cm.text);
    std::string l;
    int line = cm.line;
    std::getline(lines, l);  // the `%test` line itself
    while (std::getline(lines, l)) {
      ++line;
      if (trim(l).empty()) continue;
      size_t arrow = l.find("==>");
      if (arrow == std::string::npos) {
        malformed->push_back(fmt::format("line {}: no `==>` in test case: {}", line, trim(l)));
        continue;
      }
      int col = static_cast<int>(l.find_first_not_of(" \t\r")) + 1;
      Case c{line, col, trim(l.substr(0, arrow)), trim(l.substr(arrow + 3))};
      if (c.expected.rfind("exact ", 0) == 0) {
        c.exact = true;
        c.expected = trim(c.expected.substr(6));
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

/// Splits `VALUE : TYPE` at the last ` : ` outside string and character literals.
std::pair<std::string, std::string> split_value_type(const std::string& s) {
  size_t split = std::string::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') {
      for (++i; i < s.size() && s[i] != '"'; ++i)
        if (s[i] == '\\') ++i;
    } else if (s[i] == '`') {
      ++i;
    } else if (s.compare(i, 3, " : ") == 0) {
      split = i;
    }
  }
  if (split == std::string::npos) return {s, ""};
  return {s.substr(0, split), s.substr(split + 3)};
}

/// The float literal (digits with a `.` or an exponent, optionally negative) at `i`, or empty.
std::string float_at(const std::string& s, size_t i) {
  size_t j = i;
  if (j < s.size() && s[j] == '-') ++j;
  size_t digits = j;
  while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
  if (j == digits) return "";
  bool is_float = false;
  if (j < s.size() && s[j] == '.') {
    is_float = true;
    for (++j; j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]));) ++j;
  }
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    if (k < s.size() && s[k] == '-') ++k;
    if (k < s.size() && std::isdigit(static_cast<unsigned char>(s[k]))) {
      is_float = true;
      for (j = k; j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]));) ++j;
    }
  }
  return is_float ? s.substr(i, j - i) : "";
}

/// Note [Float tolerance]: equal text, except float literals outside string and character
/// literals, which may differ by `tolerance` relative to the larger magnitude.
bool same_within(const std::string& want, const std::string& got, double tolerance) {
  size_t i = 0, j = 0;
  while (i < want.size() && j < got.size()) {
    char c = want[i];
    if (c == '"' || c == '`') {  // literals compare exactly
      // A string runs to its closing quote; a character is the backquote and one character.
      size_t end = i + 1;
      if (c == '"')
        while (end < want.size() && want[end] != '"') end += want[end] == '\\' ? 2 : 1;
      size_t len = std::min(end + 1, want.size()) - i;
      if (want.compare(i, len, got, j, len) != 0) return false;
      i += len;
      j += len;
      continue;
    }
    bool boundary = i == 0 || !std::isalnum(static_cast<unsigned char>(want[i - 1]));
    std::string a = boundary ? float_at(want, i) : "", b = boundary ? float_at(got, j) : "";
    if (!a.empty() && !b.empty()) {
      double x = std::strtod(a.c_str(), nullptr), y = std::strtod(b.c_str(), nullptr);
      if (a != b && !(std::fabs(x - y) <= tolerance * std::max(std::fabs(x), std::fabs(y)))) return false;
      i += a.size();
      j += b.size();
      continue;
    }
    if (c != got[j]) return false;
    ++i;
    ++j;
  }
  return i == want.size() && j == got.size();
}

struct Tally {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  bool verbose = false;

  void pass(const std::string& what) {
    ++passed;
    if (verbose) std::printf("ok   %s\n", what.c_str());
  }
  void fail(const std::string& what, const std::string& detail) {
    ++failed;
    std::printf("FAIL %s\n%s", what.c_str(), detail.c_str());
    if (!detail.empty() && detail.back() != '\n') std::printf("\n");
  }
};

std::string check_case(driver::Session& s, const Case& c, const std::string& path) {
  // Diagnostics name the case's own line and column in its file (path:line:col).
  driver::ExprOutcome o = s.eval_expr(c.expr, path, static_cast<uint32_t>(c.line), static_cast<uint32_t>(c.col));
  using St = driver::ExprOutcome::Status;
  auto got = [&]() -> std::string {
    switch (o.status) {
      case St::Ok: return o.value + " : " + o.type;
      case St::RuntimeError: return "runtime error: " + o.message;
      case St::CompileError: return "compile error:\n" + o.message;
    }
    return "";
  };
  auto mismatch = [&]() { return fmt::format("  expected: {}\n  got:      {}\n", c.expected, got()); };
  const std::string& e = c.expected;
  if (e == "error" || e.rfind("error:", 0) == 0) {
    if (o.status != St::RuntimeError) return mismatch();
    if (e.size() > 6 && o.message.find(trim(e.substr(6))) == std::string::npos) return mismatch();
    return "";
  }
  if (e == "compile error" || e.rfind("compile error:", 0) == 0) {
    if (o.status != St::CompileError) return mismatch();
    if (e.size() > 14 && o.message.find(trim(e.substr(14))) == std::string::npos) return mismatch();
    return "";
  }
  if (o.status != St::Ok) return mismatch();
  auto [value, type] = split_value_type(e);
  double tolerance = o.type.find("f32") != std::string::npos ? 1e-5 : 1e-9;
  if (c.exact ? value != o.value : !same_within(value, o.value, tolerance)) return mismatch();
  if (!type.empty() && type != o.type) return mismatch();
  return "";
}

void run_program_file(const fs::path& path, const std::string& src, driver::Backend backend, Tally& t) {
  std::vector<std::string> malformed;
  std::vector<Case> cases = test_cases(src, &malformed);
  std::string tag = fmt::format("[{}]", driver::backend_name(backend));
  for (const std::string& m : malformed) t.fail(fmt::format("{} {}", path.string(), tag), m);
  Capture out, err;
  driver::SessionOptions so;
  so.backend = backend;
  so.out = out.file();
  so.err = err.file();
  driver::Session s(so);
  if (!s.eval_text(path.string(), src, /*print_answers=*/false)) {
    t.fail(fmt::format("{} {} (loading the file)", path.string(), tag), err.text());
    return;
  }
  if (cases.empty()) {
    t.pass(fmt::format("{} {} (loads)", path.string(), tag));
    return;
  }
  for (const Case& c : cases) {
    std::string where = fmt::format("{}:{}", path.string(), c.line);
    std::string failure = check_case(s, c, path.string());
    std::string what = fmt::format("{} {}: {}", where, tag, c.expr);
    if (failure.empty())
      t.pass(what);
    else
      t.fail(what, failure);
  }
}

void run_transcript(const fs::path& in_path, Tally& t) {
  fs::path out_path = in_path;
  out_path.replace_extension(".out");
  if (!fs::exists(out_path)) {
    t.fail(in_path.string(), "  no matching .out file");
    return;
  }
  Capture out, err;
  driver::SessionOptions so;
  so.out = out.file();
  so.err = err.file();
  driver::Session s(so);
  std::ifstream in(in_path);
  process_stream(s, in);
  std::string got = out.text();
  std::string want = slurp(out_path);
  if (got == want) {
    t.pass(in_path.string());
    return;
  }
  // Show the first differing line.
  std::istringstream g(got), w(want);
  std::string gl, wl;
  int n = 1;
  while (true) {
    bool hg = static_cast<bool>(std::getline(g, gl));
    bool hw = static_cast<bool>(std::getline(w, wl));
    if (!hg && !hw) break;
    if (!hg) gl = "<end of output>";
    if (!hw) wl = "<end of expected output>";
    if (gl != wl) break;
    ++n;
  }
  t.fail(in_path.string(), fmt::format("  line {}:\n  expected: {}\n  got:      {}\n  (stderr: {})", n, wl, gl,
                                       trim(err.text()).substr(0, 400)));
}

void run_error_test(const fs::path& path, const std::string& src, Tally& t) {
  Capture out, err;
  driver::SessionOptions so;
  so.out = out.file();
  so.err = err.file();
  driver::Session s(so);
  bool ok = s.check_text(path.string(), src);
  std::string diags = err.text();
  if (ok) {
    t.fail(path.string(), "  expected compile errors, but the file checked cleanly");
    return;
  }
  for (const Comment& cm : comments_of(src)) {
    std::string text = trim(cm.text);
    if (text.rfind("expect:", 0) != 0) continue;
    std::string spec = trim(text.substr(7));
    // LINE:COL: TEXT
    size_t c1 = spec.find(':');
    size_t c2 = c1 == std::string::npos ? c1 : spec.find(':', c1 + 1);
    if (c2 == std::string::npos) {
      t.fail(path.string(), "  malformed expectation: " + spec);
      continue;
    }
    std::string prefix = fmt::format("{}:{}: error:", path.string(), spec.substr(0, c2));
    std::string needle = trim(spec.substr(c2 + 1));
    bool found = false;
    std::istringstream lines(diags);
    std::string l;
    while (std::getline(lines, l))
      if (l.rfind(prefix, 0) == 0 && l.find(needle) != std::string::npos) found = true;
    std::string what = fmt::format("{} expects {}", path.string(), spec);
    if (found)
      t.pass(what);
    else
      t.fail(what, "  diagnostics were:\n" + diags);
  }
}

bool is_error_test(const std::string& src) {
  for (const Comment& cm : comments_of(src))
    if (trim(cm.text).rfind("expect:", 0) == 0) return true;
  return false;
}

std::vector<fs::path> collect(const std::vector<std::string>& paths, bool* ok) {
  std::vector<fs::path> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& entry : fs::recursive_directory_iterator(p)) {
        if (!entry.is_regular_file()) continue;
        std::string ext = entry.path().extension().string();
        if (ext == ".ndp" || ext == ".nesl" || ext == ".in") files.push_back(entry.path());
      }
    } else if (fs::is_regular_file(p)) {
      files.push_back(p);
    } else {
      std::fprintf(stderr, "ndp test: no such file or folder: %s\n", p.c_str());
      *ok = false;
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int run_tests(const CommonOptions& opts, const std::vector<std::string>& paths, bool verbose) {
  bool ok = true;
  std::vector<fs::path> files = collect(paths, &ok);
  std::vector<driver::Backend> backends;
  std::vector<driver::Backend> candidates =
      opts.backend_given ? std::vector<driver::Backend>{opts.backend}
                         : std::vector<driver::Backend>{driver::Backend::Interp, driver::Backend::Cpu, driver::Backend::Cuda};
  for (driver::Backend b : candidates) {
    std::string why = driver::backend_unavailable_reason(b);
    if (why.empty())
      backends.push_back(b);
    else
      std::printf("SKIP backend %s: %s\n", driver::backend_name(b), why.c_str());
  }
  Tally t;
  t.verbose = verbose;
  for (const fs::path& f : files) {
    if (f.extension() == ".in") {
      run_transcript(f, t);
      continue;
    }
    std::string src = slurp(f);
    if (is_error_test(src)) {
      run_error_test(f, src, t);
      continue;
    }
    for (driver::Backend b : backends) run_program_file(f, src, b, t);
    std::fflush(stdout);  // progress survives a crash of a later file
  }
  std::printf("%d passed, %d failed\n", t.passed, t.failed);
  return ok && t.failed == 0 ? 0 : 1;
}

}  // namespace ndp::cli
