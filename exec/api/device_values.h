// Private to exec/api: the embedding API's values on the GPU (device_values.cpp). `device` is an
// exec::cuda::DVec, which the rest of exec/api does not name.
#pragma once

#include <memory>

#include "exec/api/api_impl.h"

namespace ndp::detail {

std::shared_ptr<const void> upload_vec(const exec::host::Vec& v);
exec::host::Vec download_vec(const std::shared_ptr<const void>& device);
/// Its instances, and for a sequence vector all their elements.
int64_t device_size(const std::shared_ptr<const void>& device);
int64_t device_elements(const std::shared_ptr<const void>& device);
std::shared_ptr<const void> device_pair(lang::TypeContext& types, const std::shared_ptr<const void>& a,
                                        const std::shared_ptr<const void>& b);
std::shared_ptr<const void> device_first(const std::shared_ptr<const void>& d);
std::shared_ptr<const void> device_second(const std::shared_ptr<const void>& d);

}  // namespace ndp::detail
