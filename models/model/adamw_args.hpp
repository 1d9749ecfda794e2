// AdamW's hyper-parameters for one step (Loshchilov & Hutter 2019, decoupled weight decay): what
// the options carry (train_options.hpp OptimizerOptions) and every backend's optimizer op takes.
// Plain values, so the options, the theory and the planner need no runtime interface.
#pragma once

namespace gcb::models {

struct AdamWArgs {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int step = 1;             // 1-based, for bias correction
  float grad_scale = 1.0f;  // the gradient-clipping coefficient, applied to g first (adamw_math.hpp)
};

}  // namespace gcb::models
