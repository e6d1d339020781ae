// The Flat IR: a host program of vector operations on segmented arrays (architecture.md).
//
// Note [Flat IR semantics]
// * Lifting everywhere. Every function exists only in lifted form: `f^` takes a vector of n
//   argument instances and returns the vector of the n results. A top-level expression is a
//   block run in a context of one instance. Inside a block all vector variables have the same
//   number of instances, the block's context length; statements that change the context
//   (Elements, Pack) produce values for a nested block.
// * Values. A vector variable of element type T (a closed lang::Type) holds n instances of T,
//   stored flat (architecture.md "Values"): scalars in one buffer, sequences as a lengths
//   vector plus the vector of all their elements, pairs and datatypes as structure of arrays.
//   Empty sequences and empty contexts (n = 0) are legal everywhere.
// * Host scalars (`is_host`) are plain integers: context lengths and counts, used only for
//   control (IfNonEmpty) and to create vectors of a given length.
// * Evaluation is in statement order; only IfNonEmpty chooses a block. Both branches of a
//   source `if` in a lifted context run, each on the packed subset of instances that takes it,
//   and are merged back in order; a branch with no instances is skipped (this is also what
//   ends recursion).
// * Errors. A statement with a span reports runtime errors (bounds, division by zero, length
//   mismatch) with the same message and location as the interpreter.
// * Names are unique per function (`VarId`); `names[id]` keeps a source hint for printing.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "lang/core.h"
#include "lang/diagnostics.h"
#include "lang/source.h"
#include "lang/types.h"
#include "lang/value.h"

namespace ndp::flatten {

enum class Op : uint8_t {
#define NDP_FLAT_OP(name, text, doc) name,
#include "flatten/flat_ops.def"
#undef NDP_FLAT_OP
};
const char* op_name(Op op);

using VarId = uint32_t;
using FuncId = uint32_t;

struct Block;
struct RecursionLoop;
struct KernelBody;
struct FilterGroup;
struct AppendChain;

struct Stmt {
  Op op;
  VarId dst = 0;                      // unused by CheckLengths
  std::vector<VarId> uses;
  lang::Span span;
  // attributes, by op
  lang::Value lit;                    // Lit; Const uses lit.as_int()
  const lang::Type* type = nullptr;   // Lit/Empty: element type; Prim: result element type
  uint32_t global = 0;                // Global
  lang::core::PrimId prim = lang::core::PrimId::Count_;
  std::vector<const lang::Type*> type_args;  // Prim: closed instantiation of the primitive
  FuncId func = 0;                    // Call
  std::unique_ptr<Block> then_block;  // IfNonEmpty, Time
  std::unique_ptr<Block> else_block;  // IfNonEmpty
  std::unique_ptr<RecursionLoop> loop;  // Recurse
  std::shared_ptr<const KernelBody> kernel;  // Kernel: the fused scalar expression; FilterGroup: its predicates
  std::vector<VarId> outs;            // Kernel, FilterGroup: the variables of its outputs (dst = outs[0])
  std::shared_ptr<const FilterGroup> filters;  // FilterGroup: its members
  std::shared_ptr<const AppendChain> chain;    // AppendChain: its sources
  std::vector<VarId> releases;        // read for the last time here (Note [Releasing dead vectors])
  lang::ast::AtLevel level = lang::ast::AtLevel::Auto;  // MapKernel: the unit `at LEVEL` pins (Note [Map kernels])
  uint8_t subwarp_width = 0;                            // MapKernel at subwarp(N): N
};

struct Block {
  std::vector<Stmt> stmts;
  VarId result = 0;
};

// Note [Recursion as loops]
// A function whose body is `P1; b = if_nonempty(c) { T1; r = call self(a); T2 } else
// { nothing }; P2` (one self-call, in a branch at the top of the body) runs as two loops instead
// of host recursion (flatten/passes/recursion_to_loops):
//
//   level argument := uses[0]
//   descend: repeat { run P1 with param := level argument;
//                     if c == 0: b := nothing; run P2; result := P2's result; stop
//                     run T1; push the values of `saved`; level argument := a }
//   ascend:  while the stack is not empty { pop `saved`; r := result; run T2; b := T2's result;
//                                            run P2; result := P2's result }
//
// Each iteration of the descent processes every instance of one recursion depth at once;
// finished instances leave through the base branch of their level, and the stack holds, per
// level, the segment descriptors and values the ascent needs to put results back together.
//
// Note [Results laid out before the calls]
// Quicksort's ascent moves every element twice a level: `sorted[0] ++ equal ++ sorted[1]` (the
// combine's append chain) and the merge of the finished instances' results with the recursing
// ones' (the finish). Where every level's result has exactly the length of its argument, each
// instance's result has a place known before its calls: instance i of the first level owns
// elements [at_i, at_i + #arg_i) of the loop's result, its children own consecutive parts of
// that range in the order the combine concatenates them, and the pieces the combine takes from
// the level (`equal`) go to the parts between. flatten/passes/lay_out_results finds the loops
// whose combine only concatenates (an append chain) and whose finish only merges (LaidOut);
// the executor then runs the descent alone, placing each finished instance's result and each
// piece where it belongs, level by level, and never ascends (exec/common/flat_walk.h,
// lay_out_from; the cpu backend, whose tasks place their instances' results themselves; the
// cuda backend's lay_out_levels, which keeps the places on the device).
// A combine that flattens its children's results (`flatten({f(h) : h in halves})`: Batcher's
// merge) is not laid out: its ascent copies nothing (nest and flatten only cut the results
// anew), where the layout would copy every element once more and turn the views of regular
// rows that such results are (Note [Generated buffers] in exec/host/vec.h) into stored ones:
// measured on 16 cores, Batcher 2^20 took 209.6 ms laid out against 81.4 ms.
// The lengths are checked as the descent goes, per instance: a finished instance's result has
// its argument's length; a recursing instance has as many children as the combine takes, and
// its children's arguments and its pieces together have its argument's length. By induction
// from the deepest level every result then has its argument's length. A check that fails (a
// function that drops or adds elements) abandons the layout, and the loop runs again from its
// first level as Note [Recursion as loops] says; so only loops with no effect anywhere are laid
// out (flatten::effectful_functions), and the answer never depends on it.
struct LaidOut {
  /// A part of a recursing instance's result, in order: child `child` (its `child`-th
  /// recursive call), or the instance's row of the level's vector `rows`.
  struct Piece {
    enum class Kind : uint8_t { Child, Rows };
    Kind kind = Kind::Child;
    uint32_t child = 0;
    VarId rows = 0;
  };
  VarId flags = 0;         // the finish merge's flags
  bool base_when = true;   // the instances whose flag is this finish at this level
  VarId base = 0;          // their results, in instance order
  VarId child_counts = 0;  // each recursing instance's number of children (the combine's nest)
  std::vector<Piece> pieces;
  /// The finish's statements that compute the base results (all but the merge), run right
  /// after the prefix, and the combine's statements that do not read the calls' results (the
  /// pieces: quicksort's `equal` where only the combine reads it), run right after the step.
  /// None can fail, so running them a level early reports no other error.
  std::vector<uint32_t> early_finish, early_combine;
  /// The Child pieces' number: every recursing instance has exactly that many children.
  uint32_t children() const {
    return static_cast<uint32_t>(std::count_if(pieces.begin(), pieces.end(), [](const Piece& p) { return p.kind == Piece::Kind::Child; }));
  }
};

// Note [Regular levels]
// Batcher's merge halves every instance, puts the halves' elements through one elementwise
// kernel (min and max) and recurses on the kernel's outputs, which the ascent concatenates
// again. Where every instance of a level has one length L (its argument is regular: Note
// [Known values] in exec/cuda/device_vec.cpp), every instance does the same thing at every
// level: the lengths, the flags and the parts' sizes are functions of L alone, and each child's
// result lands where its argument's elements were. The whole loop is then one array rewritten
// in place, level by level: at a level of length L with k parts of m = L / k, element j of child
// c of instance i is map output child_outputs[c] of the elements j of the parts the map reads,
// all at i·L + part·m + j. flatten/passes/find_regular_levels finds such loops; a backend that
// runs them so (the cuda backend's regular levels: one kernel a level while instances are
// large, then one kernel for all the levels left with a block's share of the array in shared
// memory) computes the lengths' chain on the host first, and runs the loop as ever where any
// level's lengths do not divide so (odd lengths, whose zip fails as the program says).
//
// Note [Regular ascents]
// Batcher's sort halves every instance and recurses on the halves themselves; its ascent calls
// the merge on `sorted[0] ++ reverse(sorted[1])`. With one length L, each ascent level of length
// l permutes every instance's children in place (here: reverses its second half) and runs the
// merge's regular levels from l down. So the sort is, bottom up, a permutation and a regular
// loop for each length of its chain: on the cuda backend, one kernel for every level whose
// instances fit a block's tile (permutations and merges in shared memory), then for each longer
// one a permutation kernel and the merge's levels.
struct RegularLevels {
  /// A per-instance scalar of a level computed from its argument's length L alone.
  struct LenExpr {
    enum class Kind : uint8_t { Length, Const, Kernel };
    Kind kind = Kind::Length;
    int64_t value = 0;                         // Const
    std::shared_ptr<const KernelBody> kernel;  // Kernel: output `output` of it, on the earlier
    uint32_t output = 0;                       // exprs `args` (one per kernel input)
    std::vector<uint32_t> args;
  };
  std::vector<LenExpr> exprs;   // each reads earlier ones only
  uint32_t recurse = 0;         // the bool expr true where a level recurses (the prefix's count)
  uint32_t base_flags = 0;      // the finish merge's flags: the base result (the argument) where
  bool base_when = true;        // they equal base_when
  std::vector<uint32_t> parts;  // each part's length expr, in the partition's order
  std::shared_ptr<const KernelBody> map;  // the step's elementwise kernel
  std::vector<uint32_t> input_parts;      // map input q reads part input_parts[q]
  std::vector<uint32_t> child_outputs;    // the next level's child c is map output child_outputs[c]
  /// Note [Regular ascents]: where the children are the parts themselves (no map), the combine
  /// calls `callee` (a regular loop of the map form) on the children's results put one after
  /// another as `pieces` say, each child once, forwards or reversed.
  struct Piece {
    uint32_t child = 0;
    bool reversed = false;
  };
  std::vector<Piece> pieces;
  std::shared_ptr<const RegularLevels> callee;
  /// The levels' lengths from each first length asked so far (exec/host/regular_chain.h), kept
  /// with the plan: a sort calls its merge once a level with the same few lengths. Shared by
  /// copies of the plan, which are the same plan.
  struct ChainMemo {
    std::mutex mu;
    std::map<int64_t, std::optional<std::vector<int64_t>>> chains;
  };
  std::shared_ptr<ChainMemo> chain_memo = std::make_shared<ChainMemo>();
};

// Note [Partition levels]
// Quicksort takes a pivot from each instance, filters the instance's elements into parts by
// predicates of an element and the pivot, recurses on some parts, and puts the results and the
// other parts one after another: a laid-out loop (Note [Results laid out before the calls]) whose
// parts are all filters of its argument. Where every element of a recursing instance meets
// exactly one part's predicate, a level is a stable partition of each instance in place: part j
// of an instance at `at` lands at `at` plus the sizes of the parts before it, its elements in
// their order, which is where part j's result goes. The loop is then one array rewritten level by
// level. flatten/passes/find_partition_levels finds such loops:
//  - whether an instance recurses is a function of its length alone that cannot fail, and an
//    instance that does not has its argument for its result;
//  - the scalars the predicates read are functions of the length and of elements at positions
//    computed from the length (the pivot `a[#a / 2]`);
//  - every part is the argument filtered by an output of one elementwise kernel of the element
//    and those scalars; the combine puts the children's results and the other parts one after
//    another, each once.
// What the program does not say, a backend checks as it runs (the cuda backend's partition
// levels: Note [Partition levels on the GPU] in codegen/partition_levels_ptx.h): that every
// element meets exactly one predicate, that the scalars do not fail, that no child is its
// whole instance (a recursion that would not end), and that empty instances do not recurse. Where one does not hold, the loop runs level
// by level as ever, which gives the program's answer or its error.
struct PartitionLevels {
  /// A per-instance scalar: the length, a constant, an output of a kernel over earlier scalars,
  /// or the element at an earlier scalar (args[0]: an index, checked).
  struct Scalar {
    enum class Kind : uint8_t { Length, Const, Kernel, Element };
    Kind kind = Kind::Length;
    const lang::Type* type = nullptr;
    int64_t value = 0;                         // Const
    std::shared_ptr<const KernelBody> kernel;  // Kernel: output `output` on `args`, one an input
    uint32_t output = 0;
    std::vector<uint32_t> args;
  };
  std::vector<Scalar> scalars;  // each reads earlier ones only
  uint32_t recurse = 0;         // the bool scalar, of the length alone, true where an instance recurses
  /// The predicates: input 0 is the element, input q + 1 the scalar predicate_scalars[q]; each
  /// part's flag is one of its bool outputs. Cannot fail.
  std::shared_ptr<const KernelBody> predicates;
  std::vector<uint32_t> predicate_scalars;
  struct Part {
    uint32_t output = 0;  // the predicates' output that is this part's flag
    bool child = false;   // recursed on (else the part is itself in the result)
  };
  std::vector<Part> parts;  // in the result's order
  /// What the cuda backend's engine holds (codegen/partition_engine.cu); the pass plans no more.
  static constexpr size_t kMostParts = 4, kMostPredicateScalars = 4;
};

struct RecursionLoop {
  Block prefix;   // P1; result: the host count c of instances that recurse
  Block step;     // T1; result: the next level's argument a
  Block combine;  // T2; result: the value of the branch b
  Block finish;   // P2; result: the level's result
  VarId param = 0;        // the function parameter, rebound per level
  VarId path = 0;         // the function's path parameter, rebound per level (if it has one)
  VarId next_path = 0;    // in `step`: the next level's path hashes (if the function has a path)
  VarId call_result = 0;  // r
  VarId branch = 0;       // b
  std::vector<VarId> saved;  // defined in P1/T1 and used in T2/P2
  std::optional<LaidOut> laid_out;  // Note [Results laid out before the calls]
  std::optional<RegularLevels> regular;  // Note [Regular levels]
  std::optional<PartitionLevels> partition;  // Note [Partition levels]
};

// Note [Fused kernels]
// A Kernel statement (flatten/passes/fuse_elementwise) computes several elementwise primitives
// in one pass over its n instances: for every i, `outs[k][i] = value of node outputs[k]` where
// the nodes are evaluated in order on `uses[j][i]`. Nodes are inputs or applications of pure
// scalar primitives on flat scalar element types (int, float, bool, char, i32, f32), with the
// semantics of the lifted primitives (exec/host/lifted_prims_scalar.cpp): wrapping integer
// arithmetic, IEEE floats, bool as 0/1, the math library's functions. Const nodes are scalar
// literals the kernel reads instead of a vector of n copies; every kernel keeps at least one
// input, which gives n. The body holds no variable ids, so equal bodies share compiled code.
//
// Note [Kernels that can fail]
// Some nodes can fail (integer / and rem by zero, sqrt and ln of a negative number, float ->
// int out of range, ... : kernel_prim_fallible in fuse_elementwise.h); each keeps the span of
// the statement it came from. Every instance computes every node (a failed node yields a
// harmless value), and the kernel records the lowest (node, instance) that failed in one word,
// the failure record (kernel_failure_record in flatten/kernel_abi.h). The executor raises the
// error of that node at that instance, as its unfused statement would: the unfused statements
// run one after the other over all instances, so the first statement with a failing instance
// fails, at its first failing instance, and nodes are in statement order. For that order to be
// the program's, fusion never moves a node that can fail past a statement that can fail or has
// an effect (fuse_elementwise, fuse_siblings). Such kernels are never fused into consumers.
struct KernelNode {
  enum class Kind : uint8_t { Input, Prim, Const, SeqLength, SeqElt, SeqWrite, Instance, FoldIndex, FoldAcc, Fold, Fail, SeqAppend };
  Kind kind = Kind::Input;
  uint32_t input = 0;                 // Input: index into uses / KernelBody::inputs; Seq*: into KernelBody::seqs;
                                      // FoldIndex, FoldAcc: the Fold node; Fold: its FoldIndex node
  uint32_t component = 0;             // SeqElt, SeqWrite, SeqAppend: the flat component of the element;
                                      // Fail: its lang::RuntimeErrorId, or kFailRaises
  lang::Value value;                  // Const: a scalar of the node's type (a fused Lit); Fail: the message
  lang::core::PrimId prim = lang::core::PrimId::Count_;  // Prim
  std::vector<uint32_t> args;         // Prim, Seq*, Fold, Fail: indices of earlier nodes (Note [Loop kernels])
  const lang::Type* type = nullptr;   // the node's element type (a flat scalar)
  lang::Span span;                    // Prim: where its error is reported (Note [Kernels that can fail])
};

/// A value computed from a kernel body on first use and kept with it, since the executors ask
/// for it at every launch (a key is a string of every node). A copy starts empty, so a body
/// copied and then changed (as passes do) never keeps its original's value; a body is not
/// changed in place once something has asked (bodies are shared as const). Threads may ask
/// at once (the cpu backend's chunks): the first value stored is the one every caller gets.
template <class T>
struct BodyMemo {
  mutable std::atomic<std::shared_ptr<const T>> value;
  BodyMemo() = default;
  BodyMemo(const BodyMemo&) {}
  BodyMemo& operator=(const BodyMemo&) {
    value.store(nullptr);
    return *this;
  }
  template <class F>
  const T& get(F&& compute) const {
    std::shared_ptr<const T> v = value.load();
    if (!v) {
      std::shared_ptr<const T> fresh = std::make_shared<const T>(compute());
      v = value.compare_exchange_strong(v, fresh) ? fresh : v;
    }
    return *v;  // `value` keeps it alive: once stored it changes only when the body is rebuilt
  }
};

// Note [Loop kernels]
// A function whose every step is scalar work and whose recursion is a tail call of itself (a
// `while` loop over scalars: an iteration count, an accumulator, a walk by index) runs as one
// LoopKernel statement, each instance looping on its own (flatten/loop_kernels.cpp), instead of
// a recursion loop that launches every statement of the body once per iteration. Its body is a
// KernelBody with `loop` set: the first loop_next.size() inputs are the state, the nodes are
// one iteration, and per instance
//
//   state := inputs; repeat { evaluate the nodes on state; if node loop_done: outputs, stop;
//                             state := nodes loop_next }
//
// Note [Sequences in loop kernels]
// A loop may read sequences that every iteration passes on unchanged and that are shared by
// the instances (Note [Shared arguments]: a table, a tree): each is one more operand of the
// statement after the inputs, the rows of the shared sequences, and each instance's row id is
// an int input like the state. A SeqLength node (args: the row id) is that row's length and a
// SeqElt node (args: the row id, the index) reads one flat component of one element, failing
// as elt does on an index out of bounds. The kernel reads them in place: after the input
// pointers come, per sequence, its rows' offsets (n_rows + 1 int64) and its components'
// element arrays.
//
// A sequence read by every instance on its own (a parameter that is not shared) is read the
// same way, its row being the instance's number (an Instance node).
//
// Note [Sequence state in loop kernels]
// A sequence in the loop's state that the body changes only by rep (`rep(counts, c + 1, d)`:
// a bucket count per iteration) is `written`: the executor gives the kernel a copy of each
// instance's row, which the kernel changes in place, and the rows are the statement's sequence
// outputs. A SeqWrite node (args: row, index, value, and a guard) checks its index as elt
// does when it is evaluated, but stores only at the end of an iteration that goes on, in node
// order: every read of the iteration sees the state it started with, and a done iteration
// changes nothing. So the compiler takes a written sequence only where the body reads the
// state the iteration started with, returns it unchanged when done, and passes on exactly the
// reps it made (flatten/loop_kernels.cpp).
//
// An iteration with a failing node stops that instance and records it as a plain kernel does
// (Note [Kernels that can fail]); the record's node names the error. Both branches of an if
// inside the body are evaluated, so a node that can fail in a branch reads its operands
// through selects that give it harmless ones (1) where the branch is not taken.
// Known limit: a loop that never ends holds its kernel, so Ctrl-C (Note [Cancellation]) is
// seen only when the kernel returns; the flattened loop stopped between statements.
//
// Note [Folds in kernels]
// An apply-to-each inside a loop body over a range or a sequence the loop reads, consumed by
// reductions, `#` and indexing (`min_index({f(i) : i in [a:b]})`), is never stored: it is a
// sequence by its length and a function from an index to its element, and each reduction of it
// is a Fold, an inner loop of the instance. The nodes strictly between a FoldIndex node and its
// Fold node are the fold's region, evaluated once per index k in [0, count):
//
//   acc := init; for k in [0, count): { FoldIndex := k; FoldAcc := acc; the region's nodes;
//                                       acc := next };  Fold := acc      (args: count, init, next)
//
// count and init come before the region, next is in it, and no node after the Fold reads a
// node of the region. Regions nest. The fold runs left to right, so a sum of floats adds in
// the interpreter's order. A node of the region that fails makes its Fold fail (the record
// names the Fold; the host evaluates the region again to raise the error: Note [Kernels that
// can fail]).
//
// A Fail node (args: a bool, then its message's operands) fails where the bool holds, with the
// error `component` names (a lang::RuntimeErrorId formatted with the int operands, or
// kFailRaises: runtime_error of the message `value`); its value is a harmless 0.
//
// Note [Appended sequences in loop kernels]
// A sequence in the loop's state that the body changes only by appending (`acc ++ [x]`: the
// triangles a walk finds) is `appended`: a SeqAppend node (args: row, value, and a guard) adds
// one flat component of one element where its guard holds, at the end of the iteration, done
// or not, in node order. The body never reads such a sequence, and every tail (the result and
// the next state) holds all of its appends. The instance's result row is its input row and
// every element appended to it. Its length is known only when the loop ends, so the executor
// gives each instance a slot (after the sequence's input pointers: the slots' offsets,
// n + 1 int64, the row lengths, n int64 written by the kernel, and one array per component);
// an instance writes what fits its slot and counts the rest. Where a row outgrew its slot the
// executor runs the kernel again with slots of the exact lengths (the counts), else it packs
// the slots into the rows.
inline constexpr uint32_t kFailRaises = 0xffffffffu;  // Fail: runtime_error of its message

/// identity(x) at a flat scalar type `t` other than a pair, as lang::eval::identity_of_type
/// gives it: a literal a kernel can hold, and the harmless value of a Fail node.
lang::Value identity_of_plain(const lang::Type* t);

// Note [Loops that give up]
// A loop kernel's instance runs its folds on one thread, where the flattened loop would run
// each fold over all instances at once: one instance that folds 10^7 elements an iteration
// (a bisection over a big sequence) would run for seconds on one GPU thread, and could not be
// interrupted. So a loop kernel that folds counts its instances' fold steps, and an instance
// past its budget of them stops, with the failure record of node nodes.size(): the kernel
// gives up, and the executor throws LoopGaveUp. Such a kernel is the then_block of a TryLoop
// statement whose else_block is the same function flattened (flatten/vectorise.cpp), which
// then runs instead. A real failure has a lower record, and is raised.
// A fold stops as soon as the budget is spent, so giving up wastes at most the budget's time:
// a host core folds 2^20 steps in a few ms; one GPU thread takes ~0.07 µs a step (measured on
// an H100: one iteration of a bisection folded 2·10^6 elements in 143 ms), so its budget is
// 2^15, ~2 ms.
inline constexpr int64_t kFoldBudget = int64_t{1} << 20;
/// A fold of more steps than any sequence can hold elements (exec/host/vec.h's kMaxElements)
/// fails "Out of memory.", as storing its sequence would: a map kernel has no budget, and would
/// otherwise fold [0:2^62] for years.
inline constexpr int64_t kMostFoldSteps = int64_t{1} << 56;
inline constexpr int64_t kFoldBudgetGpu = int64_t{1} << 15;

// Note [Map kernels]
// An apply-to-each whose body folds what flattening would have to store first, `{sum({f(x, y)
// : x in xs}) : y in ys}` (all pairs: n^2 stored elements) or a matrix product (n^3), is a
// MapKernel statement when its body compiles as a loop kernel's does (flatten/loop_kernels.h
// map_kernel): the same nodes without a loop, each fold an inner loop of the instance. Its
// inputs are the flat scalar leaves of the generators' elements and of the body's free
// variables, in order, and the ids of the free sequences it reads, which come after the inputs
// as rows, as a loop kernel's do. Nothing is stored but the results, one per element.
// A fold that is only over the instance's own row (`{sum(row) : row in rows}`) is either form,
// chosen at run time: `b = if_nonempty(map_lanes(n, rows)) { map_kernel } else { flattened }`.
// The segmented primitives read each element once and balance rows of any length over the
// machine; a unit of a few lanes a row reads the same bytes with less bookkeeping where the rows
// are neither very short nor very long (Note [Map kernel dispatch] in exec/cuda/map_lanes.h).
// A body with a filter or without a fold stays flattened.
// The statement's `level` is the unit an instance runs on (extensions.md §2, `at LEVEL`): on
// cuda 1 to 256 threads, whose lanes share the instance's outermost folds (Lanes in
// codegen/kernel_ir.h; Note [Map kernel dispatch] in exec/cuda/map_lanes.h); on the host one
// core. A pinned level (`thread`, `subwarp(N)`, `warp`, `block`) makes a map kernel of a fold
// over the instance's own row too. `grid` is the flattened form. Where a pinned level cannot be
// honoured (the body recurses, filters or gives a sequence; `seq` outside a unit) the
// vectoriser adds a warning with the apply-to-each's location to Program::warnings, and the
// compiler chooses. The answers never depend on the level or the form, but for the rounding
// of float sums and products, which differ in order (extensions.md §4 allows it): fixed for
// one machine, tuning file and input (docs/cuda.md, Determinism).
// A map kernel has no budget: its instances are the elements of an apply-to-each, whose work
// the program asked for, and the flattened alternative would store more than the kernel folds.
// A fold of more than kMostFoldSteps fails "Out of memory." instead, as storing it would.

// Note [Multiprefix loops]
// A loop kernel's instance runs its iterations one after another (Note [Loop kernels]). Where
// the only thing an iteration passes to the next, besides its counter, is counts added into
// sequences of the state, or elements written at its own index, the iterations of an instance
// can run 32 at a time, a warp an instance, with the same answers. Such a loop
// (flatten/multiprefix_loops.cpp) writes some sequence of its state (one that writes none is a
// search or a scalar recurrence, of few iterations as often as not) and has
//   * one counter: a state input whose next value is itself + 1; every other state input is
//     passed on unchanged; no folds and no appended sequences;
//   * written sequences of two roles. A *histogram* `h` (one int component) is read once and
//     written once an iteration, at one index k: `h[k] := h[k] + c` (`rep(counts, counts[d] +
//     1, d)`), where k, c and the write's guard read no state. An *own-slot* sequence is only
//     written, at the counter's index (`rep(places, x, i)`), each component once, never read;
//   * an end test (loop_done), every histogram's index, addend and guard computed from the
//     counter, the invariants and the sequences the loop only reads: the nodes that read no
//     histogram, `pure`.
// Then an iteration i sees h[k] = h0[k] + the addends of the iterations before i with the same
// index: a multiprefix (Blelloch's name for a prefix sum within each key), which a warp computes
// for 32 consecutive iterations at once, each lane one (codegen's emit_multiprefix_loop): the
// lanes with one index find each other (match.any), each adds the addends of those below it,
// and the highest one that goes on stores h[k]'s new value. A histogram that nothing reads but
// its own update needs no prefix: each lane adds its addend atomically (Note [Counted
// histograms] in codegen/kernel_ir.cpp). Iterations stop at the first that
// is done or fails, as one after another would: that lane's failure record is the instance's,
// and the lanes after it change nothing. Integer sums in any order are the same, so the answers
// are exactly the loop's; a float addend is no histogram.
// `order` evaluates the pure nodes first (in node order), then the rest, so that every addend
// is known when its histogram is read; a failure is still the first failing node of its
// iteration in node order (the record is chosen over all of them after evaluation).
struct MultiprefixLoop {
  uint32_t counter = 0;         // the state input that counts the iterations
  std::vector<uint32_t> order;  // every node, in the order a lane evaluates them
  size_t pure_count = 0;        // the pure nodes, first in `order`
  struct Histogram {
    uint32_t seq;     // index into KernelBody::seqs
    uint32_t read;    // its SeqElt node, h[k]
    uint32_t write;   // its SeqWrite node, h[k] := h[k] + c
    uint32_t addend;  // c
  };
  std::vector<Histogram> histograms;
  /// The histogram of sequence q, or null: an own-slot sequence or one the loop only reads.
  const Histogram* histogram_of(uint32_t q) const {
    for (const Histogram& h : histograms)
      if (h.seq == q) return &h;
    return nullptr;
  }
};

struct KernelBody {
  std::vector<const lang::Type*> inputs;  // element type of each input
  std::vector<KernelNode> nodes;          // in evaluation order
  std::vector<uint32_t> outputs;          // node of each output
  bool loop = false;                      // Note [Loop kernels]
  uint32_t loop_done = 0;                 // loop: the bool node that ends an instance's loop
  std::vector<uint32_t> loop_next;        // loop: the node of each state input's next value
  /// A sequence a loop reads (Note [Sequences in loop kernels]), and may write.
  struct Seq {
    std::vector<const lang::Type*> components;  // the flat components of its elements
    bool written = false;                       // loop state changed by rep
    bool appended = false;                      // loop state changed by ++ (Note [Appended ...])
  };
  std::vector<Seq> seqs;
  /// loop: the written or appended sequence of each sequence output (after the scalar outputs).
  std::vector<uint32_t> seq_outputs;
  /// Among the pointers the sequences take after the inputs (per sequence, its rows' offsets
  /// and one per component; an appended one then its slots: Note [Appended sequences in loop
  /// kernels]), the first of sequence q; seq_pointer(seqs.size()) counts them.
  size_t seq_pointer(size_t q) const {
    size_t n = 0;
    for (size_t i = 0; i < q; ++i) n += 1 + seqs[i].components.size() + (seqs[i].appended ? 2 + seqs[i].components.size() : 0);
    return n;
  }
  size_t seq_pointers() const { return seq_pointer(seqs.size()); }
  /// A structural description (types by kind, prims, edges): equal keys, equal kernels.
  const std::string& key() const {
    return key_memo_.get([&] { return compute_key(); });
  }
  /// True when node `n` can fail (Note [Kernels that can fail]).
  bool node_can_fail(const KernelNode& n) const;
  /// True when SeqElt node `n` reads its row at the index of a fold over that same row's length
  /// (`{f(x) : x in row}` folded): an index in [0, length) by construction, never out of bounds.
  bool indexed_by_its_fold(const KernelNode& n) const;
  /// True for a body that runs one instance at a time, on its own thread or core: a loop, or
  /// a body that reads sequences or folds (Notes [Loop kernels] and [Map kernels]). Other
  /// bodies are elementwise, and run several instances a thread.
  bool instance_at_a_time() const { return loop || !seqs.empty() || folds(); }
  /// A sequence a GPU kernel may stage in its block's shared memory (Notes [Staged rows] in
  /// codegen/staged_rows.h and [Block rows] in codegen/block_rows.h), and the node of the row
  /// every node of the body reads it at.
  struct StagedSeq {
    uint32_t seq;
    uint32_t row;
  };
  /// In a loop, the sequences read or written at one row per instance that the loop never
  /// changes (an Instance node: its own; an input the loop passes on: a shared sequence's row),
  /// and not appended. Asked at every launch, so kept.
  const std::vector<StagedSeq>& staged_seqs() const {
    return staged_memo_.get([&] { return compute_staged_seqs(); });
  }
  /// The staged sequences of the loop run `lanes` threads an instance: all of staged_seqs() on
  /// one; on a warp's (a multiprefix loop), all but its own-slot sequences, whose writes are a
  /// chunk's 32 consecutive elements, one coalesced store in global memory, and which it never
  /// reads: staged, they were copied in and back for nothing (Note [Staged rows] in
  /// codegen/staged_rows.h). Asked at every launch, so kept.
  const std::vector<StagedSeq>& staged_seqs_on(int lanes) const {
    if (lanes == 1) return staged_seqs();
    return warp_staged_memo_.get([&] { return compute_warp_staged_seqs(); });
  }
  /// In a map kernel (no loop), the sequences each instance reads at one row only, its own (an
  /// Instance node) or one whose id is an int input, and whole: every read is the row's length
  /// or an element at the index of a fold over that length, and one element read at least; and
  /// only where the body also reads elements of another sequence (a gather: SpMV's x[c]). A
  /// GPU block's instances' rows, where they are consecutive, lie one after another, so a
  /// kernel on a few lanes an instance may copy them to shared memory first (Note [Block rows]
  /// in codegen/block_rows.h). Asked at every launch, so kept.
  const std::vector<StagedSeq>& block_rows() const {
    return block_rows_memo_.get([&] { return compute_block_rows(); });
  }
  /// The loop's multiprefix form (Note [Multiprefix loops]), or nothing. Asked at every launch,
  /// so kept.
  const std::optional<MultiprefixLoop>& multiprefix() const {
    return multiprefix_memo_.get([&] { return compute_multiprefix(); });
  }
  /// True when some node is a Fold (Note [Folds in kernels]).
  bool folds() const {
    return std::any_of(nodes.begin(), nodes.end(), [](const KernelNode& n) { return n.kind == KernelNode::Kind::Fold; });
  }
  /// The Fold node a map kernel may split over several blocks (Note [Rows over several blocks]
  /// in codegen/lanes.h): the body's one outer fold (outside every other fold's region), where
  /// it runs over a row of a sequence the kernel reads (its count a SeqLength node) and the body
  /// is not a loop; else nothing.
  std::optional<uint32_t> split_fold() const {
    if (loop) return std::nullopt;
    std::optional<uint32_t> outer;
    for (size_t j = 0; j < nodes.size(); ++j)
      if (nodes[j].kind == KernelNode::Kind::FoldIndex) {
        if (outer) return std::nullopt;  // a second outer fold
        outer = nodes[j].input;
        j = nodes[j].input;  // on after its Fold
      }
    if (!outer || nodes.at(nodes.at(*outer).args.at(0)).kind != KernelNode::Kind::SeqLength) return std::nullopt;
    return outer;
  }
  /// True when some node can fail: the kernel then takes a failure record.
  bool can_fail() const {
    return can_fail_memo_.get([&] { return compute_can_fail(); });
  }
  /// The element type of each output.
  std::vector<const lang::Type*> output_types() const {
    std::vector<const lang::Type*> types;
    for (uint32_t o : outputs) types.push_back(nodes[o].type);
    return types;
  }

 private:
  std::string compute_key() const;
  bool compute_can_fail() const;
  std::vector<StagedSeq> compute_staged_seqs() const;
  std::vector<StagedSeq> compute_warp_staged_seqs() const;
  std::vector<StagedSeq> compute_block_rows() const;
  std::optional<MultiprefixLoop> compute_multiprefix() const;
  BodyMemo<std::string> key_memo_;
  BodyMemo<std::vector<StagedSeq>> staged_memo_;
  BodyMemo<std::vector<StagedSeq>> warp_staged_memo_;
  BodyMemo<std::vector<StagedSeq>> block_rows_memo_;
  BodyMemo<std::optional<MultiprefixLoop>> multiprefix_memo_;
  BodyMemo<bool> can_fail_memo_;
};

// Note [Consumer kernels]
// A map is fused into the reduction or scan it feeds, and a filter's flags into the pack that
// uses them (flatten/passes/fuse_consumers): ReduceKernel, ScanKernel and PackKernel hold a
// kernel body with one output whose values are computed while the primitive consumes them and
// are never stored. Their kernel inputs are uses[1..] (`kernel_inputs`); uses[0] is the lengths
// cutting the computed values into segments (reduce, scan) or the values the flags select
// (pack, a flat scalar vector). They compute what the unfused Kernel/Prim, Nest and consumer
// compute, and cannot fail. At most kMaxConsumerInputs kernel inputs: the GPU passes them to
// its precompiled consumer kernels as one fixed-size parameter.
inline constexpr size_t kMaxConsumerInputs = 8;

// Note [Filter groups]
// A filter `{e in a | p(e)}` in a lifted context becomes two consumers of the predicate: the
// segment lengths of the result, `reduce_kernel sum(lens; ins) btoi(p)`, and the kept values,
// `pack_kernel(values; ins) p` (or `pack(values, flags)` when the flags are a variable). Each
// computes p on demand (Note [Consumer kernels]), and quicksort's three filters on one
// (e, pivot) pair compute three predicates six times, two of those passes for each pack. So
// flatten/passes/group_filters joins the consumers of one block whose predicates read the same
// input variables into one FilterGroup statement, at the place of the first of them:
//   1. its `kernel` computes every distinct predicate of the group into a byte per element
//      (one pass over the inputs; a predicate that is an input variable is used as it is);
//   2. each Count member is a segmented count of its predicate's flags, each Pack member packs
//      by them.
// The other members move up to the first. They cannot fail (Note [Consumer kernels]), so
// running them early changes no error; a statement joins the group only if its other operand
// (the lengths or the packed values) is defined before the group's first statement. Groups
// need two statements or more; a lone consumer stays as it is.
//
// The statement: uses[0, inputs) are the shared inputs (the kernel's, `kernel_inputs`), and
// member m defines outs[m] from its other operand uses[inputs + m]. The backends run it in
// exec/cpu/filter_groups.cpp and exec/cuda/filter_groups.cpp.
struct FilterGroup {
  enum class Kind : uint8_t { Count, Pack };
  struct Member {
    Kind kind;
    /// The flags it filters by: output `predicate` of the statement's kernel, or, when
    /// negative, the shared input -1 - predicate (a flags variable used as it is).
    int32_t predicate;
  };
  uint32_t inputs = 0;          // the number of shared inputs, uses[0, inputs)
  std::vector<Member> members;  // in statement order
  /// Pack members (indices into members) whose outputs the next recursion level reads as one
  /// vector, in this order: a children literal's children (Note [Children one after another]
  /// in flatten/passes/lay_out_results.h). A backend that writes several packs of one vector
  /// into one buffer puts these first, one after another, so that their concatenation is a
  /// view. Empty for most groups.
  std::vector<uint32_t> adjacent_packs;

  /// The flags member m filters by, from the kernel's outputs `flags` and the shared inputs'
  /// values `ins`. V is either backend's vector.
  template <class V>
  static const V& flags_of(const Member& m, const std::vector<V>& flags, const std::vector<V>& ins) {
    return m.predicate >= 0 ? flags[static_cast<size_t>(m.predicate)] : ins[static_cast<size_t>(-1 - m.predicate)];
  }
};

// Note [Append chains]
// Quicksort's result `sorted[0] ++ equal ++ sorted[1]` becomes, per recursion level,
//   p56 = elt(m, 0); p57 = p56 ++ equal; p59 = elt(m, 1); p60 = p57 ++ p59
// and each statement copies its elements: the level's data moves four times. When the
// intermediate values (here p56, p57, p59) are used nowhere else, flatten/passes/chain_appends
// replaces the statements by one AppendChain at the place of the last `++` (the root), which
// builds its result straight from the sources (whole sequences, or `elt(v, i)`: sequence i of
// each instance's nested sequence), one copy per element. Only elt can fail; the chain checks
// the elts' indices in the order of their statements and raises the first failure with its
// statement's span, and chains are formed only where the statements between the first one
// taken in and the root cannot fail, so the error reported is the one the statements in order
// would report. Chains are of sequences of flat scalars (Note [Flat IR semantics] "Values").
//
// The statement: each source names its operands by position in uses. The backends run it in
// exec/cpu/append_chains.cpp and exec/cuda/append_chains.cpp.
struct AppendChain {
  /// One part of each instance's result: sequence i of `uses[seqs]`, or, for an elt source
  /// (index >= 0), sequence `uses[index][i]` of the nested sequence `uses[seqs][i]`.
  struct Source {
    uint32_t seqs = 0;
    int32_t index = -1;  // elt: the operand holding each instance's chosen sequence
    lang::Span span;     // elt: the elt statement's span, where its error is reported
    bool is_elt() const { return index >= 0; }
  };
  std::vector<Source> sources;   // in result order
  std::vector<uint32_t> checks;  // the elt sources (indices into `sources`) in statement order
};

/// True for the statements that always evaluate a kernel body (Kernel and the consumer
/// kernels). A FilterGroup has one unless all its members filter by input variables.
inline bool has_kernel(Op op) {
  return op == Op::Kernel || op == Op::LoopKernel || op == Op::MapKernel || op == Op::ReduceKernel ||
         op == Op::ScanKernel || op == Op::PackKernel;
}

/// True for the kernel statements whose operands after the inputs are the rows of the
/// sequences the kernel reads (Notes [Sequences in loop kernels] and [Map kernels]).
inline bool reads_rows(Op op) { return op == Op::LoopKernel || op == Op::MapKernel; }

/// True for the consumer kernels (Note [Consumer kernels]).
inline bool is_consumer_kernel(Op op) {
  return op == Op::ReduceKernel || op == Op::ScanKernel || op == Op::PackKernel;
}

/// True for the statements that define the variables `outs` (several results) rather than dst.
inline bool defines_outs(Op op) {
  return op == Op::Kernel || op == Op::LoopKernel || op == Op::MapKernel || op == Op::FilterGroup;
}

/// The operands of `s` that feed its kernel's inputs (all of them for Kernel, uses[1..] for the
/// consumer kernels, the shared inputs of a FilterGroup).
inline std::vector<VarId> kernel_inputs(const Stmt& s) {
  if (reads_rows(s.op))  // the sequences' rows follow the inputs
    return std::vector<VarId>(s.uses.begin(), s.uses.begin() + std::min(s.kernel->inputs.size(), s.uses.size()));
  if (s.op == Op::FilterGroup)
    return std::vector<VarId>(s.uses.begin(), s.uses.begin() + std::min<size_t>(s.filters->inputs, s.uses.size()));
  return std::vector<VarId>(s.uses.begin() + (s.op == Op::Kernel ? 0 : 1), s.uses.end());
}

/// True for the types stored as one flat buffer (Note [Flat IR semantics] "Values"): the
/// scalars, streams and function values.
inline bool is_flat_scalar(const lang::Type* t) {
  return t->kind <= lang::TypeKind::Stream || t->kind == lang::TypeKind::Fn;
}

/// Appends the flat scalar components of a value of type `t` to `out`, in order (`t` itself
/// for int, float, bool, char, i32, f32; each half's for a pair); false for any other type.
inline bool flat_components(const lang::Type* t, std::vector<const lang::Type*>& out) {
  if (t->kind == lang::TypeKind::Pair) return flat_components(t->a, out) && flat_components(t->b, out);
  if (!t->is_scalar()) return false;
  out.push_back(t);
  return true;
}

struct Var {
  std::string hint;                  // source name or a role ("flags", "n")
  const lang::Type* type = nullptr;  // element type of a vector variable; nullptr for host
  bool is_host() const { return type == nullptr; }
};

/// A lifted function: `param` holds the n argument instances; `body.result` the n results.
struct Function {
  std::string name;                  // source name + instantiation, e.g. "qsort<int>"
  const lang::Type* arg_type = nullptr;
  const lang::Type* result_type = nullptr;
  VarId param = 0;
  /// The rand path hash of each instance (Note [rand] in lang/eval/rand.h); only in programs
  /// that draw random numbers (`has_path`), where every function carries it.
  bool has_path = false;
  VarId path = 0;
  /// The bases of its shared parameters (Note [Shared arguments]), bound by each call from its
  /// operands after the argument and the path.
  std::vector<VarId> shared_bases;
  std::vector<Var> vars;             // indexed by VarId
  Block body;
};

// Note [Shared arguments]
// A sequence that every instance of an apply-to-each reads (a table, a tree) is shared: the
// instances hold ids into one base vector instead of copies (vectorise.cpp's Shared). When such
// a sequence is passed to a function, the callee's instance takes that parameter shared too:
// the argument carries the ids (an int per instance) where the sequence was, and the base is an
// operand of the call after the argument (and the path), bound to the callee's `shared_bases`.
// Inside, reads are IndexShared as in the caller, and a recursion loop keeps the base for all
// its levels: a tree walk per body neither copies the tree per body nor per step. Passes keep
// the operands in step: merge_calls merges calls with equal bases only, recursion_to_loops takes
// a self-call whose bases are the function's own, inline_calls reads them for the callee's.

/// The index of the first base operand of a Call of `callee`.
inline size_t first_base_operand(const Function& callee) { return callee.has_path ? 2 : 1; }

/// A flat program: the lifted functions reachable from one top-level form, and its entry
/// function (`entry`, run in a context of one instance whose argument is the int 0).
struct Program {
  std::vector<Function> functions;
  FuncId entry = 0;
  /// `at LEVEL`s the flattener could not honour (Note [Map kernels]), for the driver to report.
  std::vector<lang::Diagnostic> warnings;
};

/// `--dump=flat`: one function after another, statements indented by block.
std::string print_program(const Program& p);

/// Checks the invariants above (every use defined before, in scope, with consistent host/vector
/// kinds; calls name existing functions). Returns the problems found (empty: valid).
std::vector<std::string> verify(const Program& p);

}  // namespace ndp::flatten
