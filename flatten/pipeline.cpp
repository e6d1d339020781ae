// The list of flattening passes, in order.
#include "flatten/pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "flatten/passes/chain_appends.h"
#include "flatten/passes/cse.h"
#include "flatten/passes/drop_dead.h"
#include "flatten/passes/fuse_consumers.h"
#include "flatten/passes/fuse_elementwise.h"
#include "flatten/passes/fuse_siblings.h"
#include "flatten/passes/group_filters.h"
#include "flatten/passes/inline_calls.h"
#include "flatten/passes/find_partition_levels.h"
#include "flatten/passes/find_regular_levels.h"
#include "flatten/passes/lay_out_results.h"
#include "flatten/passes/mark_releases.h"
#include "flatten/passes/merge_calls.h"
#include "flatten/passes/recursion_to_loops.h"
#include "flatten/passes/unshare_partition_calls.h"
#include "include/ndp/interrupt.h"
#include "lang/diagnostics.h"

namespace ndp::flatten {

namespace {

int debug_level() {
  const char* s = std::getenv("NDP_DEBUG");
  return s ? std::atoi(s) : 0;
}

bool env_disabled(const char* name) {
  const char* s = std::getenv(name);
  return s != nullptr && *s != '\0' && std::string(s) != "0";
}

/// Verifies the IR a pass produced and logs it at NDP_DEBUG >= 2. Between passes the
/// compilation stops for Ctrl-C (Note [Cancellation] in include/ndp/interrupt.h).
void log_pass(const char* pass, const Program& p) {
  if (interrupt_pending()) throw Interrupted{};
  std::vector<std::string> problems = verify(p);
  if (!problems.empty()) {
    std::string msg = std::string("flat IR invalid after pass '") + pass + "':";
    for (const std::string& s : problems) msg += "\n  " + s;
    throw lang::InternalError(msg + "\n" + print_program(p));
  }
  if (debug_level() >= 2) std::fprintf(stderr, "---- after %s ----\n%s", pass, print_program(p).c_str());
}

}  // namespace

Program flatten(lang::core::Program& core, const lang::core::Expr* body) {
  Program p = vectorise(core, body);
  log_pass("vectorise", p);
  p = cse(std::move(p));
  log_pass("cse", p);
  p = merge_calls(std::move(p));
  log_pass("merge_calls", p);
  p = recursion_to_loops(std::move(p));
  log_pass("recursion_to_loops", p);
  if (!env_disabled("NDP_NO_INLINE")) {  // for measuring what inlining gains
    p = inline_calls(std::move(p));
    log_pass("inline_calls", p);
    // Inlined bodies repeat what their callers computed (Batcher's lows and highs each take
    // the halves' elements again), and the fusions below need one name for one value.
    p = cse(std::move(p));
    log_pass("cse", p);
  }
  // Last: the passes above do not know Kernel statements (their several results).
  if (!env_disabled("NDP_NO_FUSE")) {
    p = fuse_elementwise(std::move(p));
    log_pass("fuse_elementwise", p);
    p = fuse_siblings(std::move(p));
    log_pass("fuse_siblings", p);
    p = drop_dead(std::move(p));
    log_pass("drop_dead", p);
    if (!env_disabled("NDP_NO_FUSE_CONSUMERS")) {  // for measuring what consumer fusion gains
      p = fuse_consumers(std::move(p));
      log_pass("fuse_consumers", p);
      p = drop_dead(std::move(p));  // the literals that became constants of consumer kernels
      log_pass("drop_dead", p);
    }
  }
  // After every pass whose statements they read: chains first, since grouping moves filters
  // that a chain may not be formed across. Both run with NDP_NO_FUSE too (they group whatever
  // filters and appends there are), as the executors did before they were passes.
  p = chain_appends(std::move(p));
  log_pass("chain_appends", p);
  p = group_filters(std::move(p));
  log_pass("group_filters", p);
  if (!env_disabled("NDP_NO_LAY_OUT")) {  // for measuring what laying out results gains
    p = lay_out_results(std::move(p));      // reads the append chains
    log_pass("lay_out_results", p);
  }
  p = find_regular_levels(std::move(p));
  log_pass("find_regular_levels", p);
  p = find_partition_levels(std::move(p));  // (on laid-out loops that are not regular)
  log_pass("find_partition_levels", p);
  if (!env_disabled("NDP_NO_UNSHARE")) {  // for measuring what unsharing gains
    p = unshare_partition_calls(std::move(p));  // (reads the partition plans)
    log_pass("unshare_partition_calls", p);
  }
  p = mark_releases(std::move(p));
  log_pass("mark_releases", p);
  return p;
}

}  // namespace ndp::flatten
