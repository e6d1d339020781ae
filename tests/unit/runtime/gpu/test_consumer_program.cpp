// consumer_program: the consumer kernels' PTX with an element function put in, or a refusal
// that says what is missing (Note [Consumer programs] in runtime/gpu/consumer_program.h).
#include <doctest/doctest.h>

#include <string>

#include "runtime/gpu/consumer_program.h"

using namespace ndp;

// A consumer program that cannot be made says what is missing, and never splices blindly.
TEST_CASE("kernels: consumer_program refuses PTX without the declaration, the definition or an entry") {
  const std::string consumers =
      ".version 9.0\n.target sm_90\n.address_size 64\n\n"
      ".extern .func  (.param .b64 func_retval0) ndp_elements\n(\n\t.param .b64 p0\n)\n;\n"
      ".visible .entry keep_me(\n)\n{\n\tret;\n}\n"
      ".visible .entry drop_me(\n)\n{\n\t{\n\tret;\n\t}\n}\n"
      ".entry also_kept(\n)\n{\n\tret;\n}\n";
  const std::string element = ".version 7.8\n.target sm_90\n.address_size 64\n\n.visible .func  (.param .b64 func_retval0) ndp_elements(\n)\n{\n\tret;\n}\n";
  const std::string keep[] = {"keep_me", "also_kept"};
  runtime::cuda::Result<std::string> ok = runtime::gpu::consumer_program(consumers, element, keep);
  REQUIRE(ok.ok());
  CHECK(ok.value() ==
        ".version 9.0\n.target sm_90\n.address_size 64\n\n"
        "\n.func  (.param .b64 func_retval0) ndp_elements(\n)\n{\n\tret;\n}\n\n"
        ".visible .entry keep_me(\n)\n{\n\tret;\n}\n"
        ".entry also_kept(\n)\n{\n\tret;\n}\n");
  const std::string missing[] = {"keep_me", "nowhere"};
  runtime::cuda::Result<std::string> no_entry = runtime::gpu::consumer_program(consumers, element, missing);
  REQUIRE_FALSE(no_entry.ok());
  CHECK(no_entry.status().message().find("no entry nowhere") != std::string::npos);
  CHECK_FALSE(runtime::gpu::consumer_program(".version 9.0\n.visible .entry keep_me(\n)\n{\n}\n", element, keep).ok());
  CHECK_FALSE(runtime::gpu::consumer_program(consumers, ".visible .func ndp_elements()\n{\n}\n", keep).ok());
  CHECK_FALSE(runtime::gpu::consumer_program(consumers, ".address_size 64\n.func other()\n{\n}\n", keep).ok());
}
