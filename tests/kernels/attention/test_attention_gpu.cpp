// Our CUDA attention kernels (flash_fwd.cu, flash_bwd.cu), the unfused baseline and cuDNN SDPA (fwd, bwd) against the
// FP64 reference on random inputs, causal and not, both head dims and both 16-bit types, with
// sequences that fit one block (1, 64, 100), end inside a second one (200) or span several with
// a ragged end (333 = 2·128 + 77 query rows; 5·64 + 13 or 2·128 + 77 keys; flash_tiling.hpp). Outputs are poisoned with
// 0xFF bytes (NaN in fp16, bf16 and fp32) before each run, so an element the kernel never writes fails the check. Needs
// a CUDA device; without one every test skips with the reason.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "kernels/attention/attention_check.hpp"
#include "kernels/attention/cudnn_sdpa.hpp"
#include "kernels/attention/flash_attn.hpp"

namespace gcb::kernels::attn {
namespace {

class Device {
 public:
  explicit Device(size_t bytes) : bytes_(bytes) {
    CUDA_CHECK(cudaMalloc(&p_, bytes));
    poison();
  }
  ~Device() { cudaFree(p_); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  void* get() const { return p_; }
  void poison() const { CUDA_CHECK(cudaMemset(p_, 0xFF, bytes_)); }

 private:
  void* p_ = nullptr;
  size_t bytes_;
};

// Host values rounded to `t`, their FP64 copy, and the device array.
struct Tensor {
  Tensor(DType t, const std::vector<float>& x) : dev(x.size() * dtype_size(t)), exact(x.size()) {
    std::vector<unsigned char> raw(x.size() * dtype_size(t));
    for (size_t i = 0; i < x.size(); ++i) {
      store_as(t, raw.data(), i, x[i]);
      exact[i] = load_as(t, raw.data(), i);
    }
    CUDA_CHECK(cudaMemcpy(dev.get(), raw.data(), raw.size(), cudaMemcpyHostToDevice));
  }
  Device dev;
  std::vector<double> exact;
};

std::vector<float> download(DType t, const void* p, size_t n) {
  std::vector<unsigned char> raw(n * dtype_size(t));
  CUDA_CHECK(cudaMemcpy(raw.data(), p, raw.size(), cudaMemcpyDeviceToHost));
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(load_as(t, raw.data(), i));
  return x;
}

using Param = std::tuple<DType, int /*head_dim*/, int /*seq*/, bool /*causal*/>;

class AttentionGpu : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0)
      GTEST_SKIP() << "no CUDA device: " << (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
    const auto [t, d, s, causal] = GetParam();
    type = t;
    shape = AttnShape{2, 3, s, d, causal};
    const size_t e = shape.elements();
    q = std::make_unique<Tensor>(t, random_normal(e, 1));
    k = std::make_unique<Tensor>(t, random_normal(e, 2));
    v = std::make_unique<Tensor>(t, random_normal(e, 3));
    ref_o.resize(e);
    ref_lse.resize(shape.rows());
    naive_forward(shape, q->exact.data(), k->exact.data(), v->exact.data(), ref_o.data(), ref_lse.data());
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream) cudaStreamDestroy(stream);
  }
  DType type = DType::f16;
  AttnShape shape;
  std::unique_ptr<Tensor> q, k, v;
  std::vector<double> ref_o, ref_lse;
  cudaStream_t stream = nullptr;
};

TEST_P(AttentionGpu, ForwardMatchesReference) {
  const size_t e = shape.elements();
  Device o(e * dtype_size(type)), lse(shape.rows() * sizeof(float));
  flash_forward(type, shape, q->dev.get(), k->dev.get(), v->dev.get(), o.get(), static_cast<float*>(lse.get()), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  const auto got = download(type, o.get(), e);
  const auto got_lse = download(DType::f32, lse.get(), shape.rows());
  EXPECT_EQ(check_error("O", relative_error(ref_o.data(), got.data(), e), attention_tolerance(type, false)), "");
  // LSE is FP32 from FP32 sums of exact-input dot products: 1e-3 absolute on values of order 1-10.
  const ErrorStats el = compare(ref_lse.data(), got_lse.data(), shape.rows());
  EXPECT_EQ(el.non_finite, 0u);
  EXPECT_LT(el.max_abs, 1e-3) << "LSE row " << el.worst;
}

TEST_P(AttentionGpu, BackwardMatchesReference) {
  const size_t e = shape.elements();
  Tensor d_o(type, random_normal(e, 4));
  Device o(e * dtype_size(type)), lse(shape.rows() * sizeof(float));
  flash_forward(type, shape, q->dev.get(), k->dev.get(), v->dev.get(), o.get(), static_cast<float*>(lse.get()), stream);
  Device dq(e * dtype_size(type)), dk(e * dtype_size(type)), dv(e * dtype_size(type)),
      ws(flash_backward_workspace_bytes(shape));
  flash_backward(type, shape, q->dev.get(), k->dev.get(), v->dev.get(), o.get(), d_o.dev.get(),
                 static_cast<const float*>(lse.get()), dq.get(), dk.get(), dv.get(), ws.get(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> rq(e), rk(e), rv(e);
  naive_backward(shape, q->exact.data(), k->exact.data(), v->exact.data(), d_o.exact.data(), rq.data(), rk.data(),
                 rv.data());
  const Tolerance tol = attention_tolerance(type, true);
  EXPECT_EQ(check_error("dQ", relative_error(rq.data(), download(type, dq.get(), e).data(), e), tol), "");
  EXPECT_EQ(check_error("dK", relative_error(rk.data(), download(type, dk.get(), e).data(), e), tol), "");
  EXPECT_EQ(check_error("dV", relative_error(rv.data(), download(type, dv.get(), e).data(), e), tol), "");
}

TEST_P(AttentionGpu, UnfusedForwardMatchesReference) {
  const size_t e = shape.elements();
  Device o(e * dtype_size(type)), scores(unfused_scores_bytes(type, shape));
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  unfused_forward(type, shape, q->dev.get(), k->dev.get(), v->dev.get(), o.get(), scores.get(), handle, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  cublasDestroy(handle);
  // S is stored in 16 bits before the softmax (as PyTorch's unfused path does): one more rounding
  // of the logits, which are of order 1-4, so the forward tolerance doubled.
  Tolerance tol = attention_tolerance(type, false);
  tol.rel_rmse *= 2;
  tol.rel_max *= 2;
  EXPECT_EQ(check_error("O", relative_error(ref_o.data(), download(type, o.get(), e).data(), e), tol), "");
}

// Route A (non-causal) or Route B (causal, or where Route A has no engine); O and LSE poisoned.
TEST_P(AttentionGpu, CudnnForwardMatchesReference) {
  CudnnSdpaForward sdpa(type, shape, stream);
  if (!sdpa.unsupported().empty()) GTEST_SKIP() << "cuDNN: " << sdpa.unsupported();
  const size_t e = shape.elements();
  Device o(e * dtype_size(type)), lse(shape.rows() * sizeof(float)), ws(std::max<size_t>(sdpa.workspace_bytes(), 16));
  sdpa.run(q->dev.get(), k->dev.get(), v->dev.get(), o.get(), static_cast<float*>(lse.get()), ws.get());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_EQ(check_error("O", relative_error(ref_o.data(), download(type, o.get(), e).data(), e),
                        attention_tolerance(type, false)),
            "");
  const auto got_lse = download(DType::f32, lse.get(), shape.rows());
  EXPECT_LT(compare(ref_lse.data(), got_lse.data(), shape.rows()).max_abs, 1e-3);  // as for ours
}

// Route B backward (kernels/attention/sdpa_graph.hpp) on cuDNN's own forward O and Stats; dQ, dK, dV poisoned
// first (Device's constructor), so an element cuDNN never writes fails the check.
TEST_P(AttentionGpu, CudnnBackwardMatchesReference) {
  CudnnSdpaForward fwd(type, shape, stream);
  if (!fwd.unsupported().empty()) GTEST_SKIP() << "cuDNN forward: " << fwd.unsupported();
  CudnnSdpaBackward bwd(type, shape, stream);
  if (!bwd.unsupported().empty()) GTEST_SKIP() << "cuDNN backward: " << bwd.unsupported();
  const size_t e = shape.elements();
  Tensor d_o(type, random_normal(e, 4));
  Device o(e * dtype_size(type)), lse(shape.rows() * sizeof(float)),
      ws(std::max<size_t>(std::max(fwd.workspace_bytes(), bwd.workspace_bytes()), 16));
  fwd.run(q->dev.get(), k->dev.get(), v->dev.get(), o.get(), static_cast<float*>(lse.get()), ws.get());
  Device dq(e * dtype_size(type)), dk(e * dtype_size(type)), dv(e * dtype_size(type));
  bwd.run(q->dev.get(), k->dev.get(), v->dev.get(), o.get(), d_o.dev.get(), static_cast<const float*>(lse.get()),
          dq.get(), dk.get(), dv.get(), ws.get());
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> rq(e), rk(e), rv(e);
  naive_backward(shape, q->exact.data(), k->exact.data(), v->exact.data(), d_o.exact.data(), rq.data(), rk.data(),
                 rv.data());
  const Tolerance tol = attention_tolerance(type, true);  // the same thresholds as our kernels
  EXPECT_EQ(check_error("dQ", relative_error(rq.data(), download(type, dq.get(), e).data(), e), tol), "");
  EXPECT_EQ(check_error("dK", relative_error(rk.data(), download(type, dk.get(), e).data(), e), tol), "");
  EXPECT_EQ(check_error("dV", relative_error(rv.data(), download(type, dv.get(), e).data(), e), tol), "");
}

// Causal masking must matter: the causal output of a non-causal problem's inputs differs from
// the non-causal reference by far more than the tolerance (the check can fail).
TEST_P(AttentionGpu, CausalFlagChangesTheOutput) {
  if (shape.seq < 2) GTEST_SKIP() << "s = 1: the causal mask removes nothing";
  const size_t e = shape.elements();
  AttnShape flipped = shape;
  flipped.causal = !shape.causal;
  Device o(e * dtype_size(type)), lse(shape.rows() * sizeof(float));
  flash_forward(type, flipped, q->dev.get(), k->dev.get(), v->dev.get(), o.get(), static_cast<float*>(lse.get()),
                stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  EXPECT_NE(check_error("O", relative_error(ref_o.data(), download(type, o.get(), e).data(), e),
                        attention_tolerance(type, false)),
            "");
}

std::string param_name(const ::testing::TestParamInfo<Param>& p) {
  const DType t = std::get<0>(p.param);
  const int d = std::get<1>(p.param), s = std::get<2>(p.param);
  return std::string(dtype_name(t)) + "_d" + std::to_string(d) + "_s" + std::to_string(s) +
         (std::get<3>(p.param) ? "_causal" : "_full");
}

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionGpu,
                         ::testing::Combine(::testing::Values(DType::f16, DType::bf16), ::testing::Values(64, 128),
                                            ::testing::Values(1, 64, 100, 200, 333), ::testing::Bool()),
                         param_name);

}  // namespace
}  // namespace gcb::kernels::attn
