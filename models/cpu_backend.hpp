// CpuBackend: the fp32 oracle (STYLE.md §4) — plain, obviously-correct loops in llm.c
// train_gpt2.c style, OpenMP over rows where it matters, matmul through cblas_sgemm when OpenBLAS
// is built in (cpu_matmul_openblas.cpp) and a blocked loop otherwise (cpu_matmul_naive.cpp).
// Every op completes before it returns; "backend memory" is host memory.
#pragma once

#include "models/backend.hpp"

namespace gcb::models {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void synchronize() override {}

  void fill(float* x, size_t n, float value) override;
  void copy(float* dst, const float* src, size_t n) override;
  void add(float* out, const float* a, const float* b, size_t n) override;
  void scale(float* x, float s, size_t n) override;
  void cast(void* dst, DType dst_type, const void* src, DType src_type, size_t n) override;
  void init_normal(float* x, size_t n, uint64_t seed, uint64_t stream, uint64_t first_index,
                   float std) override;
  void sum(float* out, const float* in, size_t n, bool accumulate) override;

  void gemm(const GemmArgs& a) override;
  void bias_backward(float* dbias, const float* dout, int M, int N) override;
  void layernorm_forward(float* out, float* mean, float* rstd, const float* x, const float* w,
                         const float* b, int rows, int C) override;
  void layernorm_backward(float* dx, float* dw, float* db, const float* dout, const float* x,
                          const float* w, const float* mean, const float* rstd, int rows,
                          int C) override;
  void gelu_forward(float* out, const float* x, size_t n) override;
  void gelu_backward(float* dx, const float* x, const float* dout, size_t n) override;
  void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C,
                         int NH) override;
  void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv,
                          const float* att, int B, int T, int C, int NH) override;
  void cross_entropy_forward(float* losses, float* probs, const float* logits,
                             const int32_t* targets, int rows, int V) override;
  void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                              int rows, int V, float dloss) override;
  void embedding_forward(float* out, const int32_t* tokens, const float* wte, const float* wpe,
                         int B, int T, int C) override;
  void embedding_backward(float* dwte, float* dwpe, const float* dout, const int32_t* tokens,
                          int B, int T, int C) override;
  void adamw(float* params, const float* grads, float* m, float* v, size_t n,
             const AdamWArgs& a) override;
  void embedding_forward_vocab(float* out, const int32_t* tokens, const float* wte, int v0,
                               int V, const float* wpe, int B, int T, int C) override;
  void embedding_backward_vocab(float* dwte, float* dwpe, const float* dout,
                                const int32_t* tokens, int v0, int V, int B, int T,
                                int C) override;
  void vocab_ce_max(float* rowmax, const float* logits, int rows, int V) override;
  void vocab_ce_sumexp(float* stats, const float* logits, const float* rowmax,
                       const int32_t* targets, int v0, int rows, int V) override;
  void vocab_ce_finish(float* losses, float* probs, const float* logits, const float* rowmax,
                       const float* stats, int rows, int V) override;
  void vocab_ce_backward(float* dlogits, const float* probs, const int32_t* targets, int v0,
                         int rows, int V, float dloss) override;

 protected:
  void* raw_alloc(size_t bytes) override;
  void raw_free(void* p) override;
};

// The matmul implementation linked in: "openblas" or "naive" (one of two source files).
const char* cpu_matmul_impl();
// C[M,N] = op(A)·op(B) + beta·C, row-major (no bias); defined in cpu_matmul_*.cpp.
void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B,
               float* C, float beta);

}  // namespace gcb::models
