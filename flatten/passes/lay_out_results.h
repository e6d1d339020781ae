// Pass: recursion loops whose results can be laid out before their calls (Note [Results laid
// out before the calls] in flatten/flat_ir.h).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Assumes: valid Flat IR, after chain_appends (a combine's `++`s are one AppendChain).
/// Guarantees: RecursionLoop::laid_out is set exactly on the loops of functions with no effect
/// whose finish is one merge of the base results with the branch, whose combine only
/// concatenates the children's results (an AppendChain of `elt(nest(counts, r), k)` for each
/// child k once and of rows defined before the calls) and whose
/// results are sequences of flat scalars; nothing else changes.
/// Also marks, for each laid-out loop whose step ends in a children literal of packs of one
/// vector by one filter group, those packs as the group's adjacent_packs.
Program lay_out_results(Program p);

// Note [Children one after another]
// A laid-out level's instances are independent once each has its place, so their order in the
// next level's argument is the executor's to choose. Quicksort's step ends in the literal
// `[lesser, greater]`, whose elements interleave the two: lesser_0, greater_0, lesser_1, ...,
// a copy of every element a level. Where the step's argument is such a literal that nothing
// else reads (children_literal), the level's argument is instead every instance's first child,
// then every second one, and the places follow: child c of recursing instance j is the next
// level's instance c·rec + j. The concatenation costs nothing where the children are packs of
// one vector by one filter group (quicksort's `lesser` and `greater`): the group lists them as
// its adjacent_packs, and the cpu backend writes them one after another into one buffer, so
// that their concatenation is a view of it (exec/cpu/filter_groups.cpp). NDP_CHILD_MAJOR=0 keeps
// the literal's order (exec/common/switches.h), for measuring.
// Not for Batcher's merge, which is not laid out: its ascent reads the children's results in
// the literal's order, which views of its regular rows give for free.

/// The step's last statements `seq = seqlit(x_1 .. x_k); lens = lengths(seq); a = elements(seq)`
/// (a the next argument, lens the plan's child counts) of laid-out loop `loop`, where nothing
/// else reads seq: the seqlit, whose children may go one after another (Note [Children one
/// after another]); null otherwise.
const Stmt* children_literal(const RecursionLoop& loop);

// Note [Base rows from the argument]
// A recursion whose base case returns its argument (`if #a < 2 then a`: quicksort, mergesort)
// makes its base results as `b = if_nonempty(n) { r = pack(arg, flags) }`, the argument's rows
// of the instances that finish. A laid-out level then places b's rows, each at its instance's
// place: at the deep levels a third of the instances finish so, each a row of zero or one
// element, and the pack copied those rows only for the placing to copy them again. Where
// nothing else reads b (base_from_argument), the level skips that statement and places the
// chosen rows of the argument itself (PlacedRows::put_rows_of in exec/common/placed_rows.h).

/// The statement of laid-out loop `loop`, in its prefix or among its finish's early
/// statements, that makes the base results as `if_nonempty(n) { pack(param, flags) }` with the
/// finish's flags, where the base instances are those whose flag is T and nothing but the
/// finish's merge reads those results (Note [Base rows from the argument]); null otherwise.
const Stmt* base_from_argument(const RecursionLoop& loop);

}  // namespace ndp::flatten
