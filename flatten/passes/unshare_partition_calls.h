// Pass: calls that pass a partition loop's argument shared call the loop's own function on the
// gathered rows (Note [Partition calls unshared]).
#pragma once

#include "flatten/flat_ir.h"

namespace ndp::flatten {

// Note [Partition calls unshared]
// A function called on a sequence that every instance of its caller reads (Note [Shared
// arguments]: a benchmark repeating a sort of one input, a search over a fixed table) is
// vectorised a second time with that argument shared: its body is the function's first level,
// with shared reads, and its recursive call goes to the first variant, whose body is the
// recursion loop. Where that loop runs as partition levels (Note [Partition levels]), the first
// level ran statement by statement outside them (quicksort's filter group, the children's
// literal and the concatenation). Such a call now gathers its rows and calls the loop's
// function: the gather copies each instance's elements once, which the first level's partition
// did too. Quicksort of 2^24 ints on an H200: 5.46–5.51 ms with the first level outside, 5.09–
// 5.14 with the rows gathered; on 16 cores the copy costs more than the statements it replaces,
// 252–278 against 273–289 ms (bench/results/session46/final2). NDP_NO_UNSHARE=1 turns it off.

/// Assumes: valid Flat IR after find_partition_levels (before mark_releases).
/// Guarantees: every Call of a function F whose whole argument is one shared sequence (an int
/// id an instance and one base) becomes `rows = gather(base, ids); call G(rows)`, where G is F's
/// instantiation without shared arguments, the callee of F's own recursive call (the same name,
/// no path unless F has one, the base's type as its argument, F's result type), and G's body is
/// one recursion loop with partition levels; F goes where no other call reaches it; nothing else
/// changes.
Program unshare_partition_calls(Program p);

}  // namespace ndp::flatten
