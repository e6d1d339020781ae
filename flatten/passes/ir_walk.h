// Small queries over Flat IR statements shared by the passes.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Calls `f` on every block nested in `s` (branches, timed blocks, recursion-loop parts).
void for_each_sub_block(Stmt& s, const std::function<void(Block&)>& f);
void for_each_sub_block(const Stmt& s, const std::function<void(const Block&)>& f);

/// Every variable `s` reads, including inside its nested blocks, and block results.
void collect_uses(const Stmt& s, std::set<VarId>& out);
void collect_uses(const Block& b, std::set<VarId>& out);
/// Every variable defined by the statements of `b` (nested blocks included).
void collect_defs(const Block& b, std::set<VarId>& out);

/// True for statements with no effect and no possible error: one may be removed when nobody
/// reads its result, and computed before or after another statement without changing which
/// error a program reports.
bool pure_and_total(const Function& f, const Stmt& s);

/// How often each variable of `f` is read anywhere: by statements, nested blocks, block
/// results and the parts of recursion loops (saved values, the next level's path).
std::vector<uint32_t> use_counts(const Function& f);

}  // namespace ndp::flatten
