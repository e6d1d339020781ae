// rand's draw counts on the device (device/rand.cu; Note [Draw counts on the device] in rand.h).
#include "runtime/gpu/rand.h"

#include <string>

#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

namespace {

constexpr int64_t kSlotBytes = 24;  // device/rand.cu's DrawSlot
constexpr int64_t kMinCapacity = 1024;

}  // namespace

Status DrawCounts::restart(uint64_t seed) {
  tables_.clear();
  if (seed_mix_.pointer() == 0) {
    Result<cuda::DeviceBuffer> b = p_.pool().allocate(8);
    if (!b.ok()) return b.status();
    seed_mix_ = std::move(b.value());
  }
  return launch_named(p_, "ndp_rand_seed_value", 1, seed, seed_mix_.pointer());
}

Status DrawCounts::reseed(CUdeviceptr seeds, int64_t n) {
  if (n <= 0) return Status();
  if (Status st = restart(0); !st.ok()) return st;
  return launch_named(p_, "ndp_rand_seed", 1, seeds, n, seed_mix_.pointer());
}

Status DrawCounts::make_table(Table& t, int64_t capacity) {
  Result<cuda::DeviceBuffer> b = p_.pool().allocate(static_cast<size_t>((capacity + 1) * kSlotBytes));
  if (!b.ok()) return b.status();
  t.slots = std::move(b.value());
  t.capacity = capacity;
  return launch_named(p_, "ndp_rand_table_clear", capacity + 1, t.slots.pointer(), capacity + 1);
}

Status DrawCounts::reserve(Table& t, int64_t n) {
  int64_t need = t.used + n;
  if (t.capacity > 0 && 2 * need <= t.capacity) return Status();
  int64_t capacity = kMinCapacity;
  while (capacity < 4 * need) capacity *= 2;
  Table bigger;
  if (Status st = make_table(bigger, capacity); !st.ok()) return st;
  if (t.capacity > 0) {
    Result<CUdeviceptr> words = p_.failure_words();  // word 2 counts insertions, unread here
    if (!words.ok()) return words.status();
    if (Status st = launch_named(p_, "ndp_rand_table_rehash", t.capacity + 1, t.slots.pointer(), t.capacity,
                                 bigger.slots.pointer(), capacity, words.value() + 16);
        !st.ok())
      return st;
  }
  bigger.used = t.used;
  t = std::move(bigger);
  return Status();
}

Result<int64_t> DrawCounts::draw(ndp_elem_type type, uint64_t site, CUdeviceptr bounds, CUdeviceptr paths, int64_t n,
                                 CUdeviceptr out) {
  if (n <= 0) return int64_t{-1};
  if (seed_mix_.pointer() == 0)
    if (Status st = restart(0); !st.ok()) return st;
  Table& t = tables_[site];
  if (Status st = reserve(t, n); !st.ok()) return st;
  Result<CUdeviceptr> words = p_.failure_words();
  if (!words.ok()) return words.status();
  if (Status st = p_.fill(words.value() + 8, 2, 8, 0); !st.ok()) return st;
  Result<cuda::DeviceBuffer> slot_of = p_.pool().allocate(static_cast<size_t>(n * 8));
  if (!slot_of.ok()) return slot_of.status();
  const std::string suffix = elem_suffix(type);
  CUdeviceptr slots = t.slots.pointer(), ids = slot_of->pointer();
  if (Status st = launch_named(p_, "ndp_rand_claim_" + suffix, n, bounds, paths, n, slots, t.capacity, ids,
                               words.value());
      !st.ok())
    return st;
  uint64_t w[3];
  if (Status st = p_.pool().download(w, words.value(), sizeof w); !st.ok()) return st;
  t.used += static_cast<int64_t>(w[2]);
  if (w[0] != ~uint64_t{0}) {
    tables_.erase(site);  // its pending counts are stale; the form ends with the error
    if (Status st = p_.rearm_failure_words(); !st.ok()) return st;
    return static_cast<int64_t>(w[0]);
  }
  cuda::DeviceBuffer ranks;
  if (w[1] != 0) {  // some path came twice: number its instances in order
    Result<cuda::DeviceBuffer> r = p_.pool().allocate(static_cast<size_t>(n * 8));
    if (!r.ok()) return r.status();
    ranks = std::move(r.value());
    if (Status st = launch_named(p_, "ndp_rand_mark_groups", n, ids, n, slots); !st.ok()) return st;
    Result<ndp_status> ranked = p_.rank(NDP_I64, ids, DSegs::flat(n), NDP_ASCENDING, ranks.pointer());
    if (!ranked.ok()) return ranked.status();
    if (Status st = launch_named(p_, "ndp_rand_group_starts", n, ids, ranks.pointer(), n, slots); !st.ok()) return st;
  }
  if (Status st = launch_named(p_, "ndp_rand_draw_" + suffix, n, bounds, paths, ids, ranks.pointer(), n,
                               static_cast<CUdeviceptr>(slots), seed_mix_.pointer(), site, out);
      !st.ok())
    return st;
  if (Status st = launch_named(p_, "ndp_rand_commit", n, ids, n, slots); !st.ok()) return st;
  return int64_t{-1};
}

Status Primitives::path_step(CUdeviceptr parent, DSegs s, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, "ndp_path_step", s, parent, s, out);
}

}  // namespace ndp::runtime::gpu
