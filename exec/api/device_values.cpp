// The embedding API's values on the GPU (exec/api/api_impl.h's Data with `device`): moving them
// between host and device, and taking pairs apart where they are.
#include "exec/api/device_values.h"

#include "exec/cuda/device_vec_ops.h"
#include "exec/cuda/gpu.h"

namespace ndp::detail {

namespace {

using exec::cuda::DVec;

exec::cuda::Gpu& gpu() {
  exec::cuda::Gpu* g = exec::cuda::Gpu::get();
  if (!g) fail("an ndp::Array on the GPU, but no GPU is open");
  g->check(g->device().make_current());  // the caller's thread, not the executor's
  return *g;
}

const DVec& dvec(const std::shared_ptr<const void>& d) { return *static_cast<const DVec*>(d.get()); }

std::shared_ptr<const void> share(DVec v) { return std::make_shared<const DVec>(std::move(v)); }

}  // namespace

std::shared_ptr<const void> upload_vec(const exec::host::Vec& v) { return share(exec::cuda::upload(gpu(), v)); }

exec::host::Vec download_vec(const std::shared_ptr<const void>& device) {
  exec::cuda::Gpu& g = gpu();
  exec::host::Vec v = exec::cuda::download(g, dvec(device));
  g.synchronize();
  return v;
}

int64_t device_size(const std::shared_ptr<const void>& device) { return dvec(device).size(); }

int64_t device_elements(const std::shared_ptr<const void>& device) { return dvec(device).elems().size(); }

std::shared_ptr<const void> device_pair(lang::TypeContext& types, const std::shared_ptr<const void>& a,
                                        const std::shared_ptr<const void>& b) {
  return share(DVec::pair(types.pair(dvec(a).type(), dvec(b).type()), dvec(a), dvec(b)));
}

std::shared_ptr<const void> device_first(const std::shared_ptr<const void>& d) { return share(dvec(d).first()); }

std::shared_ptr<const void> device_second(const std::shared_ptr<const void>& d) { return share(dvec(d).second()); }

}  // namespace ndp::detail
