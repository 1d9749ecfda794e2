// CudaBackend: the fast path (docs/design.md "Key abstractions", Backend), proved right by the CPU oracle op by op
// (tests/models/backend/test_cuda_backend.cpp, label gpu). Parameters, gradients and activations in bf16
// (or fp32 with --precision fp32), fp32 master weights and Adam moments, as the engine's precision
// policy allocates them; every op runs on one compute stream:
//   gemm            cuBLASLt (kernels/gemm/lt_linear.hpp), fp32 accumulation, bias epilogue; the
//                   MLP's GELU in its epilogue only with lt_gelu (unvalidated, off by default)
//   attention       our flash kernels or cuDNN SDPA on the head-major layout (--attn, default:
//                   the faster measured, one choice agreed by every rank before the first step:
//                   attention_agreement.hpp), or the exact fp32 row kernel (attention_choice.hpp)
//   everything else kernels/train (LayerNorm, GELU, cross-entropy with the online max/sum pass,
//                   deterministic embedding backward, multi-tensor AdamW, casts, sums)
// Memory, ordering against communicators, copies and the event timeline are DeviceBackend's
// (device_backend.hpp). init_normal runs on the host (the same counter-based values as the CPU
// oracle, bit for bit) and is uploaded: it runs once, at start-up. Built with CUDA and cuBLASLt
// only; compiles, unvalidated: no GPU has run it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/attention/attention_shape.hpp"
#include "models/model/attention_choice.hpp"
#include "models/backend/device/device_backend.hpp"

namespace gcb::kernels {
class LtContext;
class LtLinear;
}  // namespace gcb::kernels

namespace gcb::models {

struct CudaBackendOptions {
  int device = 0;
  AttentionRequest attn = AttentionRequest::automatic;
  // The MLP's GELU in cuBLASLt's epilogue (GemmGelu; kernels/gemm/lt_linear.hpp LinearGelu)
  // instead of our tanh-GELU kernels. Off by default: cuBLASLt's GELU is the tanh form
  // (test_lt_gelu_epilogue on an H200, 2026-11-27), but its speed has not been measured.
  bool lt_gelu = false;
  // Every GPU of this process (rank threads), to which this device's memory pool grants access
  // (pool_access.hpp); empty: none.
  std::vector<int> process_devices;
};

namespace detail {
// Base-from-member: the device (its DeviceOps and compute stream) exists before DeviceBackend.
struct CudaDevice {
  CudaDevice(int device, const std::vector<int>& process_devices);
  ~CudaDevice();
  std::unique_ptr<DeviceOps> device_ops;
  DeviceStream device_stream = nullptr;
};
}  // namespace detail

class CudaBackend final : private detail::CudaDevice, public DeviceBackend {
 public:
  explicit CudaBackend(const CudaBackendOptions& o);
  ~CudaBackend() override;

  std::string_view name() const override { return "cuda"; }
  BackendNotes notes() const override;

  void fill(View x, size_t n, float value) override;
  void copy(View dst, View src, size_t n) override;
  void add(View out, View a, View b, size_t n) override;
  void scale(View x, double s, size_t n) override;
  void init_normal(View x, size_t n, uint64_t seed, uint64_t rng_stream, uint64_t first_index, float std) override;
  void sum(View out, View in, size_t n, bool accumulate) override;
  void sum_squares(View out, View in, size_t n, bool accumulate) override;

  void gemm(const GemmArgs& a) override;
  void bias_backward(View dbias, View dout, int M, int N) override;
  void layernorm_forward(View out, float* mean, float* rstd, View x, View w, View b, int rows, int C) override;
  void layernorm_backward(View dx, View dw, View db, View dout, View x, View w, const float* mean, const float* rstd,
                          int rows, int C) override;
  void gelu_forward(View out, View x, size_t n) override;
  void gelu_backward(View dx, View x, View dout, size_t n) override;
  void attention_forward(View out, float* lse, View qkv, int B, int T, int C, int NH) override;
  void attention_backward(View dqkv, View dout, View qkv, View out, const float* lse, int B, int T, int C,
                          int NH) override;
  void embedding_forward(View out, const int32_t* tokens, View wte, int v0, int V, View wpe, int B, int T,
                         int C) override;
  void embedding_backward(View dwte, View dwpe, View dout, const int32_t* tokens, int v0, int V, int B, int T,
                          int C) override;
  void cross_entropy_max(float* rowmax, View logits, int rows, int V, int valid) override;
  void cross_entropy_sums(float* stats, View logits, const float* rowmax, const int32_t* targets, int v0, int rows,
                          int V, int valid) override;
  void cross_entropy_finish(float* losses, View probs, View logits, const float* rowmax, const float* stats, int rows,
                            int V, int valid) override;
  void cross_entropy_finish_backward(float* losses, View dlogits, View logits, const float* rowmax, const float* stats,
                                     const int32_t* targets, int v0, int rows, int V, int valid, float dloss) override;
  void cross_entropy_backward(View dlogits, View probs, const int32_t* targets, int v0, int rows, int V,
                              float dloss) override;
  void adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) override;
  void adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a) override;
  std::optional<AttentionTimes> measure_attention(DType t, int B, int T, int C, int NH) override;
  void adopt_attention(DType t, int B, int T, int C, int NH, const AttentionTimes& agreed, int ranks) override;

 private:
  // One attention problem (B, T, NH, head dim) and its kernels (cuda_backend_attention.cpp).
  using AttnKey = std::tuple<int, int, int, int>;
  struct AttnPlan {
    kernels::attn::AttnShape shape;
    AttentionChoice choice;
    // The rows that train and were made for this problem, and why each cannot run ("" = it can).
    std::map<AttnImplId, std::unique_ptr<kernels::attn::AttnKernel>> kernels;
    std::map<AttnImplId, std::string> unsupported;
  };
  AttnPlan& attention_plan(DType t, int B, int T, int C, int NH);
  AttnPlan& ready_plan(DType t, int B, int T, int C, int NH);
  AttentionTimes time_attention(AttnPlan& p, DType t);
  void note_choice(const AttnPlan& p);

  CudaBackendOptions options_;
  std::string device_name_;
  std::unique_ptr<kernels::LtContext> lt_;
  std::unique_ptr<kernels::LtLinear> linear_;
  std::map<AttnKey, std::unique_ptr<AttnPlan>> attn_;
  std::string attn_note_;
  std::optional<AttentionTimes> own_attn_times_, agreed_attn_times_;  // --attn auto: this rank's, the run's
  // The max pass's online {max, Σexp} per row, valid for the logits it read (cross_entropy_sums).
  Buffer online_;
  const void* online_logits_ = nullptr;
  int online_rows_ = 0, online_V_ = 0, online_valid_ = 0;
};

}  // namespace gcb::models
