// `:dump` / `--dump` show every stage of the pipeline for one expression.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "driver/session.h"

using ndp::driver::Session;
using Stage = ndp::driver::Session::Stage;

TEST_CASE("dumps of one expression: Core, Flat IR with a fused kernel, host LLVM IR, sm_90 PTX") {
  Session s;
  const char* e = "{(x * 2.0 + 1.0) / (x - 0.5) : x in [1.0, 2.0, 3.0]}";
  CHECK(s.dump(Stage::Core, e).find("(map") != std::string::npos);
  std::string flat = s.dump(Stage::Flat, e);
  CHECK(flat.find("entry function main") != std::string::npos);
  CHECK(flat.find("kernel(") != std::string::npos);
  std::string ir = s.dump(Stage::Llvm, e);
  CHECK(ir.find("define void @ndp_kernel") != std::string::npos);
  CHECK(ir.find("fdiv") != std::string::npos);
  std::string ptx = s.dump(Stage::Ptx, e);
  CHECK(ptx.find(".target sm_90") != std::string::npos);
  CHECK(ptx.find(".entry ndp_kernel") != std::string::npos);
  CHECK(s.dump(Stage::Llvm, "1 + 2").find("no fused kernels") != std::string::npos);
}
