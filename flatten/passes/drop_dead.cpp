// Removal of unread statements that cannot fail (see drop_dead.h).
#include "flatten/passes/drop_dead.h"

#include <algorithm>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

/// Drops the unread outputs of a kernel; false when none is left. A kernel that can fail keeps
/// its first output when none is read, since its checks must still run.
bool keep_read_outputs(Stmt& s, const std::vector<uint32_t>& count) {
  auto body = std::make_shared<KernelBody>(*s.kernel);
  std::vector<VarId> outs;
  body->outputs.clear();
  for (size_t o = 0; o < s.outs.size(); ++o) {
    if (count[s.outs[o]] == 0) continue;
    outs.push_back(s.outs[o]);
    body->outputs.push_back(s.kernel->outputs[o]);
  }
  if (outs.empty() && s.kernel->can_fail()) {
    outs.push_back(s.outs[0]);
    body->outputs.push_back(s.kernel->outputs[0]);
  }
  if (outs.empty()) return false;
  if (outs.size() != s.outs.size()) {
    s.outs = std::move(outs);
    s.dst = s.outs[0];
    s.kernel = std::move(body);
  }
  return true;
}

/// One sweep over a block and its nested blocks; true when something went.
bool sweep(const Function& f, Block& b, const std::vector<uint32_t>& count) {
  bool changed = false;
  std::vector<Stmt> kept;
  kept.reserve(b.stmts.size());
  for (Stmt& s : b.stmts) {
    for_each_sub_block(s, [&](Block& sub) { changed = sweep(f, sub, count) || changed; });
    bool dead = false;
    if (s.op == Op::Kernel) {
      size_t before = s.outs.size();
      dead = !keep_read_outputs(s, count);
      changed = changed || dead || s.outs.size() != before;
    } else if (s.op == Op::FilterGroup) {
      // All or nothing: a member's values come from the group's shared pass.
      dead = std::all_of(s.outs.begin(), s.outs.end(), [&](VarId o) { return count[o] == 0; });
      changed = changed || dead;
    } else if (s.op != Op::CheckLengths && pure_and_total(f, s)) {
      dead = count[s.dst] == 0;
      changed = changed || dead;
    }
    if (!dead) kept.push_back(std::move(s));
  }
  b.stmts = std::move(kept);
  return changed;
}

}  // namespace

Program drop_dead(Program p) {
  for (Function& f : p.functions)
    while (sweep(f, f.body, use_counts(f))) {
    }
  return p;
}

}  // namespace ndp::flatten
