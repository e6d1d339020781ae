// rand's draw counts on the device (Note [Draw counts on the device]).
#pragma once

#include <cstdint>
#include <map>

#include "runtime/gpu/primitives.h"

namespace ndp::runtime::gpu {

// Note [Draw counts on the device]
// A draw of `rand` is a pure function of (seed, call site, path hash, c), where c counts the
// earlier draws of the top-level form at the same site and path (Note [rand] in
// lang/eval/rand.h). The cuda backend keeps what that needs on the device, so that no draw
// goes through the host:
// * the seed's mix, one word, which rand_seed sets from its argument where it lies;
// * per call site, a hash table from path hash to count (open addressing, linear probing, a
//   power-of-two capacity kept at least twice the paths it may hold; one extra slot for the
//   path equal to the empty marker). The sites are few and known on the host, so the host
//   keeps one table per site and no key holds the site.
// A statement of n draws at one site: (1) each instance claims its path's slot and counts
// itself in the slot's `pending` (and checks its bound); (2) one read-back of four words
// gives the first bad bound, whether some path came twice, and how many slots were new;
// (3) where a path came twice, the instances with that path are numbered in instance order
// (stable ranks of their slots, less the lowest rank of the slot): the interpreter draws in
// that order; (4) instance i draws with c = the slot's count + its number; (5) each slot's
// pending draws join its count. A new top-level form or a rand_seed drops every table.
class DrawCounts {
 public:
  explicit DrawCounts(Primitives& p) : p_(p) {}
  /// A top-level form's start, or a seed the host knows: seed `seed`, no draws yet.
  Status restart(uint64_t seed);
  /// rand_seed over n instances whose seeds are on the device: the last one wins (n > 0).
  Status reseed(CUdeviceptr seeds, int64_t n);
  /// n draws at call site `site` of type t (NDP_I64, NDP_F64, NDP_I32 or NDP_F32) below
  /// bounds[i], at paths[i] (uint64). Returns the first instance whose bound is not positive
  /// (nothing is drawn then), or -1 (synchronises once).
  Result<int64_t> draw(ndp_elem_type t, uint64_t site, CUdeviceptr bounds, CUdeviceptr paths, int64_t n,
                       CUdeviceptr out);

 private:
  struct Table {
    cuda::DeviceBuffer slots;  // capacity + 1 DrawSlots (device/rand.cu)
    int64_t capacity = 0;
    int64_t used = 0;          // slots holding a path
  };
  Status make_table(Table& t, int64_t capacity);
  /// Room for n more paths, the table at most half full: else rehashes into one at least four
  /// times what it must hold.
  Status reserve(Table& t, int64_t n);

  Primitives& p_;
  cuda::DeviceBuffer seed_mix_;
  std::map<uint64_t, Table> tables_;  // by call site
};

}  // namespace ndp::runtime::gpu
