// Test helpers for the executors: a fixture that runs hand-built Flat IR programs on the cpu
// executor, over the host-vector helpers and the Flat IR builder.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "exec/cpu/executor.h"
#include "tests/unit/exec/host/host_helpers.h"
#include "tests/unit/flatten/flat_builder.h"

namespace ndp::test::exec_test {

/// A Core program (types, globals), an output file and a CpuExecutor over them.
struct ExecFixture {
  lang::core::Program prog;
  lang::TypeContext& T = prog.types;
  std::FILE* out = std::tmpfile();
  ~ExecFixture() { std::fclose(out); }

  lang::eval::RunResult run(flatten::Program& p) {
    exec::cpu::CpuExecutor ex(prog, out);
    return ex.run(p);
  }
  /// Runs a program of one function.
  lang::eval::RunResult run(flatten::Function f) {
    flatten::Program p;
    p.functions.push_back(std::move(f));
    return run(p);
  }
  Value ok(flatten::Function f) {
    auto r = run(std::move(f));
    if (!r.ok) FAIL("unexpected runtime error: " << r.error.message);
    return r.value;
  }
  std::string output() {
    std::fflush(out);
    std::string s;
    std::rewind(out);
    int ch;
    while ((ch = std::fgetc(out)) != EOF) s += static_cast<char>(ch);
    return s;
  }
};

}  // namespace ndp::test::exec_test
