// The executors without LLVM and without the front end (issue 20, item 5): this program links
// exec/ and runtime/ alone (tests/meson.build gives it nothing else, and tools/check-no-llvm.sh
// checks its symbols), builds a Flat IR program by hand and runs it. No kernel compiler is
// installed, so the cpu executor runs the Kernel statement through its interpretive loop
// (Note [Kernel compilers] in exec/common/kernel_compiler.h).
#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <utility>

#include "exec/cpu/executor.h"
#include "exec/cuda/executor.h"
#include "flatten/flat_ir.h"
#include "lang/core.h"
#include "tests/unit/flatten/flat_builder.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

namespace {

/// main(x) = sum({3 * i + 1 : i in [0:5]}) = 35, as Flat IR: the literal 3 and the iota in five
/// instances, the map as one Kernel statement with the constant 1, its five values nested into
/// one sequence and summed.
flatten::Program sum_of_map(lang::TypeContext& T) {
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId n = b.konst(body, 5);
  VarId i = b.vec(T.int_(), "i");
  b.emit(body, Op::Iota, i, {n});
  VarId three = b.lit(body, T.int_(), I(3), n);

  auto kernel = std::make_shared<flatten::KernelBody>();
  kernel->inputs = {T.int_(), T.int_()};
  flatten::KernelNode in0, in1, times, one, plus;
  in0.kind = in1.kind = flatten::KernelNode::Kind::Input;
  in0.type = in1.type = one.type = times.type = plus.type = T.int_();
  in1.input = 1;
  times.kind = plus.kind = flatten::KernelNode::Kind::Prim;
  times.prim = PrimId::Mul;
  times.args = {0, 1};
  one.kind = flatten::KernelNode::Kind::Const;
  one.value = I(1);
  plus.prim = PrimId::Add;
  plus.args = {2, 3};
  kernel->nodes = {in0, in1, times, one, plus};
  kernel->outputs = {4};
  VarId mapped = b.vec(T.int_(), "m");
  Stmt& k = b.emit(body, Op::Kernel, mapped, {i, three});
  k.kernel = std::move(kernel);
  k.outs = {mapped};

  VarId nested = b.wrap(body, T, mapped, 5);
  body.result = b.prim(body, PrimId::Sum, T.int_(), {nested}, {T.int_()});
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  return p;
}

struct Output {
  std::FILE* file = std::tmpfile();
  ~Output() { std::fclose(file); }
};

}  // namespace

TEST_CASE("llvm-free: the cpu executor runs a hand-built program with a kernel, no compiler installed") {
  lang::core::Program prog;
  flatten::Program p = sum_of_map(prog.types);
  REQUIRE(flatten::verify(p).empty());
  Output out;
  exec::cpu::CpuExecutor ex(prog, out.file);
  lang::eval::RunResult r = ex.run(p);
  REQUIRE_MESSAGE(r.ok, r.error.message);
  CHECK(lang::values_equal(r.value, I(35)));
}

// The cuda executor links here too; where a GPU is present it runs a program with no Kernel
// statement (without a compiler it cannot make kernels: Note [Kernel compilers]).
TEST_CASE("llvm-free: the cuda executor runs a kernel-free program where a GPU is present") {
  std::string why = exec::cuda::CudaExecutor::unavailable_reason();
  if (!why.empty()) {
    MESSAGE("cuda backend unavailable here: " << why);
    return;
  }
  lang::core::Program prog;
  auto& T = prog.types;
  FnBuilder b("main", T.int_(), T.int_());
  Block& body = b.fn.body;
  VarId n = b.konst(body, 5);
  VarId i = b.vec(T.int_(), "i");
  b.emit(body, Op::Iota, i, {n});
  VarId nested = b.wrap(body, T, i, 5);
  body.result = b.prim(body, PrimId::Sum, T.int_(), {nested}, {T.int_()});
  flatten::Program p;
  p.functions.push_back(std::move(b.fn));
  Output out;
  exec::cuda::CudaExecutor ex(prog, out.file);
  lang::eval::RunResult r = ex.run(p);
  REQUIRE_MESSAGE(r.ok, r.error.message);
  CHECK(lang::values_equal(r.value, I(10)));
}
