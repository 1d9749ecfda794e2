// AdamW with decoupled weight decay (Loshchilov & Hutter 2019, Alg. 2), one element, as a host/device
// description: the CPU oracle (models/backend/cpu/cpu_backend.cpp), the multi-tensor CUDA kernel (adamw.cu) and
// the kernel's CPU reference below all call adamw_element, so they compute the same fp32 operations:
//   g ← g·s,  m = β1·m + (1 − β1)·g,  v = β2·v + (1 − β2)·g²,  w −= lr·(m̂/(√v̂ + eps) + wd·w)
// with m̂ = m/c1, v̂ = v/c2 and the bias corrections c1 = 1 − β1^step, c2 = 1 − β2^step computed once per
// step on the host, in float (adamw_step). s is the gradient-clipping coefficient (1 without clipping;
// g·1 is g exactly): the fp32 product torch's clip_grad_norm_ writes into the gradients before the
// optimizer reads them (torch/nn/utils/clip_grad.py, grads.mul_(clip_coef_clamped)).
#pragma once

#include <math.h>

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/dtype.hpp"
#include "core/host_device.hpp"
#include "kernels/train/multi_tensor_plan.hpp"

namespace gcb::kernels::train {

struct AdamWStep {
  float lr, beta1, beta2, eps, weight_decay, c1, c2, grad_scale;
};
// The step's constants with the bias corrections of 1-based step `step`, in float.
inline AdamWStep adamw_step(float lr, float beta1, float beta2, float eps, float weight_decay, int step,
                            float grad_scale = 1.0f) {
  const auto s = static_cast<float>(step);
  return {lr, beta1, beta2, eps, weight_decay, 1.0f - std::pow(beta1, s), 1.0f - std::pow(beta2, s), grad_scale};
}

GCB_HD inline void adamw_element(float g, float& m, float& v, float& w, const AdamWStep& a) {
  g *= a.grad_scale;
  m = a.beta1 * m + (1.0f - a.beta1) * g;
  v = a.beta2 * v + (1.0f - a.beta2) * g * g;
  const float mhat = m / a.c1;
  const float vhat = v / a.c2;
  w -= a.lr * (mhat / (sqrtf(vhat) + a.eps) + a.weight_decay * w);
}

// One tensor of a multi-tensor AdamW: params and grads of the launch's element type, m, v (and
// master, mixed precision) fp32. With master the weights are master and params receives them
// rounded; without, params (fp32) are the weights.
struct AdamWTensor {
  void* params = nullptr;
  const void* grads = nullptr;
  float* m = nullptr;
  float* v = nullptr;
  float* master = nullptr;
  size_t n = 0;
};

// The CPU reference of the multi-tensor kernel: the launches' blocks in order, each chunk element
// by element, exactly as a CUDA block walks its table entry. Host memory; t is f32 or bf16.
inline void adamw_multi_tensor_host(DType t, const std::vector<AdamWTensor>& tensors,
                                    const std::vector<MultiTensorLaunch>& plan, const AdamWStep& a) {
  for (const MultiTensorLaunch& l : plan) {
    for (const ChunkEntry& b : l.blocks) {
      const AdamWTensor& x = tensors[l.tensors[b.slot]];
      for (size_t i = b.offset; i < b.offset + b.length; ++i) {
        float w = x.master != nullptr ? x.master[i] : static_cast<float>(load_as(t, x.params, i));
        adamw_element(static_cast<float>(load_as(t, x.grads, i)), x.m[i], x.v[i], w, a);
        if (x.master != nullptr) x.master[i] = w;
        store_as(t, x.params, i, w);
      }
    }
  }
}

}  // namespace gcb::kernels::train
