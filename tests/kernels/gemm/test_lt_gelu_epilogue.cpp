// cuBLASLt's GELU epilogues (CUBLASLT_EPILOGUE_GELU_AUX_BIAS forward, CUBLASLT_EPILOGUE_DGELU
// backward) against our tanh-GELU kernels on a device (label gpu; skips without one). Neither
// cublasLt.h nor the cuBLAS documentation says which GELU cuBLASLt computes — GPT-2's tanh
// approximation ½x(1 + tanh(√(2/π)(x + 0.044715x³))) or the erf form ½x(1 + erf(x/√2)) — so the
// training backend keeps the fused epilogue off (`train --lt-gelu`) until this test has run. It
// prints how far the epilogue lies from each form (mean and max over the matrix) and records the
// closer as the test property cublaslt_gelu_form — decided on the fp32 run, where the forms'
// difference stands above rounding. Compiles here; unvalidated (never run on a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "core/buffer.hpp"
#include "core/dtype.hpp"
#include "core/gpu.hpp"
#include "kernels/gemm/cublaslt_gemm.hpp"
#include "kernels/gemm/lt_linear.hpp"
#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels {
namespace {

double gelu_tanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x)));
}
double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double dgelu_tanh(double x) {
  const double k = std::sqrt(2.0 / std::numbers::pi), u = k * (x + 0.044715 * x * x * x), t = std::tanh(u);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
}
double dgelu_erf(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
}

// Per-element bound |got − want| ≤ tol·(1 + |want|). fp32: 1e-3, twice the error a tanh.approx.f32
// (relative error 2^-10.99, PTX ISA "tanh") passes through GELU's ½x for |x| ≤ 4; bf16: 1/64, two
// bf16 roundings (2^-9 relative each: the stored input and output) on top, with a 2× margin.
double tolerance(DType t) { return t == DType::bf16 ? 1.0 / 64 : 1e-3; }

struct Distance {
  double mean = 0, max = 0;
};
Distance distance(const std::vector<double>& got, const std::vector<double>& want) {
  Distance d;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]);
    d.mean += e / static_cast<double>(got.size());
    d.max = std::max(d.max, e);
  }
  return d;
}
size_t beyond(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  size_t n = 0;
  for (size_t i = 0; i < got.size(); ++i) n += std::abs(got[i] - want[i]) > tol * (1.0 + std::abs(want[i])) ? 1 : 0;
  return n;
}

class LtGeluEpilogue : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    if (gpu::device_count() == 0) GTEST_SKIP() << "no GPU: " << gpu::runtime().unavailable_reason;
    stream_ = gpu::create_stream(0);
    ctx_ = std::make_unique<LtContext>(0);
    linear_ = std::make_unique<LtLinear>(*ctx_);
  }
  void TearDown() override {
    linear_.reset();
    ctx_.reset();
    if (stream_) gpu::destroy_stream(stream_);
  }
  // A device matrix of n values uniform in [−scale, scale] (a fixed LCG), stored as t.
  DeviceBuffer upload(DType t, size_t n, uint32_t seed, double scale) {
    std::vector<unsigned char> host(n * dtype_size(t));
    uint32_t s = seed;
    for (size_t i = 0; i < n; ++i) {
      s = s * 1664525u + 1013904223u;
      store_as(t, host.data(), i, scale * (2.0 * (s >> 8) / double(1u << 24) - 1.0));
    }
    DeviceBuffer d(0, host.size());
    gpu::copy_async(d.data(), host.data(), host.size(), gpu::CopyKind::host_to_device, stream_);
    gpu::synchronize(stream_);
    return d;
  }
  std::vector<double> download(DType t, const DeviceBuffer& d, size_t n) {
    std::vector<unsigned char> host(n * dtype_size(t));
    gpu::copy_async(host.data(), d.data(), host.size(), gpu::CopyKind::device_to_host, stream_);
    gpu::synchronize(stream_);
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = load_as(t, host.data(), i);
    return v;
  }

  gpu::Stream stream_ = nullptr;
  std::unique_ptr<LtContext> ctx_;
  std::unique_ptr<LtLinear> linear_;
};

// The MLP's shapes in miniature: pre-activations spread over about [−5, 5], where the two GELU
// forms differ by up to 5e-4 (forward) and 2e-2 (derivative).
constexpr int64_t kM = 128, kN = 256, kK = 64;

TEST_P(LtGeluEpilogue, ForwardAndBackwardAgainstOurTanhGelu) {
  const DType t = GetParam();
  const size_t mn = size_t(kM * kN);
  // Forward, as the engine's fc: C[M,N] = gelu(A[M,K]·B[N,K]ᵀ + bias), the GELU input to aux.
  LinearGemm fwd{false, true, kM, kN, kK, t, true, false, LinearGelu::forward};
  const DeviceBuffer a = upload(t, size_t(kM * kK), 1, 1.0), b = upload(t, size_t(kN * kK), 2, 0.6),
                     bias = upload(t, size_t(kN), 3, 0.5);
  DeviceBuffer d(0, mn * dtype_size(t)), aux(0, mn * dtype_size(t)), ours(0, mn * dtype_size(t));
  linear_->run(fwd, a.data(), b.data(), d.data(), bias.data(), aux.data(), stream_);
  train::gelu_forward(t, ours.data(), aux.data(), mn, stream_);
  const std::vector<double> x = download(t, aux, mn), got = download(t, d, mn), mine = download(t, ours, mn);
  std::vector<double> tanh_ref(mn), erf_ref(mn);
  for (size_t i = 0; i < mn; ++i) {
    tanh_ref[i] = gelu_tanh(x[i]);
    erf_ref[i] = gelu_erf(x[i]);
  }
  const Distance to_tanh = distance(got, tanh_ref), to_erf = distance(got, erf_ref), to_ours = distance(got, mine);
  // The form is decided in fp32 only: the two forms differ by at most 5e-4 here, while bf16's own
  // rounding of the output (2^-9 relative, ~1e-2 at |x| = 5) is about 10× that, so a bf16 run
  // would pick a form by rounding noise. bf16 is held against our kernel alone.
  const bool decides = t == DType::f32;
  const bool tanh_form = to_tanh.mean < to_erf.mean;
  std::printf(
      "cuBLASLt GELU_AUX_BIAS (%s): mean/max |Δ| to tanh form %.3g/%.3g, to erf form %.3g/%.3g, to our kernel "
      "%.3g/%.3g: %s form\n",
      std::string(dtype_name(t)).c_str(), to_tanh.mean, to_tanh.max, to_erf.mean, to_erf.max, to_ours.mean, to_ours.max,
      decides ? (tanh_form ? "tanh" : "erf") : "not decided in bf16");
  if (decides) {
    RecordProperty("cublaslt_gelu_form", tanh_form ? "tanh" : "erf");
    EXPECT_TRUE(tanh_form) << "cuBLASLt's GELU is not GPT-2's tanh form: --lt-gelu must stay off";
  }
  EXPECT_EQ(beyond(got, mine, tolerance(t)), 0u) << "forward vs our gelu_forward kernel, max |Δ| " << to_ours.max;

  // Backward, as the engine's d(fc output): C[M,N] = gelu'(aux) · (dY[M,K]·W[K,N]).
  LinearGemm bwd{false, false, kM, kN, kK, t, false, false, LinearGelu::backward};
  LinearGemm plain = bwd;
  plain.gelu = LinearGelu::none;
  const DeviceBuffer dy = upload(t, size_t(kM * kK), 4, 1.0), w = upload(t, size_t(kK * kN), 5, 0.3);
  DeviceBuffer dd(0, mn * dtype_size(t)), product(0, mn * dtype_size(t));
  linear_->run(bwd, dy.data(), w.data(), dd.data(), nullptr, aux.data(), stream_);
  linear_->run(plain, dy.data(), w.data(), product.data(), nullptr, nullptr, stream_);
  train::gelu_backward(t, ours.data(), aux.data(), product.data(), mn, stream_);
  const std::vector<double> p = download(t, product, mn), dgot = download(t, dd, mn), dmine = download(t, ours, mn);
  for (size_t i = 0; i < mn; ++i) {
    tanh_ref[i] = dgelu_tanh(x[i]) * p[i];
    erf_ref[i] = dgelu_erf(x[i]) * p[i];
  }
  const Distance d_tanh = distance(dgot, tanh_ref), d_erf = distance(dgot, erf_ref), d_ours = distance(dgot, dmine);
  std::printf(
      "cuBLASLt DGELU (%s): mean/max |Δ| to tanh form %.3g/%.3g, to erf form %.3g/%.3g, to our kernel "
      "%.3g/%.3g: %s form\n",
      std::string(dtype_name(t)).c_str(), d_tanh.mean, d_tanh.max, d_erf.mean, d_erf.max, d_ours.mean, d_ours.max,
      decides ? (d_tanh.mean < d_erf.mean ? "tanh" : "erf") : "not decided in bf16");
  if (decides) {
    EXPECT_LT(d_tanh.mean, d_erf.mean) << "cuBLASLt's GELU derivative is not the tanh form's";
  }
  EXPECT_EQ(beyond(dgot, dmine, tolerance(t)), 0u) << "backward vs our gelu_backward kernel, max |Δ| " << d_ours.max;
}

INSTANTIATE_TEST_SUITE_P(Types, LtGeluEpilogue, ::testing::Values(DType::f32, DType::bf16),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace gcb::kernels
