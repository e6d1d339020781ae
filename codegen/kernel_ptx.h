// PTX for sm_90 from Flat IR kernel bodies, through LLVM's NVPTX backend: the whole-vector
// kernels the cuda backend launches and the element functions its consumer programs call.
#pragma once

#include <span>
#include <string>

#include "flatten/flat_ir.h"
#include "flatten/kernel_abi.h"

namespace ndp::codegen {

using flatten::GatheredInput;

/// Whether this build embeds libdevice, so that kernels calling math functions (exp, sin, ...)
/// compile for the GPU; without it compile_ptx throws for them.
bool has_libdevice();

/// PTX text (target nvptx64-nvidia-cuda, sm_90) of an entry `ndp_kernel(i64 n, ptr in_0, ...,
/// ptr out_0, ...)` where thread %tid.x of block %ctaid.x computes the instances
/// %ctaid.x·%ntid.x·U + %tid.x + u·%ntid.x for u < U, U = ptx_instances_per_thread(k.loop)
/// (those below n): launch ceil(n / U) threads.
/// Throws std::runtime_error when LLVM fails.
///
/// `gathered` lists inputs read through positions (Note [Fused gathers] in
/// exec/cuda/kernels.h): instance i reads element idx_g[i] of input gathered[g].input instead
/// of element i, where idx_g (int64, or i32 where narrow; in range) is passed after the body's
/// inputs, in order (before the outputs).
///
/// `lanes` > 1 (a power of two up to 1024, for a body that runs an instance at a time: Note
/// [Map kernels]): thread g = %ctaid.x·%ntid.x + %tid.x is lane g % lanes of instance g / lanes,
/// and the lanes spread the instance's outermost folds among them (Lanes in kernel_ir.h):
/// launch n·lanes threads in blocks of a multiple of lanes threads.
///
/// `form` Tiled (a body with a tiled fold, Note [Tiled folds] in flatten/tiled_folds.h): the
/// instances are a grid of n / m rows and m columns, m an i64 after the last pointer; a block
/// of 256 threads runs a 32 × 32 square of it, four instances a thread (launch ceil(n / m / 32)
/// · ceil(m / 32) blocks), reading the square's rows through shared memory (FoldTiles).
///
/// `form` SplitRows (lanes kSplitLanes, a body with one outer fold, not a loop: Note [Rows over
/// several blocks] in codegen/lanes.h): three more parameters after the last pointer, `partials`
/// (an i64 a block), `arrivals` (an i32 an instance, zero, left zero) and `parts` (an i64);
/// launch n · parts blocks of kSplitLanes threads, block c running part c % parts of instance
/// c / parts.
///
/// `rows.regular`: bit q set says that every row of sequence q (one the kernel reads or writes
/// in place, not one it appends to) has one length, passed as an i64 in place of the
/// sequence's offsets (Note [Regular rows in kernels]). `rows.zeroed`: bit q set says that the
/// loop's written sequence q, one of KernelBody::staged_seqs() (where staged_seqs_on(lanes)
/// has any), starts as zeros, which the kernel writes into its rows itself: their elements'
/// contents on entry do not matter (Note [Zeroed rows] in codegen/staged_rows.h).
std::string compile_ptx(const flatten::KernelBody& k, std::span<const GatheredInput> gathered = {}, int lanes = 1,
                        flatten::KernelForm form = flatten::KernelForm::Instances, flatten::RowForms rows = {});

/// PTX text (sm_90) of the device function `ndp_elements(i64 first, i64 stride, i32 count, ptr
/// ins) -> {[8 x i64]}` that the consumer kernels call: output 0 of `k` (its only output) for
/// the instances first + j·stride, j < count (at most element_items), reading input q at
/// ins[q][i]; the values as an array of their storage type in the 64 result bytes (bool: 0/1).
/// One call computes a thread's whole share of a tile, so its loads are in flight together.
/// `gathered` as compile_ptx's, with positions that may be out of range: for gathered input
/// g (ng of them), the position array is ins[#inputs + g] and its bound (an integer, above 0)
/// ins[#inputs + ng + g]; a position outside [0, bound) reads element 0 instead and sets the
/// 8-byte word g of the flags array ins[#inputs + 2·ng] to 1, which the caller reads after the
/// kernel (Note [Checked gathers] in exec/cuda/device_vec.h).
std::string compile_element_ptx(const flatten::KernelBody& k, std::span<const GatheredInput> gathered = {});


}  // namespace ndp::codegen
