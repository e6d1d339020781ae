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
/// Every variable defined by `s` or by the statements of `b` (nested blocks included).
void collect_defs(const Stmt& s, std::set<VarId>& out);
void collect_defs(const Block& b, std::set<VarId>& out);

/// True for statements with no effect and no possible error: one may be removed when nobody
/// reads its result, and computed before or after another statement without changing which
/// error a program reports.
bool pure_and_total(const Function& f, const Stmt& s);

/// Calls `read` once per read of a variable by `s`: its operands, its nested blocks' statements
/// and results, and a recursion loop's saved values and (where the function carries rand
/// paths, `has_path`) the next level's path.
void for_each_read(const Stmt& s, bool has_path, const std::function<void(VarId)>& read);
/// The same for a block's statements and its result.
void for_each_read(const Block& b, bool has_path, const std::function<void(VarId)>& read);

/// How often each variable of `f` is read anywhere (for_each_read over its body).
std::vector<uint32_t> use_counts(const Function& f);

/// Whether `b` runs an effect (I/O, rand, time), itself or through a function whose entry in
/// `effectful` is set.
bool block_has_effect(const Block& b, const std::vector<bool>& effectful);
/// For each function of `p`, whether it can (transitively) run an effect: merging or splitting
/// its calls would reorder it.
std::vector<bool> effectful_functions(const Program& p);

/// `f(fn, loop)` for each recursion loop of each function of `p` with no effect (the loops that
/// lay_out_results and the finders of level plans may plan), outer loops first.
void for_each_loop_of_pure_functions(Program& p, const std::function<void(const Function&, RecursionLoop&)>& f);

/// Calls `f` on every function id `b` names (calls and recursion loops), nested blocks included.
void for_each_callee(Block& b, const std::function<void(FuncId&)>& f);
/// Drops the functions the entry no longer reaches (all their calls inlined, or redirected),
/// renumbering the calls of the others.
void drop_unreachable(Program& p);

}  // namespace ndp::flatten
