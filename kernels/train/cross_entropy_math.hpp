// The arithmetic of the fused cross-entropy finish + backward (cross_entropy.cu), per element, as
// a host/device description: the CUDA kernel calls these functions and the CPU tests check them
// against the CpuBackend's two ops (finish, then backward), which the engine ran before.
//   loss        = log Σexp − (target logit − rowmax)          (log-sum-exp form, finite)
//   dL/dlogit_i = (exp(logit_i − rowmax) / Σexp − [i = target]) · dloss, 0 for padding columns
// Nothing else is rounded in between: in fp32 the result is bitwise the two ops', in bf16 it skips
// their one intermediate rounding of the probability (a more accurate dlogit).
#pragma once

#include <math.h>

#include "core/host_device.hpp"

namespace gcb::kernels::train {

GCB_HD inline float cross_entropy_row_loss(float sum_exp, float target_logit, float rowmax) {
  return logf(sum_exp) - (target_logit - rowmax);
}

// inv_sum = 1 / Σexp of the row, computed once per row.
GCB_HD inline float cross_entropy_dlogit(float logit, float rowmax, float inv_sum, bool is_target, bool padding,
                                         float dloss) {
  if (padding) return 0.0f;
  const float p = expf(logit - rowmax) * inv_sum;
  return (p - (is_target ? 1.0f : 0.0f)) * dloss;
}

}  // namespace gcb::kernels::train
