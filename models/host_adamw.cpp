// host_adamw (host_adamw.hpp): AdamW over host memory through adamw_math.hpp's adamw_element, for the
// CPU oracle and for the optimizer step ZeRO-Offload runs on the host.
#include "models/host_adamw.hpp"

#include <string>

#include "core/error.hpp"
#include "kernels/train/adamw_math.hpp"
#include "models/cpu_fp32_io.hpp"

namespace gcb::models {
namespace {
constexpr long kParallelMin = 1 << 14;  // below this many elements a parallel region costs more
}  // namespace

void host_adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) {
  GCB_CHECK(master != nullptr || params.dtype == DType::f32,
            "adamw: parameters stored in " + std::string(dtype_name(params.dtype)) + " need fp32 master weights");
  const Fp32Input G(grads, n);
  Fp32Output P(params, n, Fp32Output::Mode::overwrite);
  // fp32: the parameters are the weights; mixed precision: the master copy is.
  float* w = master != nullptr ? master : P.get();
  float* p = P.get();
  const float* g = G.get();
  const kernels::train::AdamWStep step =
      kernels::train::adamw_step(a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, a.step, a.grad_scale);
#pragma omp parallel for if (static_cast <long>(n) > kParallelMin)
  for (size_t i = 0; i < n; ++i) {
    kernels::train::adamw_element(g[i], m[i], v[i], w[i], step);  // the CUDA kernel's arithmetic
    p[i] = w[i];  // rounded to the parameters' type by commit (same memory for fp32)
  }
  P.commit();
}

void host_adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a) {
  for (const AdamWBuffers& x : tensors) host_adamw(x.params, x.grads, x.m, x.v, x.master, x.n, adamw_args_for(x, a));
}

}  // namespace gcb::models
