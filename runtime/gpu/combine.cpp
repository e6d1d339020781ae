// *_combine: a stable radix sort of the positions by target, then a segmented reduction of the
// bins (device/combine.cu, Note [GPU combine]).
#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace {

/// The operators each element type admits (runtime/cpu/ops.h, supports()).
bool supported(ndp_op op, ndp_elem_type t) {
  bool number = t == NDP_I64 || t == NDP_F64 || t == NDP_I32 || t == NDP_F32;
  switch (op) {
    case NDP_OP_PLUS:
    case NDP_OP_MULT: return number;
    case NDP_OP_MAX:
    case NDP_OP_MIN: return number || t == NDP_CHAR;
    case NDP_OP_AND:
    case NDP_OP_OR:
    case NDP_OP_XOR: return t == NDP_I64 || t == NDP_I32 || t == NDP_BOOL;
  }
  return false;
}

}  // namespace

Result<ndp_status> Primitives::combine(ndp_op op, ndp_elem_type t, CUdeviceptr dest, int64_t ndest, CUdeviceptr idx,
                                       CUdeviceptr vals, int64_t n, CUdeviceptr out) {
  if (!supported(op, t)) return ndp_status{NDP_UNSUPPORTED, -1, -1, -1};
  const size_t dest_bytes = static_cast<size_t>(ndest) * elem_bytes(t);
  if (n == 0) {
    if (dest != out)
      if (Status st = pool().copy(out, dest, dest_bytes); !st.ok()) return st;
    return data_ok();
  }

  // Check the indices while making the sort's keys, then read the outcome (synchronises).
  const int digits = ndest > 1 ? key_bytes_for(static_cast<uint64_t>(ndest - 1)) : 0;
  const int kb = digits > 4 ? 8 : 4;
  const size_t un = static_cast<size_t>(n);
  Result<cuda::DeviceBuffer> keys = pool().allocate(2 * static_cast<size_t>(kb) * un);
  if (!keys.ok()) return keys.status();
  Result<cuda::DeviceBuffer> from = pool().allocate(2 * sizeof(int64_t) * un);
  if (!from.ok()) return from.status();
  Result<StatusRecord> record = StatusRecord::make(*this);
  if (!record.ok()) return record.status();
  CUdeviceptr slot = record->slots();
  CUdeviceptr k[2] = {keys->pointer(), keys->pointer() + static_cast<size_t>(kb) * un};
  CUdeviceptr f[2] = {from->pointer(), from->pointer() + sizeof(int64_t) * un};
  if (Status st = launch_named(*this, "ndp_combine_keys", n, idx, n, ndest, kb, k[0], f[0], slot); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_combine_record", 1, idx, ndest, slot, record->status()); !st.ok()) return st;
  Result<ndp_status> checked = record->read_status(*this);
  if (!checked.ok() || checked.value().code != NDP_OK) return checked;

  // Group the contributions to each target in ascending source order.
  int cur = 0;
  if (Status st = detail::radix_sort_pairs(*this, kb, k, f, n, (1u << digits) - 1, &cur); !st.ok()) return st;

  // Untouched targets keep dest; the others are written by the apply kernel.
  if (dest != out)
    if (Status st = pool().copy(out, dest, dest_bytes); !st.ok()) return st;
  const std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  // Float + and *: the exact left fold, bin by bin (combine_fold in device/combine.cu).
  if ((t == NDP_F64 || t == NDP_F32) && (op == NDP_OP_PLUS || op == NDP_OP_MULT)) {
    if (Status st = launch_named(*this, "ndp_combine_fold_" + suffix, n, k[cur], kb, f[cur], vals, n, dest, out); !st.ok())
      return st;
    return data_ok();
  }
  constexpr int64_t kTile = 256 * 8;  // kCombineTile in device/tile/combine.cuh
  constexpr size_t kPairBytes = 16;   // sizeof(BinPair<T>) is at most 16
  const int64_t tiles = (n + kTile - 1) / kTile;
  Result<cuda::DeviceBuffer> pairs = pool().allocate(2 * kPairBytes * static_cast<size_t>(tiles));
  if (!pairs.ok()) return pairs.status();
  CUdeviceptr aggregates = pairs->pointer(), carry = aggregates + kPairBytes * static_cast<size_t>(tiles);
  Result<cuda::Kernel> tile_k = kernel("ndp_combine_tiles_" + suffix);
  if (!tile_k.ok()) return tile_k.status();
  Result<cuda::Kernel> carry_k = kernel("ndp_combine_carry_" + suffix);
  if (!carry_k.ok()) return carry_k.status();
  Result<cuda::Kernel> apply_k = kernel("ndp_combine_apply_" + suffix);
  if (!apply_k.ok()) return apply_k.status();
  const cuda::LaunchConfig per_tile{static_cast<unsigned>(tiles), 256, 0};
  if (tiles > 1) {
    if (Status st = cuda::launch_with(device(), tile_k.value(), per_tile, k[cur], kb, f[cur], vals, n, aggregates);
        !st.ok())
      return st;
    if (Status st = cuda::launch_with(device(), carry_k.value(), cuda::LaunchConfig{1, 256, 0}, aggregates, tiles, carry);
        !st.ok())
      return st;
  }
  if (Status st = cuda::launch_with(device(), apply_k.value(), per_tile, k[cur], kb, f[cur], vals, n, carry, dest, out);
      !st.ok())
    return st;
  return data_ok();
}

}  // namespace ndp::runtime::gpu
