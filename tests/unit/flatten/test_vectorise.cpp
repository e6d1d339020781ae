// Vectorisation: the shape of the Flat IR produced for representative Core programs.
#include <doctest/doctest.h>

#include <string>

#include "flatten/flat_ir.h"
#include "flatten/vectorise.h"
#include "frontend/frontend.h"
#include "tests/unit/flatten/flattened.h"

using namespace ndp;
using namespace ndp::test::flat_ir;

TEST_CASE("a scalar expression is one lifted block in a context of one instance") {
  Flattened f("1 + 2 $");
  CHECK(f.flat.functions.size() == 1);
  CHECK(f.count("prim +") == 1);
  CHECK(f.count("lit 1") == 1);
}

TEST_CASE("apply-to-each works on the concatenated elements, free variables replicated") {
  Flattened f("let k = 10 in {x + k : x in [1, 2, 3]} $");
  CHECK(f.count("elements") == 1);
  CHECK(f.count("replicate") == 1);  // k enters the apply-to-each
  CHECK(f.count("nest") == 1);
}

TEST_CASE("a filter packs the instances before the body runs") {
  Flattened f("{10 / x : x in [0, 1, 2] | x > 0} $");
  size_t pack = f.text.find("pack(");
  size_t div = f.text.find("prim /");
  REQUIRE(pack != std::string::npos);
  CHECK(pack < div);
}

TEST_CASE("if runs both branches on packed subsets and merges") {
  Flattened f("{if i > 0 then 10 / i else 0 : i in [0, 1, 2]} $");
  CHECK(f.count("if_nonempty") == 2);
  CHECK(f.count("merge") == 1);
}

TEST_CASE("quicksort: one lifted instance per element type, recursion as a lifted call") {
  Flattened f(
      "function qs(a) = if #a < 2 then a else let p = a[#a/2]; l = {e in a | e < p}; "
      "e = {e in a | e == p}; g = {e in a | e > p}; r = {qs(v) : v in [l, g]} in r[0] ++ e ++ r[1] $"
      "qs([3, 1, 2]) $");
  CHECK(f.flat.functions.size() == 2);
  CHECK(f.count("function qs<int>") == 1);
  CHECK(f.count("call qs<int>") == 2);  // from main, and the recursive call
}

TEST_CASE("polymorphic functions are instantiated per type") {
  Flattened f("function id(x) = x $ (id(1), id(1.5), id(2)) $");
  CHECK(f.count("function id<int>") == 1);
  CHECK(f.count("function id<float>") == 1);
}

TEST_CASE("a function passed by name specialises the callee; calls through it are direct") {
  Flattened f("function sq(x) = x * x $ function ap(g, x) = g(x) $ (ap(sq, 3), ap(sq, 4), ap(negate, 5)) $");
  CHECK(f.count("function ap<int, int>[sq]") == 1);
  CHECK(f.count("function ap<int, int>[negate]") == 1);
  CHECK(f.count("call sq") == 1);
}

TEST_CASE("a call through a function chosen at run time dispatches over the candidates of its type") {
  // Note [Calls through function values]: sq and negate are the int -> int values the program
  // makes (sq named as a value, negate too); float functions and callees are not candidates.
  Flattened f("function sq(x) = x * x $ function half(x) = x / 2.0 $ "
              "function ch(b, x) = (if b then sq else negate)(x) $ (ch(t, 3), half(1.0)) $");
  CHECK(f.count("= fn_tag among 2(") == 1);
  CHECK(f.count("prim *(") == 1);             // the branch of sq (inlined)
  CHECK(f.count("prim negate(") == 1);        // the branch of the primitive
  CHECK(f.count("prim runtime_error(") == 1);  // a value that is none of them
}

TEST_CASE("a sequence literal of constants is one lit statement, not one per element") {
  Flattened f("[(1, 2.5), (3, 4.5), (5, 6.5)] $");
  CHECK(f.count("seqlit") == 0);
  CHECK(f.count("lit [(1, 2.5), (3, 4.5), (5, 6.5)]") == 1);
  Flattened nested("[[1, 2], [] int, [3]] $");
  CHECK(nested.count("seqlit") == 0);
  CHECK(nested.count("lit [[1, 2], [], [3]]") == 1);
  Flattened computed("let k = 10 in [1, k] $");  // an element computed: built per element
  CHECK(computed.count("seqlit") == 1);
}

TEST_CASE("an if with a call of one function in every branch becomes one recursion loop") {
  // flatten/merge_tail_calls.h: the Collatz loop has two self-calls, one per branch. (The
  // concatenation of the sequence it carries keeps it from being a loop kernel.)
  Flattened loop("function steps(n, k, s) = if n == 1 then k + #(s ++ s) else if rem(n, 2) == 0 then steps(n / 2, k + 1, s) "
                 "else steps(3 * n + 1, k + 1, s) $ {steps(n, 0, [n]) : n in [1, 7, 27]} $",
                 true);
  CHECK(loop.count("while(") == 1);
  CHECK(loop.count("call steps") == 1);  // main's call; none left inside the loop
  // Arguments that carry a sequence keep their two calls (no loop: two self-calls).
  Flattened seqs("function grow(s, n) = if #s >= n then s else if rem(#s, 2) == 0 then grow(s ++ [#s], n) "
                 "else grow([0] ++ s, n) $ grow([] int, 5) $",
                 true);
  CHECK(seqs.count("while(") == 0);
  CHECK(seqs.count("call grow") == 3);
}

/// A binary search in a table every instance reads, whose base case gives `found` (of lo).
static std::string binary_search(const std::string& found) {
  return "function search(table, x, lo, hi) = if hi - lo <= 1 then " + found +
         " else let mid = (lo + hi) / 2 in "
         "if table[mid] <= x then search(table, x, mid, hi) else search(table, x, lo, mid) $ "
         "let sq = {i * i : i in [0:20]} in {search(sq, x, 0, #sq) : x in [0, 10, 16]} $";
}

TEST_CASE("a sequence every instance reads is passed to a function shared, and a walk over it is one loop") {
  // Note [Shared arguments]: the table goes in as ids plus one base operand; the binary search's
  // two calls (one per branch) pass it unchanged, so they merge around it into one loop.
  // (Its result is a sequence, so it is not a loop kernel: Note [Loop kernels].)
  Flattened f(binary_search("[lo]"), true);
  CHECK(f.count("function search<int>(v_0 : int, int, int, int)") == 1);  // ids, not [int]
  CHECK(f.count("while(") == 1);
  const flatten::Function* search = nullptr;
  for (const flatten::Function& fn : f.flat.functions)
    if (fn.name == "search<int>") search = &fn;
  REQUIRE(search != nullptr);
  CHECK(search->shared_bases.size() == 1);
  CHECK(f.count("index_shared(") >= 1);
  CHECK(f.count("gather(") == 1);  // #sq per instance only; the table itself is never copied
}

TEST_CASE("a tail-recursive function over flat scalars is one loop kernel") {
  // Note [Loop kernels]: the state (n, k) in, the result k out, one iteration as nodes.
  Flattened collatz("function steps(n, k) = if n == 1 then k else if rem(n, 2) == 0 then steps(n / 2, k + 1) "
                    "else steps(3 * n + 1, k + 1) $ {steps(n, 0) : n in [1, 7, 27]} $",
                    true);
  CHECK(collatz.count("loop_kernel(") == 1);
  CHECK(collatz.count("while(") == 0);
  CHECK(collatz.count("-> done") == 1);
  CHECK(collatz.count("-> next ") == 2);
  // / and rem are guarded where their branch is not taken: they read selects of the state.
  CHECK(collatz.count("select(") >= 2);
  // A helper with a tuple result and a stdlib function are compiled in place.
  Flattened helper("function dist2((x, y)) = x * x + y * y $ "
                   "function walk(x, y, n) = if n == 0 or dist2((x, y)) > 4.0 then n else walk(x * x - y * y + 0.3, 2.0 * x * y, n - 1) $ "
                   "{walk(x, 0.0, 50) : x in [0.0, 0.5, 1.0]} $",
                   true);
  CHECK(helper.count("loop_kernel(") == 1);
  CHECK(helper.count("call ") == 0);
  // Not loops: a sequence grown by ++, a non-tail self-call, no self-call at all.
  Flattened seq("function grow(s, n) = if #s >= n then s else grow(s ++ [#s], n) $ grow([] int, 5) $", true);
  CHECK(seq.count("loop_kernel(") == 0);
  Flattened fact("function fact(n) = if n == 0 then 1 else n * fact(n - 1) $ {fact(n) : n in [3, 5]} $", true);
  CHECK(fact.count("loop_kernel(") == 0);
  Flattened plain("function sq(x) = x * x $ {sq(x) : x in [3, 5]} $", true);
  CHECK(plain.count("loop_kernel(") == 0);
  // A shared table read in place (Note [Sequences in loop kernels]): its rows follow the inputs.
  Flattened search(binary_search("lo"), true);
  CHECK(search.count("loop_kernel(") == 1);
  CHECK(search.count("; rows ") == 1);
  CHECK(search.count("while(") == 0);
}

TEST_CASE("a loop body reads each element once, but not across a fold's region") {
  // Note [Reads made once]: ds[i] is read twice in the source, once in the loop kernel; the
  // one read of counts and its one write stay.
  Flattened count("function count_loop(ds, i, counts) = if i == #ds then counts "
                  "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ "
                  "{count_loop(d, 0, dist(0, 4)) : d in [[0, 1, 1, 3], [2]]} $",
                  true);
  REQUIRE(count.count("loop_kernel(") == 1);
  CHECK(count.count("].0 if ") == 2);  // ds[i] and counts[ds[i]] (three reads before)
  CHECK(count.count(".0 := ") == 1);   // the write
  // xs[i] inside the fold's region and again after it: two reads, since no node after a Fold
  // may read its region.
  Flattened fold("function fold_read(xs, i, acc) = if i == #xs then acc "
                 "else fold_read(xs, i + 1, acc + sum({xs[i] * j : j in [0:4]}) + xs[i]) $ "
                 "{fold_read(xs, 0, 0) : xs in [[1, 2, 3], [10]]} $",
                 true);
  REQUIRE(fold.count("loop_kernel(") == 1);
  CHECK(fold.count(" fold from ") == 1);
  CHECK(fold.count("].0 if ") == 2);
}

TEST_CASE("an apply-to-each reduced inside a loop is a fold, never stored") {
  // Note [Folds in kernels]: min_val is a fold over the range, and the element read after it
  // computes the map's body once more; no statement builds the sequence.
  Flattened walk("function walk(xs, off, len, j, k) = "
                 "let ds = {xs[i] * float(k + 1) : i in [off:off + len]}; m = min_val(ds) "
                 "in if k == 0 or ds[j] == m then j else walk(xs, off, len, rem(j + 1, len), k - 1) $ "
                 "let xs = [3.0, 1.0, 2.0] in {walk(xs, 0, 3, j, 2) : j in [0, 1]} $",
                 true);
  CHECK(walk.count("loop_kernel(") == 1);
  CHECK(walk.count(" fold from ") == 1);
  // Note [Loops that give up]: the flattened loop beside it, for instances that fold too long.
  CHECK(walk.count("try_loop(") == 1);
  CHECK(walk.count("while(") == 1);
  CHECK(walk.count("fail if") == 3);  // [off:off + len], ds[j], a fold past kMostFoldSteps
  // Nested: a fold inside a fold's region.
  Flattened nest("function nest(n, k, acc) = if k > n then acc else nest(n, k + 1, acc + sum({sum({i * j : j in index(i)}) : i in [0:k]})) $ "
                 "{nest(n, 0, 0) : n in [2, 3]} $",
                 true);
  CHECK(nest.count("loop_kernel(") == 1);
  CHECK(nest.count(" fold from ") == 3);  // two in the loop; the flattened loop's inner map, a map kernel
  CHECK(nest.count("map_kernel(") == 1);
  // A filter has no element by index: left to the flattened loop.
  Flattened filter("function fl(xs, k, acc) = if k == 0 then acc else fl(xs, k - 1, acc + sum({x : x in xs | x > k})) $ "
                   "let xs = [1, 5] in {fl(xs, k, 0) : k in [1, 2]} $",
                   true);
  CHECK(filter.count("loop_kernel(") == 0);
}

TEST_CASE("an apply-to-each whose body folds a free sequence or a range is one map kernel") {
  // Note [Map kernels]: all pairs, one instance per y, the fold over xs an inner loop of it;
  // xs is read in place, never replicated per instance.
  Flattened pairs("let xs = [1, 2, 3] in {sum({x * y : x in xs}) : y in xs} $", true);
  CHECK(pairs.count("map_kernel(") == 1);
  CHECK(pairs.count(" fold from ") == 1);
  CHECK(pairs.count(") at auto") == 1);
  CHECK(pairs.count("replicate(") == 1);  // the instances' ids, not xs
  // A range, and the level `at` names, carried to the statement.
  Flattened ranges("{sum({i * j : j in [0:i]}) : i in [0:5]} at thread $", true);
  CHECK(ranges.count("map_kernel(") == 1);
  CHECK(ranges.count(") at thread") == 1);
  // A matrix product: the middle apply-to-each, whose body folds the free row; the outer one
  // gives sequences, and stays flattened.
  Flattened matmul("let a = [[1, 2], [3, 4]]; bt = [[5, 6], [7, 8]] in {{sum({x * y : x in r; y in c}) : c in bt} : r in a} $",
                   true);
  CHECK(matmul.count("map_kernel(") == 1);
  CHECK(matmul.count(" fold from ") == 1);
  // A fold over the instance's own row is either form, the map kernel or the segmented
  // reduction, as map_lanes chooses at run time; a filter has no element by index: flattened.
  Flattened own("let rows = [[1, 2], [3]] in {sum(r) : r in rows} $", true);
  CHECK(own.count("map_kernel(") == 1);
  CHECK(own.count("map_lanes(") == 1);
  CHECK(own.count("prim sum(") == 1);  // the flattened form, in the else branch
  Flattened pinned_own("let rows = [[1, 2], [3]] in {sum(r) : r in rows} at warp $", true);
  CHECK(pinned_own.count("map_lanes(") == 0);
  CHECK(pinned_own.count(") at warp") == 1);
  Flattened grid_own("let rows = [[1, 2], [3]] in {sum(r) : r in rows} at grid $", true);
  CHECK(grid_own.count("map_kernel(") == 0);
  CHECK(grid_own.count("map_lanes(") == 0);
  Flattened filter("let xs = [1, 5] in {sum({x : x in xs | x > y}) : y in [0, 2]} $", true);
  CHECK(filter.count("map_kernel(") == 0);
  // The rows of a shared sequence, read in place, are each instance's own rows all the same
  // (SpMV inside a loop): either form, chosen from the shared rows.
  Flattened shared_rows("let rows = [[1, 2], [3]]; x = [2] in {{sum({c * x[0] : c in r}) : r in rows} : k in [1, 2]} $", true);
  CHECK(shared_rows.count("map_lanes(") == 1);
  CHECK(shared_rows.count("map_kernel(") == 1);
  // A pinned level survives the whole pipeline, the inlining of a small function included.
  Flattened inlined("function pw(xs) = {sum({x * y : x in xs}) : y in xs} at subwarp(8) $ pw([1, 2, 3]) $", true);
  CHECK(inlined.count("map_kernel(") == 1);
  CHECK(inlined.count(") at subwarp(8)") == 1);
  // No fold: an elementwise kernel.
  Flattened plain("let xs = [1, 5] in {x + 1 : x in xs} $", true);
  CHECK(plain.count("map_kernel(") == 0);
}

TEST_CASE("a sequence a loop only appends to is filled in slots") {
  // Note [Appended sequences in loop kernels]: each element's components are SeqAppend nodes;
  // the done branch may lack the appends of the branch that goes on.
  Flattened grow("function grow(k, n, acc) = if k == n then acc else grow(k + 1, n, acc ++ [(k, k * k)]) $ "
                 "{grow(0, n, [] (int, int)) : n in [1, 3]} $",
                 true);
  CHECK(grow.count("loop_kernel(") == 1);
  CHECK(grow.count(" ++= ") == 2);
  CHECK(grow.count("try_loop(") == 0);  // no fold: it cannot give up
  // Appended, then dropped by the branch that is done: the done iteration would append too.
  Flattened dropped("function d(k, acc) = let more = acc ++ [k] in if k == 0 then acc else d(k - 1, more) $ "
                    "{d(k, [] int) : k in [1, 2]} $",
                    true);
  CHECK(dropped.count("loop_kernel(") == 0);
  // Read after appending: the rows are not there to read.
  Flattened read("function r(k, acc) = if k == 0 then acc else r(k - 1, acc ++ [#acc]) $ {r(k, [] int) : k in [1, 2]} $", true);
  CHECK(read.count("loop_kernel(") == 0);
  // A write a branch drops (Note [Sequence state in loop kernels]): the other branch would
  // store it too, so this is the flattened loop.
  Flattened drop_write("function dw(c, k) = if k == 0 then c else let c2 = rep(c, c[0] + 1, 0) in dw((if rem(k, 2) == 0 then c2 else c), k - 1) $ "
                       "{dw([0], k) : k in [3, 4]} $",
                       true);
  CHECK(drop_write.count("loop_kernel(") == 0);
}

TEST_CASE("a loop that changes a sequence in its state by rep writes it in place") {
  // Note [Sequence state in loop kernels]: each block's digits are read by instance, the
  // counts written, and returned as the statement's sequence output.
  Flattened count("function count_loop(ds, i, counts) = if i == #ds then counts "
                  "else count_loop(ds, i + 1, rep(counts, counts[ds[i]] + 1, ds[i])) $ "
                  "{count_loop(d, 0, dist(0, 4)) : d in [[1, 2, 1], [3]]} $",
                  true);
  CHECK(count.count("loop_kernel(") == 1);
  CHECK(count.count(" = instance") == 1);
  CHECK(count.count(":= ") == 1);  // one SeqWrite
  CHECK(count.count("while(") == 0);
  // A read after a rep in the same iteration would see the stored value too early: left to the
  // flattened loop.
  Flattened after("function bump(c, k) = if k == 0 then c else let c2 = rep(c, c[0] + 1, 0) in bump(rep(c2, c2[0] * 2, 1), k - 1) $ "
                  "{bump(c, 2) : c in [[0, 0], [5, 1]]} $",
                  true);
  CHECK(after.count("loop_kernel(") == 0);
  // A sequence the loop changes but does not return is still its own copy per instance.
  Flattened unreturned("function mark(tb, k) = if k == 0 then #tb else mark(rep(tb, 0, k), k - 1) $ "
                       "let tb = [1, 2, 3] in {mark(tb, k) : k in [1, 2]} $",
                       true);
  CHECK(unreturned.count("loop_kernel(") == 1);
  CHECK(unreturned.count(":= ") == 1);
}

namespace {

/// The first loop_kernel statement of `b` or of a block inside it.
flatten::Stmt* find_loop_kernel(flatten::Block& b) {
  for (flatten::Stmt& s : b.stmts) {
    if (s.op == flatten::Op::LoopKernel) return &s;
    for (flatten::Block* inner : {s.then_block.get(), s.else_block.get()})
      if (inner)
        if (flatten::Stmt* found = find_loop_kernel(*inner)) return found;
  }
  return nullptr;
}

bool any_mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const std::string& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("verify rejects a fold's region read from outside it, and a malformed fail") {
  // Note [Folds in kernels]: a loop kernel with one fold, broken two ways after the fact.
  Flattened f("function s(k, acc) = if k == 0 then acc else s(k - 1, acc + sum({x * k : x in [0:k]})) $ "
              "{s(k, 0) : k in [1, 2]} $",
              true);
  REQUIRE(flatten::verify(f.flat).empty());
  flatten::Stmt* loop = nullptr;
  for (flatten::Function& fn : f.flat.functions)
    if (!loop) loop = find_loop_kernel(fn.body);
  REQUIRE(loop != nullptr);
  const flatten::KernelBody original = *loop->kernel;
  uint32_t index = 0, fail = 0;
  for (uint32_t j = 0; j < original.nodes.size(); ++j) {
    if (original.nodes[j].kind == flatten::KernelNode::Kind::FoldIndex) index = j;
    if (original.nodes[j].kind == flatten::KernelNode::Kind::Fail) fail = j;
  }
  REQUIRE(original.nodes[index].input > index);  // its Fold
  REQUIRE(fail > 0);
  // The loop's next state reads the fold's index after the Fold.
  flatten::KernelBody outside = original;
  flatten::KernelNode neg;
  neg.kind = flatten::KernelNode::Kind::Prim;
  neg.prim = lang::core::PrimId::Negate;
  neg.args = {index};
  neg.type = outside.nodes[index].type;
  outside.nodes.push_back(neg);
  loop->kernel = std::make_shared<const flatten::KernelBody>(outside);
  CHECK(any_mentions(flatten::verify(f.flat), "reads a node of a fold's region from outside it"));
  // A Fail node with one operand of its message.
  flatten::KernelBody bad_fail = original;
  bad_fail.nodes[fail].args.push_back(bad_fail.nodes[fail].args[0]);
  loop->kernel = std::make_shared<const flatten::KernelBody>(bad_fail);
  CHECK(any_mentions(flatten::verify(f.flat), "a bad fold, failure or append"));
}
