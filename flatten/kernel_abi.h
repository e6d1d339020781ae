// The contract between the code generators (codegen/) and the executors that run what they
// generate (exec/): the calling convention of compiled elementwise kernels (Note [Fused
// kernels] in flatten/flat_ir.h), the shapes of the GPU kernels' launches, and the stable keys
// that name kernels in caches. Both sides include this header and nothing of each other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "flatten/flat_ir.h"

namespace ndp::flatten {

/// Computes instances [begin, end) of a kernel: ins[j] and outs[k] point at element 0 of input
/// j and output k, stored as Note [Vec representation] says (bool: one byte 0/1, char: uint8,
/// int: int64, i32: int32, float: double, f32: float). A kernel that can fail (Note [Kernels
/// that can fail] in flat_ir.h) takes one more pointer after its outputs: its failure record.
/// A kernel compiled with strided inputs (a mask of input numbers, HostKernelCompiler::compile)
/// reads each such input j at (i / c)·stride + offset + i % c: after the inputs and the
/// sequences' pointers, `ins` holds three int64 numbers c, stride, offset for every strided
/// input, in input order (Note [Generated buffers] in exec/host/vec.h: a view of regular rows).
using HostKernelFn = void (*)(int64_t begin, int64_t end, const void* const* ins, void* const* outs);

/// How a GPU kernel gets the rows of its sequences, bit q for sequence q (part of its key):
/// `regular`, every row has one length, passed in place of the offsets (Note [Regular rows in
/// kernels] in codegen/kernel_ptx.cpp); `zeroed`, a staged sequence the loop writes starts as
/// zeros, which the kernel writes itself rather than reading a filled copy (Note [Zeroed rows]
/// in codegen/staged_rows.h); `sourced`, a staged sequence the loop writes starts as the rows of
/// a source array per component, which the kernel copies itself rather than reading a copy the
/// host made (Note [Sourced rows] there): their pointers follow the outputs and the failure
/// record, one per component, sequence after sequence.
struct RowForms {
  uint64_t regular = 0;
  uint64_t zeroed = 0;
  uint64_t sourced = 0;
  bool operator==(const RowForms&) const = default;
};

/// The failure record of a kernel that can fail: a uint64 that starts as kNoKernelFailure and
/// that the kernel lowers (an atomic unsigned min) to kernel_failure_record(node, instance) of
/// each failing node and instance, so that it ends as the lowest node's lowest instance. The
/// GPU kernels (ndp_kernel(n, ins..., outs..., record)) take the same word.
inline constexpr uint64_t kNoKernelFailure = ~uint64_t{0};

/// The failure records the cuda backend reads later, in one array of this many words, each
/// kNoKernelFailure until its kernel fails (Note [Deferred failure records] in
/// exec/cuda/gpu.h). A loop kernel that does not fold takes the array and the number of records
/// taken before its launch (an int64) as its last parameters, and runs no instance where one of
/// those is set: a kernel that failed before it may have computed its bounds, and such a loop
/// has no budget to stop it (watches_failures). Its own record, if deferred, is not among them.
inline constexpr int kDeferredRecordWords = 32;
inline bool watches_failures(bool loop, bool folds) { return loop && !folds; }
inline constexpr int kFailureInstanceBits = 40;
inline constexpr uint64_t kernel_failure_record(uint64_t node, uint64_t instance) {
  return node << kFailureInstanceBits | instance;
}
inline constexpr uint32_t failed_node(uint64_t record) { return static_cast<uint32_t>(record >> kFailureInstanceBits); }
inline constexpr int64_t failed_instance(uint64_t record) {
  return static_cast<int64_t>(record & ((uint64_t{1} << kFailureInstanceBits) - 1));
}

/// Thrown by an executor whose loop kernel gave up: Note [Loops that give up] in flat_ir.h.
/// The record of an instance that gave up names node `node_count`, past the body's last.
struct LoopGaveUp {};
inline constexpr bool gave_up(uint64_t record, size_t node_count) {
  return record != kNoKernelFailure && failed_node(record) == node_count;
}

/// Calls a kernel that a KernelCompiler made. Every call goes through here because JIT-compiled
/// code has none of the type signature that UBSan's -fsanitize=function check reads before an
/// indirect call's target (the sanitizer build, tools/sanitize.sh): not inlined, so the
/// exemption stays on this one call.
#if defined(__clang__)
[[clang::no_sanitize("function")]]
#endif
[[gnu::noinline]] inline void call_host_kernel(HostKernelFn fn, int64_t begin, int64_t end, const void* const* ins,
                                               void* const* outs) {
  fn(begin, end, ins, outs);
}

/// A hash of a kernel key that is the same in every build and process (FNV-1a; std::hash is
/// not), naming the kernel's files in caches and checks.
inline uint64_t stable_hash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  return h;
}

/// stable_hash as 16 hex digits.
inline std::string stable_hash_hex(std::string_view key) {
  static const char* digits = "0123456789abcdef";
  uint64_t h = stable_hash(key);
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) s[static_cast<size_t>(i)] = digits[h & 15];
  return s;
}

/// Instances each thread of a PTX kernel computes.
inline constexpr int kPtxInstancesPerThread = 4;

/// The same for a kernel body that is a loop or not (Note [Loop kernels] in flat_ir.h): a
/// loop's instances run for as long as each needs, so a thread takes one and the GPU keeps
/// as many of them in flight as it can.
inline constexpr int ptx_instances_per_thread(bool loop) { return loop ? 1 : kPtxInstancesPerThread; }

/// An input read through positions (Note [Fused gathers] in exec/cuda/kernels.h): the
/// body's input number `input`, with positions that are int64, or i32 where `narrow` (i32
/// indices widened by i64(), read as they are stored: 4 bytes a position instead of 8, Note
/// [Narrow gather positions] in exec/cuda/device_vec.h).
/// A `broadcast` input is read at position 0 by every instance (a value replicated over all of
/// them: Note [Broadcast inputs] in exec/cuda/kernels.h), with no positions.
struct GatheredInput {
  uint32_t input = 0;
  bool narrow = false;
  bool broadcast = false;
  /// Read at (i / c)·stride + (i % c)·inner + offset, from four int64 parameters in place of
  /// the positions (Note [Regular elt views] in exec/cuda/device_vec.h).
  bool affine = false;
  /// Instance i's value is i: a lifted function's instance ids, never stored (Note [Iota
  /// inputs] in exec/cuda/kernels.h); no memory and no positions.
  bool iota = false;
  /// Read at the segment holding i, the value of an instance spread over its segment (Note
  /// [Spread inputs] in exec/cuda/kernels.h), from three int64 parameters in place of the
  /// positions: the segments' offsets' address, their count and their one length c (c > 0: the
  /// segment is i / c; else the last offset at most i, searched for).
  bool spread = false;
  /// A spread input over the segments of an earlier one, gathered[segments_of - 1], takes no
  /// parameters of its own: its segment is that one's, searched for once (0: its own).
  uint32_t segments_of = 0;
  /// Read at P = (i / c)·stride + offset + i % c (as `affine`, inner 1) of two sources laid in blocks
  /// of b elements in turn: block P / b of source (P / b) mod 2, at (P / 2b)·b + P mod b (Note
  /// [Interleaved blocks] in exec/cuda/kernels.h). The first source is the input's pointer; five
  /// int64 parameters in place of the positions: c, stride, offset, b and the second source's
  /// address.
  bool interleaved = false;
  /// With `spread`: the input is the element's place in its segment (i minus the segment's
  /// first element: a lifted index(#s), Note [Spread inputs]), computed, not loaded.
  bool rank = false;
  /// With `affine` or `interleaved`: c (and b) are powers of two, so the kernel shifts and
  /// masks instead of dividing (rows of 2^k elements: Batcher's levels).
  bool pow2 = false;
};

/// The int64 parameters (or pointer) in place of a gathered input's positions in a map kernel
/// (codegen/kernel_ptx.cpp compile_ptx): none for a broadcast, an iota or a spread over an
/// earlier input's segments; three for a spread; four for an affine view; five for interleaved
/// blocks; else the positions' pointer.
inline int position_params(const GatheredInput& g) {
  if (g.broadcast || g.iota || g.segments_of > 0) return 0;
  if (g.interleaved) return 5;
  if (g.affine) return 4;
  return g.spread ? 3 : 1;
}

/// A key suffix naming `gathered`, for the caches of kernels compiled with it (empty when none).
inline std::string gathered_key(std::span<const GatheredInput> gathered) {
  std::string key;
  for (const GatheredInput& g : gathered) {
    key += "|gather " + std::to_string(g.input);
    if (g.broadcast) key += " broadcast";
    else if (g.affine) key += g.pow2 ? " affine2" : " affine";
    else if (g.interleaved) key += g.pow2 ? " interleaved2" : " interleaved";
    else if (g.iota) key += " iota";
    else if (g.spread) key += (g.rank ? " rank" : " spread") + (g.segments_of ? "@" + std::to_string(g.segments_of - 1) : "");
    else if (g.narrow) key += " i32";
  }
  return key;
}

/// A key naming the kernel of regular levels `plan` (Notes [Regular levels] and [Regular ascents]
/// in flat_ir.h), one level or the levels in blocks, for the caches of compiled kernels.
inline std::string regular_levels_key(const RegularLevels& plan, bool in_block) {
  std::string key = in_block ? "regular levels in blocks" : "regular level";
  const RegularLevels& maps = plan.callee ? *plan.callee : plan;
  if (plan.callee) {
    key += " ascent of pieces";
    for (const RegularLevels::Piece& p : plan.pieces) key += " " + std::to_string(p.child) + (p.reversed ? "r" : "");
  }
  key += " parts";
  for (uint32_t p : maps.input_parts) key += " " + std::to_string(p);
  key += " children";
  for (uint32_t o : maps.child_outputs) key += " " + std::to_string(o);
  return key + "|" + maps.map->key();
}

/// A key naming the kernels of partition levels `plan` (Note [Partition levels] in flat_ir.h)
/// over elements of `elem`, for the caches of compiled kernels.
inline std::string partition_levels_key(const PartitionLevels& plan, const lang::Type* elem) {
  std::string key = std::string("partition levels of ") + (elem->kind == lang::TypeKind::Float ? "floats" : "ints") +
                    " recurse s" + std::to_string(plan.recurse) + " scalars";
  for (const PartitionLevels::Scalar& s : plan.scalars) {
    key += " (" + std::to_string(static_cast<int>(s.kind)) + " " + lang::base_type_name(s.type->kind) + " " + std::to_string(s.value) +
           " " + std::to_string(s.output);
    for (uint32_t a : s.args) key += " s" + std::to_string(a);
    if (s.kernel) key += " |" + s.kernel->key() + "|";
    key += ")";
  }
  key += " reads";
  for (uint32_t q : plan.predicate_scalars) key += " s" + std::to_string(q);
  key += " parts";
  for (const PartitionLevels::Part& p : plan.parts) key += (p.child ? " c" : " r") + std::to_string(p.output);
  return key + "|" + plan.predicates->key();
}

/// How a GPU map kernel's instances take its threads (codegen/kernel_ptx.h compile_ptx):
/// `Instances`, each its lanes; `Tiled`, a block a square of a grid of instances (Note [Tiled
/// folds] in flatten/tiled_folds.h); `SplitRows`, each instance over several blocks of 256 lanes
/// that share its one outer fold (Note [Rows over several blocks] in codegen/lanes.h).
enum class KernelForm : uint8_t { Instances, Tiled, SplitRows };

/// The threads of each block of a SplitRows launch: the `block` level's.
inline constexpr int kSplitLanes = 256;

/// The most lanes an instance at which an `Instances` kernel copies its block's own rows to
/// shared memory first (Note [Block rows] in codegen/block_rows.h): from a warp on, a step's
/// loads take whole sectors already.
inline constexpr int kMostBlockRowLanes = 16;

/// The block rows (KernelBody::block_rows) that a kernel of `form` on `lanes` compiled with
/// `gathered` copies to shared memory (Note [Block rows] in codegen/block_rows.h): none but in
/// an `Instances` kernel on at most kMostBlockRowLanes lanes, and not those whose row id is a
/// broadcast or spread input, which every instance (of a segment) reads at one row, so that a
/// block's ids are not consecutive. The kernel's code and its launch both ask.
inline std::vector<KernelBody::StagedSeq> copied_block_rows(const KernelBody& k, std::span<const GatheredInput> gathered,
                                                            KernelForm form, int lanes) {
  std::vector<KernelBody::StagedSeq> rows;
  if (form != KernelForm::Instances || lanes > kMostBlockRowLanes) return rows;
  for (const KernelBody::StagedSeq& s : k.block_rows()) {
    const KernelNode& row = k.nodes[s.row];
    const bool broadcast = row.kind == KernelNode::Kind::Input &&
                           std::any_of(gathered.begin(), gathered.end(),
                                       [&](const GatheredInput& g) { return g.input == row.input && (g.broadcast || g.spread); });
    if (!broadcast) rows.push_back(s);
  }
  return rows;
}

/// The blocks of a SplitRows launch, at most: the length of the scratch arrays its blocks
/// combine their values through (exec/cuda/gpu.h split_scratch).
inline constexpr int64_t kMostSplitBlocks = int64_t{1} << 16;

/// The consumer kernels' batch of elements (runtime/gpu/device/fused.cu): 64 bytes, holding
/// element_items(bytes) values of `bytes` bytes each as an array (the items a thread of a
/// scan or reduction pass holds: 8 of 8 bytes, 16 of 4 bytes, 16 of one byte).
inline constexpr unsigned kElementWords = 8;
inline constexpr int element_items(int bytes) { return bytes >= 4 ? 64 / bytes : 16; }

}  // namespace ndp::flatten
