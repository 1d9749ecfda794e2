// The derived GPU-vs-CPU tolerances of gpu_tolerance.hpp checked on the CPU: the GELU bounds hold
// for two fp32 evaluations that differ as a GPU's and a host's do (tanhf 2 ulp apart, the argument
// with and without fused multiply-adds), and they are not vacuous: a tanh with 2⁻¹¹ relative error
// (the size of PTX's tanh.approx.f32) breaks them.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/models/backend/gpu_tolerance.hpp"

namespace gcb::models::test {
namespace {

constexpr float kK = 0.7978845608028654f, kC = 0.044715f;

float arg_plain(float x) { return kK * (x + kC * x * x * x); }
float arg_fused(float x) { return kK * std::fma(kC * x * x, x, x); }
// tanh moved `ulps` representable values away from zero, or scaled by (1 + rel).
float tanh_off(float u, int ulps, double rel) {
  float t = std::tanh(u);
  for (int i = 0; i < ulps; ++i) t = std::nextafter(t, std::copysign(2.0f, t));
  return static_cast<float>(t * (1 + rel));
}
float gelu(float x, float t) { return 0.5f * x * (1.0f + t); }
float gelu_grad(float x, float d, float t) {
  const float s = 1.0f - t * t;
  return d * (0.5f * (1.0f + t) + 0.5f * x * s * kK * (1.0f + 3.0f * kC * x * x));
}

TEST(GpuTolerance, GeluBoundsHoldForTwoFp32EvaluationsAsAGpuAndAHostDiffer) {
  std::mt19937_64 rng(11);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  double worst_fwd = 0, worst_bwd = 0;
  for (int i = 0; i < 200000; ++i) {
    const float x = n01(rng) * (i % 4 == 0 ? 3.0f : 1.0f), d = n01(rng);
    const float t_host = tanh_off(arg_plain(x), 0, 0), t_gpu = tanh_off(arg_fused(x), 2, 0);
    const float f_host = gelu(x, t_host), f_gpu = gelu(x, t_gpu);
    worst_fwd = std::max(worst_fwd, std::fabs(double(f_gpu) - f_host) / gelu_forward_bound(DType::f32, x, f_host));
    const float b_host = gelu_grad(x, d, t_host), b_gpu = gelu_grad(x, d, t_gpu);
    worst_bwd = std::max(worst_bwd, std::fabs(double(b_gpu) - b_host) / gelu_backward_bound(DType::f32, x, d, b_host));
  }
  EXPECT_LE(worst_fwd, 1.0);
  EXPECT_LE(worst_bwd, 1.0);
  // Not loose by orders of magnitude: the worst case uses a good part of the bound.
  EXPECT_GE(worst_fwd, 0.05);
  EXPECT_GE(worst_bwd, 0.05);
}

TEST(GpuTolerance, GeluBoundsCatchATanhOffBy2ToTheMinus11) {
  std::mt19937_64 rng(12);
  std::normal_distribution<float> n01(0.0f, 1.0f);
  int fwd_caught = 0, bwd_caught = 0, trials = 0;
  for (int i = 0; i < 20000; ++i) {
    const float x = n01(rng), d = n01(rng);
    if (std::fabs(x) < 0.5f) continue;  // where tanh's error reaches the output
    ++trials;
    const float t = tanh_off(arg_plain(x), 0, 0), t_bad = tanh_off(arg_plain(x), 0, 0x1p-11);
    const float f = gelu(x, t), f_bad = gelu(x, t_bad);
    fwd_caught += std::fabs(double(f_bad) - f) > gelu_forward_bound(DType::f32, x, f);
    const float b = gelu_grad(x, d, t), b_bad = gelu_grad(x, d, t_bad);
    bwd_caught += std::fabs(double(b_bad) - b) > gelu_backward_bound(DType::f32, x, d, b);
  }
  EXPECT_GT(fwd_caught, trials * 9 / 10) << fwd_caught << " of " << trials;
  EXPECT_GT(bwd_caught, trials * 9 / 10) << bwd_caught << " of " << trials;
}

}  // namespace
}  // namespace gcb::models::test
