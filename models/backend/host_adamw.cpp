// host_adamw (host_adamw.hpp): AdamW over host memory through adamw_math.hpp's adamw_element, for the
// CPU oracle and for the optimizer step ZeRO-Offload runs on the host.
#include "models/backend/host_adamw.hpp"

#include <cstdint>
#include <string>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "kernels/train/adamw_math.hpp"

namespace gcb::models {
namespace {
constexpr long kParallelMin = 1 << 14;  // below this many elements a parallel region costs more

// One pass over the elements, in parallel: the gradient widened to fp32 where it is 16-bit (exact),
// adamw_element on the fp32 weight (the master copy, or fp32 parameters themselves), then the
// parameter stored, rounded to nearest even once where it is 16-bit — no fp32 copies of the
// 16-bit tensors (a ZeRO-Offload step updates every parameter of the model on the host).
template <typename Grad, typename Store>
void adamw_pass(size_t n, const Grad& grad, float* m, float* v, float* w, const Store& store,
                const kernels::train::AdamWStep& step) {
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    kernels::train::adamw_element(grad(i), m[i], v[i], w[i], step);  // the CUDA kernel's arithmetic
    store(i, w[i]);
  }
}

template <typename Grad>
void adamw_to_params(View params, const Grad& grad, float* m, float* v, float* master, size_t n,
                     const kernels::train::AdamWStep& step) {
  if (params.dtype == DType::f32) {
    auto* p = static_cast<float*>(params.data);
    if (master == nullptr) {
      adamw_pass(
          n, grad, m, v, p, [](size_t, float) {}, step);  // fp32: the parameters are the weights
    } else {
      adamw_pass(
          n, grad, m, v, master, [p](size_t i, float x) { p[i] = x; }, step);
    }
    return;
  }
  auto* p = static_cast<uint16_t*>(params.data);
  if (params.dtype == DType::bf16) {
    adamw_pass(
        n, grad, m, v, master, [p](size_t i, float x) { p[i] = float_to_bf16(x); }, step);
  } else {
    GCB_CHECK(params.dtype == DType::f16, "adamw: parameters are fp32, bf16 or fp16");
    adamw_pass(
        n, grad, m, v, master, [p](size_t i, float x) { p[i] = float_to_fp16(x); }, step);
  }
}
}  // namespace

void host_adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) {
  GCB_CHECK(master != nullptr || params.dtype == DType::f32,
            "adamw: parameters stored in " + std::string(dtype_name(params.dtype)) + " need fp32 master weights");
  const kernels::train::AdamWStep step =
      kernels::train::adamw_step(a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.step, a.grad_scale);
  if (grads.dtype == DType::f32) {
    const auto* g = static_cast<const float*>(grads.data);
    adamw_to_params(
        params, [g](size_t i) { return g[i]; }, m, v, master, n, step);
  } else if (grads.dtype == DType::bf16) {
    const auto* g = static_cast<const uint16_t*>(grads.data);
    adamw_to_params(
        params, [g](size_t i) { return bf16_to_float(g[i]); }, m, v, master, n, step);
  } else {
    GCB_CHECK(grads.dtype == DType::f16,
              "adamw: gradients are fp32, bf16 or fp16, not " + std::string(dtype_name(grads.dtype)));
    const auto* g = static_cast<const uint16_t*>(grads.data);
    adamw_to_params(
        params, [g](size_t i) { return fp16_to_float(g[i]); }, m, v, master, n, step);
  }
}

void host_adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a) {
  for (const AdamWBuffers& x : tensors) host_adamw(x.params, x.grads, x.m, x.v, x.master, x.n, adamw_args_for(x, a));
}

}  // namespace gcb::models
