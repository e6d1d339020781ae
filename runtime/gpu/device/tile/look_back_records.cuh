// Tile level: the records of the decoupled look-back (Note [Single-pass scans and reductions] in
// scan.cu). The ticket that hands out tiles in order, and per tile what it has published: its
// aggregate, then its inclusive prefix, each readable in one load.
#pragma once

#include <cuda/atomic>

#include "../thread/operators.cuh"
#include "../thread/words.cuh"

namespace ndp::runtime::gpu::device {

/// What a tile has published.
enum : unsigned { kTileNothing = 0, kTileAggregate = 1, kTileInclusive = 2 };

/// The look-back records, in one scratch buffer of at least 2 + 2·ntiles 8-byte words that
/// persists from call to call (Primitives::lookback_scratch): the ticket word, a pad word, then
/// a record per tile holding what the tile has published (its status), its flag and its value,
/// written and read as one access, so that a record is never seen half written and one load
/// reads it whole.
/// * Values of at most 4 bytes: one 8-byte word (status in the top bits, the flag at bit 32,
///   the value's bits below).
/// * 8-byte values: a 16-byte word {status | flag << 32, value bits}, stored and loaded with
///   one vector access (st/ld.relaxed.gpu.v2.u64), as CUB's ScanTileState does. (Before: the
///   value words first, then the status with release, and readers acquired the status before
///   loading the value, two dependent loads per tile; scan_i64 ran at 0.68x CUB.)
///
/// Note [Look-back epochs]
/// The buffer is not zeroed before a call (a fill kernel and an allocation every scan and
/// pack). Instead each call has an epoch (29 bits), which its records carry in bits 33..61, and
/// a record of another epoch reads as nothing published. The ticket word holds the epoch in
/// its high 32 bits and the tiles drawn in its low 32; each block draws tickets until one is
/// past the tiles, so a pass draws exactly ntiles + gridDim.x, and the last draw sets the word
/// for the next call: the next epoch, nothing drawn. An all-zero buffer is a valid start (epoch
/// 0, every record empty); the host zeroes it when it grows it, and often enough that an epoch
/// never comes round again while a record of its last use survives.
template <class T>
struct LookBack {
  static constexpr bool kOneWord = sizeof(T) <= 4;
  static constexpr int kStatusShift = 62;
  static constexpr unsigned long long kFlagBit = 1ull << 32;
  static constexpr int kEpochShift = 33;
  static constexpr unsigned long long kEpochs = 1ull << 29;
  static constexpr unsigned long long kEpochMask = (kEpochs - 1) << kEpochShift;
  /// A record as loaded: w alone, or w and the value's bits.
  struct Record {
    unsigned long long w, bits;
  };
  unsigned long long* ticket;
  unsigned long long* records;  // tile t: records[t] (one word) or records[2t], [2t + 1]
  unsigned long long epoch_bits = 0;  // this call's epoch, where records carry it (begin)

  __device__ explicit LookBack(unsigned long long* scratch) : ticket(scratch), records(scratch + 2) {}

  /// Draws a ticket (one thread of a block): the ticket word as it was. The pass's last draw
  /// sets the word for the next call (Note [Look-back epochs]); ntiles < 2^32.
  __device__ unsigned long long draw(long long ntiles) {
    const unsigned long long word = atomicAdd(ticket, 1ull);
    if ((word & 0xffffffffull) == static_cast<unsigned long long>(ntiles) + gridDim.x - 1) {
      const unsigned long long next = ((word >> 32) + 1) & (kEpochs - 1);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*ticket).store(next << 32,
                                                                                  cuda::memory_order_relaxed);
    }
    return word;
  }
  /// Every thread, with the word its block drew: the tile it names; takes the call's epoch.
  __device__ long long begin(unsigned long long drawn) {
    epoch_bits = (drawn >> 32) << kEpochShift;
    return static_cast<long long>(drawn & 0xffffffffull);
  }

  __device__ void publish(long long tile, unsigned what, const SegPair<T>& p) {
    if constexpr (kOneWord) {
      const unsigned long long word = (static_cast<unsigned long long>(what) << kStatusShift) | epoch_bits |
                                      (p.f ? kFlagBit : 0ull) | (to_bits(p.v) & 0xffffffffull);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(records[tile])
          .store(word, cuda::memory_order_relaxed);
    } else {
      const unsigned long long w = what | epoch_bits | (p.f ? kFlagBit : 0ull), bits = to_bits(p.v);
      asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(records + 2 * tile), "l"(w), "l"(bits)
                   : "memory");
    }
  }

  /// What a record says this call's tile published (nothing, for a record of another call).
  __device__ unsigned status(const Record& r) const {
    if ((r.w & kEpochMask) != epoch_bits) return kTileNothing;
    return kOneWord ? static_cast<unsigned>(r.w >> kStatusShift) : static_cast<unsigned>(r.w & 3);
  }

  /// The record of `tile` as it is now (relaxed: loads of several tiles stay in flight
  /// together).
  __device__ Record peek(long long tile) {
    Record r{0, 0};
    if constexpr (kOneWord) {
      r.w = cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(records[tile])
                .load(cuda::memory_order_relaxed);
    } else {
      asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(r.w), "=l"(r.bits) : "l"(records + 2 * tile)
                   : "memory");
    }
    return r;
  }

  /// The record of `tile`, once it says something was published.
  __device__ Record wait(long long tile) {
    Record r;
    while (status(r = peek(tile)) == kTileNothing) __nanosleep(32);
    return r;
  }

  /// What a record says was published, and its value in p.
  __device__ unsigned read(const Record& r, SegPair<T>& p) const {
    p.v = from_bits<T>(kOneWord ? (r.w & 0xffffffffull) : r.bits);
    p.f = (r.w & kFlagBit) ? 1 : 0;
    return status(r);
  }
};

}  // namespace ndp::runtime::gpu::device
