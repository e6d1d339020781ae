// Running one generated program on one backend, and comparing two backends' outcomes.
#pragma once

#include <string>
#include <vector>

#include "driver/session.h"

namespace ndp::difftest {

/// What one backend made of a program: the definitions, then the test expression.
struct RunOutcome {
  bool defs_ok = true;
  std::string defs_diag;   // what the definitions wrote to the error stream
  driver::ExprOutcome expr;
  bool internal = false;   // an exception escaped the session: always a bug in ndp
  std::string internal_what;
  double millis = 0;
};

/// Runs `defs` (top-level forms, answers not printed) and then `expr` in a fresh session.
RunOutcome run_program(const std::string& defs, const std::string& expr, driver::Backend backend);

/// A one-line summary: `ok: VALUE : TYPE`, `runtime error: MESSAGE`, `compile error: ...`.
std::string describe(const RunOutcome& o);
/// What `ndp test` expects after `==>` for this outcome.
std::string expected_text(const RunOutcome& o);

struct Verdict {
  bool mismatch = false;
  std::string detail;                 // why, for a mismatch
  std::vector<std::string> warnings;  // differences that NESL allows (error message text)
};

/// Compares a backend's outcome with the reference's. Floats compare with a relative
/// tolerance (1e-9, or 1e-5 when the type mentions f32) because reductions may be
/// reassociated (extensions.md §4).
Verdict compare(const RunOutcome& ref, const RunOutcome& test);

/// True when two printed values agree, numbers with a float in them within `rel_tol`.
bool values_close(const std::string& a, const std::string& b, double rel_tol);

}  // namespace ndp::difftest
