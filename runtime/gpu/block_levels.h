// The levels of a laid-out recursion run inside one GPU block (Note [Levels in a block]): the
// program format, which the cuda backend writes (exec/cuda/block_levels_program.cpp), and the engine
// that runs it, written once for a team of threads: a CUDA block (device/block_levels.cu) or
// one host thread (the unit tests, which so check the engine's logic without a GPU).
//
// Note [Levels in a block]
// A flattened recursion makes each level a grid-wide step: quicksort's 2^24 keys take some
// sixty levels of some sixty launches and several read-backs each, and once its segments are
// small, every level is nearly all overhead. Issue 24's hybrid mode: once a level is small
// (see "When" below), its instances that fit a block (an argument of at most half a block's
// capacity) leave the loop for one kernel that runs all their levels left, each block the
// instances whose argument starts in its window of the elements, the level's vectors in the
// block's shared memory. The block steps through the descent's
// statements itself (this engine: each statement a block-wide pass between barriers), places
// each finished instance's result and each piece of a recursing one where the layout says
// (Note [Results laid out before the calls] in flatten/flat_ir.h), and goes on to the next level
// with the children as its argument, until no instance recurses.
// The statements are interpreted, not compiled: the descent's vectors are small, every thread
// of the block runs the same statement, and a statement costs a pass over shared memory and a
// barrier or two. Compiling the program in was measured (session 37: the engine's bitcode
// specialised by LLVM to a constant program): 1.55 times fewer instructions, but 0.52 against
// 0.61-0.64 ms a launch of a 2^22 quicksort's hand-off, and the sort within noise, for a second
// or two of compiling; a block waits on its barriers and scans, not on the interpreting.
// Every vector is a column of 64-bit words (ints, floats' bits, bools and chars as 0/1 and
// codes): the translator gives each variable its slots of `cap` words, reusing a slot once
// nothing reads it any more.
//
// When: interpreted, a statement costs a block far more than its compiled kernel costs the
// grid (under Nsight Compute a launch of ~1000 blocks of ~500 elements takes 1.5-1.9 ms; the
// warps issue an instruction every 14 cycles), so the blocks lose where the levels hold many
// elements: handing off every level whose instances fit made quicksort of 10^6 ints 29.5 ms
// against 20.5 ms (H200, bench/results/session33). What they save is the levels' fixed cost, a
// few dozen launches and waits a level, which is all a level of few elements costs: the long
// tail of quicksort's levels. So a level hands off only once it holds at most
// Tuning::block_levels_elements elements (2^18 by default; `ndp autotune` measured it on the
// present GPU until quicksort became a partition loop): then 15.1-15.5 against 20.3-21.5 ms for
// 10^6, 55.1-55.3 against 63.3-66.2 ms for 2^24, in the same calls (before the places stayed on
// the device). Where only some instances fit, they leave (a pack) once at least a quarter of the
// level's elements can, the rest go on level by level; the blocks write their results at the
// places the executor keeps on the device (Note [Results laid out on the GPU] in
// exec/cuda/laid_out_levels.h).
//
// Anything a block cannot do (a vector past its capacity, a statement's error, a level whose
// lengths do not lay out) marks the run failed; the executor then goes on level by level from
// where it handed off, placing those instances' results again, and meets the error or the
// failed check as ever, so the answer never depends on this mode. Only laid-out loops (no
// effects) come here.
#pragma once

#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define NDP_BL_FN __device__ inline
#else
#define NDP_BL_FN inline
#endif

namespace ndp::runtime::gpu::block_levels {

/// A column's scalar: how its words are computed on and stored in the result.
enum Scalar : uint8_t { kInt, kFloat, kBool, kChar };
/// A variable's shape: a flat column; sequences of it (offsets, then elements); sequences of
/// sequences (outer offsets into the inner sequences).
enum Shape : uint8_t { kFlat, kSeq, kSeq2 };

struct Var {
  uint8_t shape = kFlat;
  uint8_t scalar = kInt;
  int16_t data = -1, off = -1, off2 = -1;  // slots: elements; (inner) offsets; outer offsets
};

/// A kernel node: an input, a constant, or a primitive of earlier nodes.
enum NodeKind : uint8_t { kNodeInput, kNodeConst, kNodePrim };
enum Prim : uint8_t {
  kAdd, kSub, kMul, kDiv, kRem, kNeg, kEq, kNe, kLt, kGt, kLe, kGe, kNot, kAnd, kOr, kXor, kSelect, kBtoi, kToFloat,
  kLshift, kRshift
};
struct Node {
  uint8_t kind = kNodeInput;
  uint8_t prim = kAdd;
  uint8_t scalar = kInt;      // the node's result
  uint8_t arg_scalar = kInt;  // its first argument's (comparisons and conversions read it)
  int16_t a = 0, b = 0, c = 0;  // kNodeInput: a is the input; kNodePrim: the argument nodes
  int64_t imm = 0;              // kNodeConst: the value's word
};

enum OpKind : uint8_t {
  kLen,          // dst flat ← the lengths of seq a (the outer ones of a seq2)
  kElements,     // dst ← the inner column of a (a view: dst has a's slots); sets its count
  kNest,         // dst seq ← offsets from the lengths a, elements b (a view of b's data)
  kKernel,       // outputs list[list_n/2 ..] ← nodes on inputs list[0 .. list_n/2) (list: inputs, then outputs)
  kCount,        // host dst ← the trues of flat a
  kLength,       // host dst ← the instances of a
  kConst,        // host dst ← imm
  kLit,          // dst flat ← imm, host a times
  kNothing,      // dst ← no instances
  kPack,         // dst ← the instances of a (flat or seq) whose flag in b is true
  kReplicate,    // dst flat ← a[i] repeated lengths b[i] times
  kElt,          // dst flat ← element b[i] of sequence i of a; fails out of bounds
  kSeqLit,       // dst (seq over flat inputs, seq2 over seqs) ← [list[0][i], ..., list[k-1][i]]
  kFilterGroup,  // nodes over inputs list[0..imm); then members: (kind, predicate, operand, out) × list_n
  kCopy,         // dst ← a, same shape
  kJumpIfZero,   // if host a == 0: pc ← imm
  kJump,         // pc ← imm
  kPlaceBase,    // the finished instances' results (flags a, base b, recursing host c) to their places; done if none recurse
  kPlaceChildren,  // the pieces (list: piece records) to their places, children counts a; next level's argument b
};
struct Op {
  uint8_t kind = kLen;
  uint8_t flag = 0;  // kPlaceBase: base_when
  int16_t dst = 0, a = 0, b = 0, c = 0;
  int32_t list = 0, list_n = 0;    // into Program::lists
  int32_t nodes = 0, nodes_n = 0;  // into Program::nodes
  int64_t imm = 0;
};
/// kFilterGroup members and kPlaceChildren pieces are records of four list entries.
enum MemberKind : int32_t { kMemberCount, kMemberPack };
enum PieceKind : int32_t { kPieceChild, kPieceRows };

constexpr int kMaxNodes = 48;  // a kernel's nodes (they live in a thread's registers or local memory)
constexpr int kMaxInputs = 8;  // a kernel's inputs

/// The program, with pointers to its arrays (device or host memory) and the reserved slots.
struct Program {
  const Op* ops = nullptr;
  const Node* nodes = nullptr;
  const int32_t* lists = nullptr;
  const Var* vars = nullptr;
  int32_t n_ops = 0, n_vars = 0, n_slots = 0;
  int32_t param = 0;                // the level's argument (a seq)
  int32_t at = 0, next_at = 0;      // slots: each instance's place in the result, the next level's
  int32_t rec_ids = 0;              // slot: the recursing instances, in order
  int32_t tmp0 = 0, tmp1 = 0, tmp2 = 0;  // slots for one statement's scratch
  uint8_t in_bytes = 8, out_bytes = 8;  // the argument's and the result's element size (1 or 8)
  int64_t cap = 0;                  // words a slot
};

/// The words of shared memory a block needs besides its slots: counts and host values.
NDP_BL_FN int64_t header_words(const Program& p) { return 2 * static_cast<int64_t>(p.n_vars) + 8; }

/// One block's run: the instances [first, last) of the level whose argument has offsets
/// `arg_off` and elements `arg` (in_bytes each), instance i's result to `out` at places[i]
/// (where null: at the argument's offsets).
/// `mem` holds header_words + n_slots · cap words. Returns false where the block could not run
/// them (Note [Levels in a block]); `out` then holds nothing that counts.
template <class Team>
struct Engine {
  const Program& p;
  Team& team;
  int64_t* counts;  // per variable: its instances
  int64_t* hosts;   // per variable: a host value
  int64_t* flags;   // [0]: the run failed; [1]: the level's recursing instances
  int64_t* slots;

  NDP_BL_FN Engine(const Program& prog, Team& t, int64_t* mem)
      : p(prog), team(t), counts(mem), hosts(mem + prog.n_vars), flags(mem + 2 * prog.n_vars), slots(mem + header_words(prog)) {}

  NDP_BL_FN int64_t* slot(int s) const { return slots + static_cast<int64_t>(s) * p.cap; }
  NDP_BL_FN const Var& var(int v) const { return p.vars[v]; }
  NDP_BL_FN int64_t* data(int v) const { return slot(var(v).data); }
  NDP_BL_FN int64_t* off(int v) const { return slot(var(v).off); }
  NDP_BL_FN int64_t* off2(int v) const { return slot(var(v).off2); }
  /// Marks the run failed (any thread); every thread sees it after the next barrier.
  NDP_BL_FN void fail() const { flags[0] = 1; }
  NDP_BL_FN bool failed() const { return flags[0] != 0; }
  /// A count of n words (n + 1 for offsets) fits a slot; else the run fails.
  NDP_BL_FN bool fits(int64_t n) const {
    if (n >= 0 && n < p.cap) return true;
    fail();
    return false;
  }
  NDP_BL_FN void set_host(int v, int64_t x) {
    if (team.rank() == 0) hosts[v] = x;
  }
  NDP_BL_FN void set_count(int v, int64_t n) {
    if (team.rank() == 0) counts[v] = n;
  }

  /// The last k in [0, n) with o[k] <= e: the segment holding element e (skipping empty ones).
  static NDP_BL_FN int64_t segment_of(const int64_t* o, int64_t n, int64_t e) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      if (o[mid] <= e) lo = mid; else hi = mid - 1;
    }
    return lo;
  }

  static NDP_BL_FN double as_float(int64_t w) {
#ifdef __CUDA_ARCH__
    return __longlong_as_double(w);
#else
    double d;
    std::memcpy(&d, &w, 8);
    return d;
#endif
  }
  static NDP_BL_FN int64_t of_float(double d) {
#ifdef __CUDA_ARCH__
    return __double_as_longlong(d);
#else
    int64_t w;
    std::memcpy(&w, &d, 8);
    return w;
#endif
  }

  /// Node prim on words x, y, z; false where it fails as the primitive would.
  static NDP_BL_FN bool apply(const Node& nd, int64_t x, int64_t y, int64_t z, int64_t& r) {
    const bool fl = nd.arg_scalar == kFloat;
    const double fx = as_float(x), fy = as_float(y);
    using U = uint64_t;
    switch (nd.prim) {
      case kAdd: r = fl ? of_float(fx + fy) : static_cast<int64_t>(U(x) + U(y)); return true;
      case kSub: r = fl ? of_float(fx - fy) : static_cast<int64_t>(U(x) - U(y)); return true;
      case kMul: r = fl ? of_float(fx * fy) : static_cast<int64_t>(U(x) * U(y)); return true;
      case kDiv:
        if (fl) { r = of_float(fx / fy); return true; }
        if (y == 0) return false;
        r = y == -1 ? static_cast<int64_t>(U{0} - U(x)) : x / y;
        return true;
      case kRem:
        if (y == 0) return false;
        r = y == -1 ? 0 : x % y;
        return true;
      case kNeg: r = fl ? of_float(-fx) : static_cast<int64_t>(U{0} - U(x)); return true;
      case kEq: r = fl ? fx == fy : x == y; return true;
      case kNe: r = fl ? fx != fy : x != y; return true;
      case kLt: r = fl ? fx < fy : x < y; return true;
      case kGt: r = fl ? fx > fy : x > y; return true;
      case kLe: r = fl ? fx <= fy : x <= y; return true;
      case kGe: r = fl ? fx >= fy : x >= y; return true;
      case kNot: r = nd.scalar == kBool ? !x : ~x; return true;
      case kAnd: r = x & y; return true;
      case kOr: r = x | y; return true;
      case kXor: r = x ^ y; return true;
      case kSelect: r = x ? y : z; return true;
      case kBtoi: r = x != 0; return true;
      case kToFloat: r = of_float(static_cast<double>(x)); return true;
      case kLshift:
        if (y < 0 || y >= 64) return false;
        r = static_cast<int64_t>(U(x) << y);
        return true;
      case kRshift:
        if (y < 0 || y >= 64) return false;
        r = x >> y;
        return true;
    }
    return false;
  }

  /// The op's kernel nodes at instance i, reading input k as in(k); node values to `v`.
  template <class In>
  NDP_BL_FN bool eval(const Op& op, int64_t i, In in, int64_t* v) const {
    for (int k = 0; k < op.nodes_n; ++k) {
      const Node& nd = p.nodes[op.nodes + k];
      switch (nd.kind) {
        case kNodeInput: v[k] = in(nd.a, i); break;
        case kNodeConst: v[k] = nd.imm; break;
        default:
          if (!apply(nd, v[nd.a], v[nd.b], v[nd.c], v[k])) return false;
      }
    }
    return true;
  }

  /// Loads the block's instances and runs every level; false where it failed.
  NDP_BL_FN bool run(const int64_t* arg_off, int64_t first, int64_t last, const void* arg, void* out, const int64_t* places) {
    out_ = out;
    if (team.rank() == 0) flags[0] = 0;
    team.sync();
    const int64_t n = last - first, base = arg_off[first], total = arg_off[last] - base;
    if (!fits(n) || !fits(total)) return false;
    int64_t* po = off(p.param);
    int64_t* pd = data(p.param);
    int64_t* at = slot(p.at);
    team.each(n + 1, [&](int64_t i) { po[i] = arg_off[first + i] - base; });
    team.each(n, [&](int64_t i) { at[i] = places ? places[first + i] : arg_off[first + i]; });
    team.each(total, [&](int64_t i) { pd[i] = p.in_bytes == 1 ? static_cast<const uint8_t*>(arg)[base + i] : static_cast<const int64_t*>(arg)[base + i]; });
    set_count(p.param, n);
    team.sync();
    for (int pc = 0; pc < p.n_ops;) {
      const Op& op = p.ops[pc];
      int next = pc + 1;
      bool done = false;
      step(op, next, done);
      team.sync();
      if (failed()) return false;
      if (done) return true;
      pc = next;
    }
    return false;  // (the program ends at its kPlaceBase)
  }

  NDP_BL_FN void store(void* dst, int64_t i, int64_t w) const {
    if (p.out_bytes == 1) static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(w);
    else static_cast<int64_t*>(dst)[i] = w;
  }
  NDP_BL_FN int64_t length(const int64_t* o, int64_t i) const { return o[i + 1] - o[i]; }

  /// One statement (every thread); `next` may jump; `done` once no instance recurses.
  NDP_BL_FN void step(const Op& op, int& next, bool& done);
  NDP_BL_FN void kernel(const Op& op);
  NDP_BL_FN void pack(const Op& op);
  NDP_BL_FN void seq_lit(const Op& op);
  NDP_BL_FN void filter_group(const Op& op);
  NDP_BL_FN void place_base(const Op& op, bool& done);
  NDP_BL_FN void place_children(const Op& op);
  void* out_ = nullptr;
};

}  // namespace ndp::runtime::gpu::block_levels

#include "runtime/gpu/block_levels_engine.h"
