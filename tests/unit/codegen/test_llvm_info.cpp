// The build links LLVM 19 with the targets the backends need.
#include <doctest/doctest.h>

#include "codegen/llvm_info.h"

TEST_CASE("LLVM 19 with NVPTX and x86 targets") {
  CHECK(ndp::codegen::llvm_version().rfind("19.", 0) == 0);
  CHECK(ndp::codegen::has_target("nvptx64"));
  CHECK(ndp::codegen::has_target("x86-64"));
  CHECK_FALSE(ndp::codegen::has_target("no-such-target"));
}
