// host::uniform_outputs: a kernel evaluated once for inputs every instance shares (Note [Known
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
