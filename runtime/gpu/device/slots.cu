// The slots of an appended sequence of a loop kernel (Note [Appended sequences in loop kernels]
// in flatten/flat_ir.h): each instance's row is written into a slot of its own, and the rows
// are packed one after another once their lengths are known.
#include "common.cuh"

using namespace ndp::runtime::gpu::device;

// The n + 1 slot offsets: each instance's input row and `room` more elements.
extern "C" __global__ void ndp_slot_offsets(const long long* in_offsets, long long n, long long room, long long* slots) {
  NDP_GRID_STRIDE(i, n + 1) slots[i] = in_offsets[i] + i * room;
}

// The lowest instance whose row outgrew its slot.
extern "C" __global__ void ndp_slot_outgrown(const long long* slots, const long long* lengths, long long n,
                                             unsigned long long* first_failure) {
  NDP_GRID_STRIDE(i, n) {
    if (lengths[i] > slots[i + 1] - slots[i]) report_failure(first_failure, i);
  }
}

// Row i (lengths[i] elements of one flat component) from its slot to out_offsets[i]: a thread
// a row, since rows are short (a loop's appends).
#define NDP_SLOT_PACK(T, size)                                                                               \
  extern "C" __global__ void ndp_slot_pack_##size(const T* slot_elems, const long long* slots,               \
                                                  const long long* out_offsets, long long n, T* out) {      \
    NDP_GRID_STRIDE(i, n) {                                                                                   \
      const long long from = slots[i], to = out_offsets[i], len = out_offsets[i + 1] - to;                   \
      for (long long p = 0; p < len; ++p) out[to + p] = slot_elems[from + p];                                \
    }                                                                                                         \
  }
NDP_FOR_SIZES(NDP_SLOT_PACK)
