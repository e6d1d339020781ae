// The last reader of each vector (see mark_releases.h).
#include "flatten/passes/mark_releases.h"

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "flatten/passes/ir_walk.h"

namespace ndp::flatten {

namespace {

struct Releases {
  std::vector<uint32_t> total;  // reads of each variable anywhere in the function
  std::vector<bool> pinned;     // block results and the variables recursion loops name

  bool has_path = false;

  void pin_block_results(const Block& b) {
    pinned[b.result] = true;
    for (const Stmt& s : b.stmts) {
      for_each_sub_block(s, [&](const Block& sub) { pin_block_results(sub); });
      if (const RecursionLoop* l = s.loop.get()) {
        for (VarId v : {l->call_result, l->branch}) pinned[v] = true;
        if (has_path) pinned[l->path] = pinned[l->next_path] = true;  // else they are unset
        for (VarId v : l->saved) pinned[v] = true;
      }
    }
  }

  /// One region: its statements in the order they run, and the variable bound before them
  /// (a recursion loop's parameter, with its reads inside the loop; the loop statement's own
  /// read is of the first level's value), if any.
  void region(const std::vector<Stmt*>& stmts, std::optional<std::pair<VarId, uint32_t>> bound) {
    std::set<VarId> defined;
    if (bound) defined.insert(bound->first);
    std::map<VarId, uint32_t> reads;
    std::map<VarId, size_t> last;
    for (size_t j = 0; j < stmts.size(); ++j) {
      const Stmt& s = *stmts[j];
      if (defines_outs(s.op)) defined.insert(s.outs.begin(), s.outs.end());
      else if (s.op != Op::CheckLengths) defined.insert(s.dst);
      for_each_read(s, has_path, [&](VarId v) {
        ++reads[v];
        last[v] = j;
      });
    }
    for (VarId v : defined) {
      uint32_t all = bound && v == bound->first ? bound->second : total[v];
      if (!pinned[v] && reads[v] > 0 && reads[v] == all) stmts[last[v]]->releases.push_back(v);
    }
    for (Stmt* s : stmts) nested(*s);
  }

  void block(Block& b) {
    std::vector<Stmt*> stmts;
    for (Stmt& s : b.stmts) stmts.push_back(&s);
    region(stmts, std::nullopt);
  }

  /// The regions inside `s`.
  void nested(Stmt& s) {
    if (RecursionLoop* l = s.loop.get()) {
      std::vector<Stmt*> descent;
      for (Stmt& t : l->prefix.stmts) descent.push_back(&t);
      for (Stmt& t : l->step.stmts) descent.push_back(&t);
      uint32_t param_reads = 0;  // inside the loop: the loop statement reads the first level's
      for (const Block* b : {&l->prefix, &l->step, &l->combine, &l->finish})
        for_each_read(*b, has_path, [&](VarId v) { param_reads += v == l->param; });
      region(descent, std::pair{l->param, param_reads});
      block(l->combine);
      block(l->finish);
      return;
    }
    for_each_sub_block(s, [&](Block& b) { block(b); });
  }
};

void clear(Block& b) {
  for (Stmt& s : b.stmts) {
    s.releases.clear();
    for_each_sub_block(s, [&](Block& sub) { clear(sub); });
  }
}

}  // namespace

Program mark_releases(Program p) {
  for (Function& f : p.functions) {
    clear(f.body);
    // The parameter is defined by no statement: only a recursion loop's descent, which binds
    // it at every level, releases it.
    Releases r{use_counts(f), std::vector<bool>(f.vars.size(), false), f.has_path};
    if (f.has_path) r.pinned[f.path] = true;
    r.pin_block_results(f.body);
    r.block(f.body);
  }
  return p;
}

}  // namespace ndp::flatten
