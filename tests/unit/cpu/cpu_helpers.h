// The helpers' old home, kept while tests/unit/cpu/test_plans.cpp (and branches written before
// the test layout of issue 20) include it: the names of ndp::test::cpu now live in
// tests/unit/exec/exec_helpers.h. Include that in new tests.
#pragma once

#include "tests/unit/exec/exec_helpers.h"

namespace ndp::test::cpu {
using namespace ndp::test::exec_test;
}  // namespace ndp::test::cpu
