// libFuzzer target for the whole pipeline: the input steers difftest's generator (its bytes
// are the generator's choices, tests/difftest/generator.h's Entropy), which writes a
// well-typed program; the program runs on the interpreter and through flattening, the Flat IR
// passes, LLVM and the cpu backend. A crash, a sanitizer report, an internal error, an
// ill-typed program, or answers that differ is a finding: the program is printed and the
// target aborts, so libFuzzer keeps the input. Built by `-Dfuzz=true` (tools/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "tests/difftest/generator.h"
#include "tests/difftest/program.h"
#include "tests/difftest/runner.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& defs, const std::string& expr,
                          const ndp::difftest::RunOutcome& ref, const ndp::difftest::RunOutcome& cpu) {
  std::fprintf(stderr, "fuzz_pipeline: %s\n--- program\n%s%s $\n--- interp: %s\n--- cpu:    %s\n", what.c_str(),
               defs.c_str(), expr.c_str(), ndp::difftest::describe(ref).c_str(),
               ndp::difftest::describe(cpu).c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ndp::difftest;
  GenOptions opts;
  Generator gen(Entropy(std::span<const uint8_t>(data, size)), opts);
  Program p = gen.program();
  std::string defs = defs_text(p), expr = expr_text(p.expr);
  RunOutcome ref = run_program(defs, expr, ndp::driver::Backend::Interp);
  RunOutcome cpu = run_program(defs, expr, ndp::driver::Backend::Cpu);
  if (ref.internal || cpu.internal) finding("internal error", defs, expr, ref, cpu);
  if (!ref.defs_ok || ref.expr.status == ndp::driver::ExprOutcome::Status::CompileError)
    finding("the generator wrote an ill-typed program", defs, expr, ref, cpu);
  Verdict v = compare(ref, cpu);
  if (v.mismatch) finding("interp and cpu disagree: " + v.detail, defs, expr, ref, cpu);
  return 0;
}
