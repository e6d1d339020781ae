// *_combine: a stable radix sort of the positions by target, then a segmented reduction of the
// bins (device/combine.cu, Note [GPU combine]).
#include "runtime/gpu/launch.h"

namespace ndp::rt::gpu {

namespace detail {
// Defined in rank_sort.cpp: the stable LSD radix sort of (key, int64 payload) pairs.
Status radix_sort_pairs(Primitives& p, int key_bytes, const CUdeviceptr keys[2], const CUdeviceptr payload[2], int64_t n,
                        unsigned byte_mask, int* which);
}  // namespace detail

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

int key_bytes_for(uint64_t max_key) {
  int bytes = 0;
  for (; max_key != 0; max_key >>= 8) ++bytes;
  return bytes;
}

}  // namespace

Result<ndp_status> Primitives::combine(ndp_op op, ndp_elem_type t, CUdeviceptr dest, int64_t ndest, CUdeviceptr idx,
                                       CUdeviceptr vals, int64_t n, CUdeviceptr out) {
  if (!supported(op, t)) return ndp_status{NDP_UNSUPPORTED, -1, -1, -1};
  const int bytes = elem_bytes(t);
  const std::string copy = "ndp_combine_copy_" + std::to_string(bytes);
  if (n == 0) {
    if (dest != out)
      if (Status st = launch_named(*this, copy, ndest, dest, ndest, out); !st.ok()) return st;
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
  Result<cuda::DeviceBuffer> record = pool().allocate(5 * sizeof(int64_t));  // [0, 4) status, [4] failure slot
  if (!record.ok()) return record.status();
  CUdeviceptr rec = record->pointer(), slot = rec + 4 * sizeof(int64_t);
  CUdeviceptr k[2] = {keys->pointer(), keys->pointer() + static_cast<size_t>(kb) * un};
  CUdeviceptr f[2] = {from->pointer(), from->pointer() + sizeof(int64_t) * un};
  if (Status st = fill(slot, 1, 8, ~uint64_t{0}); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_combine_keys", n, idx, n, ndest, kb, k[0], f[0], slot); !st.ok()) return st;
  if (Status st = launch_named(*this, "ndp_combine_record", 1, idx, ndest, slot, rec); !st.ok()) return st;
  int64_t h[4];
  if (Status st = pool().copy_to_host(h, record.value(), sizeof h); !st.ok()) return st;
  if (h[0] != NDP_OK) return ndp_status{static_cast<ndp_status_code>(h[0]), h[1], h[2], h[3]};

  // Group the contributions to each target in ascending source order.
  int cur = 0;
  if (Status st = detail::radix_sort_pairs(*this, kb, k, f, n, (1u << digits) - 1, &cur); !st.ok()) return st;

  // Untouched targets keep dest; the others are written by the apply kernel.
  if (dest != out)
    if (Status st = launch_named(*this, copy, ndest, dest, ndest, out); !st.ok()) return st;
  const std::string suffix = std::string(op_name(op)) + "_" + elem_suffix(t);
  // Float + and *: the exact left fold, bin by bin (combine_fold in device/combine.cu).
  if ((t == NDP_F64 || t == NDP_F32) && (op == NDP_OP_PLUS || op == NDP_OP_MULT)) {
    if (Status st = launch_named(*this, "ndp_combine_fold_" + suffix, n, k[cur], kb, f[cur], vals, n, dest, out); !st.ok())
      return st;
    return data_ok();
  }
  constexpr int64_t kTile = 256 * 8;  // kTile in device/combine.cu
  constexpr size_t kPairBytes = 16;   // sizeof(Pair<T>) is at most 16
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

}  // namespace ndp::rt::gpu
