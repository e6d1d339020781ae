// host::uniform_outputs and uniform_prim: a kernel or a primitive evaluated once for inputs every instance shares (Note [Known
// values] in exec/cuda/device_vec.cpp), and where it declines.
#include <doctest/doctest.h>

#include "exec/host/kernel_failure.h"
#include "flatten/passes/fuse_elementwise.h"
#include "lang/core.h"

using namespace ndp;
using lang::Value;
using lang::core::PrimId;

TEST_CASE("uniform_outputs: integer, bool and char kernels are computed once; floats and failures are not") {
  lang::core::Program prog;
  auto& T = prog.types;
  flatten::KernelBody div = flatten::one_node_kernel(PrimId::Div, {T.int_(), T.int_()}, T.int_());
  std::vector<Value> seven_by_two = {Value::int_(7), Value::int_(2)};
  auto q = exec::host::uniform_outputs(div, seven_by_two);
  REQUIRE(q);
  REQUIRE(q->size() == 1);
  CHECK((*q)[0].as_int() == 3);
  // A division by zero fails: left to the device, which reports it as always.
  std::vector<Value> by_zero = {Value::int_(7), Value::int_(0)};
  CHECK_FALSE(exec::host::uniform_outputs(div, by_zero));
  flatten::KernelBody less = flatten::one_node_kernel(PrimId::Lt, {T.int_(), T.int_()}, T.bool_());
  auto b = exec::host::uniform_outputs(less, seven_by_two);
  REQUIRE(b);
  CHECK_FALSE((*b)[0].as_bool());
  // Floats round alike only where the same instructions compute them: not on the host.
  flatten::KernelBody fadd = flatten::one_node_kernel(PrimId::Add, {T.float_(), T.float_()}, T.float_());
  std::vector<Value> halves = {Value::float_(0.5), Value::float_(0.25)};
  CHECK_FALSE(exec::host::uniform_outputs(fadd, halves));
  // Inputs that do not match the kernel's: nothing.
  CHECK_FALSE(exec::host::uniform_outputs(div, std::vector<Value>{Value::int_(1)}));
}

TEST_CASE("uniform_prim: a lone elementwise primitive of known integer arguments, once; not floats, failures or others") {
  lang::core::Program prog;
  auto& T = prog.types;
  const std::vector<const lang::Type*> ints = {T.int_()}, floats = {T.float_()};
  // A loop's counter, k - 1 of a known k: known too.
  std::optional<Value> r = exec::host::uniform_prim(PrimId::Sub, &ints, std::vector<Value>{Value::int_(10), Value::int_(1)}, T.int_());
  REQUIRE(r);
  CHECK(r->as_int() == 9);
  std::optional<Value> eq = exec::host::uniform_prim(PrimId::Eq, &ints, std::vector<Value>{Value::int_(0), Value::int_(0)}, T.bool_());
  REQUIRE(eq);
  CHECK(eq->as_bool());
  // A failure stays the device's to report.
  CHECK_FALSE(exec::host::uniform_prim(PrimId::Div, &ints, std::vector<Value>{Value::int_(1), Value::int_(0)}, T.int_()));
  // Floats are not computed on the host.
  CHECK_FALSE(exec::host::uniform_prim(PrimId::Add, &floats, std::vector<Value>{Value::float_(0.5), Value::float_(0.25)}, T.float_()));
  // Nor a primitive that is not elementwise.
  CHECK_FALSE(exec::host::uniform_prim(PrimId::Iseq, &ints, std::vector<Value>{Value::int_(0), Value::int_(1), Value::int_(3)},
                                       T.seq(T.int_())));
}
