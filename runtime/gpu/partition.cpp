// Partitions (Note [Partitions] in partition.h): the launches of device/partition.cu.
#include "runtime/gpu/partition.h"

#include "runtime/gpu/launch.h"

namespace ndp::runtime::gpu {

namespace {

int64_t tiles_of(int64_t n) { return (n + kPartitionTile - 1) / kPartitionTile; }

cuda::LaunchConfig a_block_a_tile(int64_t n) {
  return cuda::LaunchConfig{static_cast<unsigned>(tiles_of(n)), static_cast<unsigned>(kPartitionBlock), 0};
}

}  // namespace

Status Primitives::partition_totals(const PartitionFlags& f, int64_t n, CUdeviceptr bases, int64_t* totals) {
  if (totals != nullptr)
    for (int k = 0; k < f.count; ++k) totals[k] = 0;
  if (n <= 0 || f.count == 0) return Status();
  const int64_t tiles = tiles_of(n);
  Result<cuda::DeviceBuffer> counts = pool().allocate(static_cast<size_t>(tiles) * 8);
  if (!counts.ok()) return counts.status();
  Result<cuda::Kernel> count = kernel("ndp_partition_count");
  if (!count.ok()) return count.status();
  if (Status st = cuda::launch_with(device(), count.value(), a_block_a_tile(n), f, n, counts->pointer()); !st.ok())
    return st;
  Result<cuda::Kernel> scan = kernel("ndp_partition_scan");
  if (!scan.ok()) return scan.status();
  if (Status st = cuda::launch_with(device(), scan.value(), cuda::LaunchConfig{1, 1024, 0}, CUdeviceptr{counts->pointer()},
                                    tiles, f.count, bases);
      !st.ok())
    return st;
  if (totals == nullptr) return Status();
  return pool().download(totals, bases + f.count * (tiles + 1) * 8, f.count * 8);
}

Status Primitives::partition_scatter(const PartitionFlags& f, const PartitionColumns& c, int64_t n, CUdeviceptr bases,
                                     DSegs s, const PartitionSegments& out) {
  const int64_t tiles = tiles_of(n), chunks = (n + kPartitionChunk - 1) / kPartitionChunk;
  // The chunks' prefixes and masks, for the segments' offsets.
  cuda::DeviceBuffer prefix, masks;
  if (s.count > 0 && n > 0) {
    Result<cuda::DeviceBuffer> p = pool().allocate(static_cast<size_t>(chunks) * 8);
    if (!p.ok()) return p.status();
    Result<cuda::DeviceBuffer> m = pool().allocate(static_cast<size_t>(chunks) * 4 * f.count);
    if (!m.ok()) return m.status();
    prefix = std::move(p.value());
    masks = std::move(m.value());
  }
  if (n > 0 && (c.count > 0 || s.count > 0)) {
    Result<cuda::Kernel> scatter = kernel("ndp_partition_scatter");
    if (!scatter.ok()) return scatter.status();
    if (Status st = cuda::launch_with(device(), scatter.value(), a_block_a_tile(n), f, c, n, bases, tiles,
                                      prefix.pointer(), masks.pointer(), chunks);
        !st.ok())
      return st;
  }
  if (n == 0 || s.count == 0) {  // every segment empty (or none): offsets and counts all 0
    for (int k = 0; k < f.count; ++k) {
      if (out.offsets[k] != nullptr)
        if (Status st = fill(reinterpret_cast<CUdeviceptr>(out.offsets[k]), s.count + 1, 8, 0); !st.ok()) return st;
      if (out.counts[k] != nullptr)
        if (Status st = fill(reinterpret_cast<CUdeviceptr>(out.counts[k]), s.count, 8, 0); !st.ok()) return st;
    }
    return Status();
  }
  return launch_named(*this, "ndp_partition_segments", s.count + 1, s, f.count, n, bases, tiles, prefix.pointer(),
                      masks.pointer(), chunks, out);
}

}  // namespace ndp::runtime::gpu
