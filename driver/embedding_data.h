// The embedding API's opaque value (include/ndp/ndp.hpp's detail::Data): an executor vector.
#pragma once

#include "exec/host/vec.h"
#include "include/ndp/ndp.hpp"

namespace ndp::detail {

struct Data {
  exec::host::Vec vec;  // n instances of one closed type
};

DataPtr make_data(exec::host::Vec v);

}  // namespace ndp::detail
