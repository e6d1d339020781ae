// The placing of a laid-out recursion's rows (device/laid_out.cu).
#include "runtime/gpu/launch.h"
#include "runtime/gpu/seg_scan_impl.h"

namespace ndp::runtime::gpu {

Status Primitives::laid_out_place(int bytes, DSegs rows, CUdeviceptr elems, CUdeviceptr at, CUdeviceptr out) {
  return detail::launch_per_element_segment(*this, sized_name("ndp_laid_out_place_", bytes), rows, elems, rows, at, out);
}

}  // namespace ndp::runtime::gpu
