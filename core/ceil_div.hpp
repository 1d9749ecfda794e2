// Integer division rounded up, for grid sizes and tile counts (host and device code).
#pragma once

#include "core/host_device.hpp"

namespace gcb {

// ⌈a / b⌉ for non-negative a and positive b.
template <typename I>
GCB_HD constexpr I ceil_div(I a, I b) {
  return (a + b - 1) / b;
}

}  // namespace gcb
