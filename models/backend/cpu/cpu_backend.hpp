// CpuBackend: the oracle — plain, obviously-correct fp32 loops in llm.c
// train_gpt2.c style, OpenMP over rows where it matters, matmul through cblas_sgemm when OpenBLAS
// is built in and a blocked loop otherwise (both in kernels/gemm/cpu_gemm.hpp, via cpu_matmul.cpp).
// bf16 and fp16 tensors are stored for real (2 bytes per element, so the memory accounting is the
// device's) and emulated exactly: every op widens its inputs, computes in fp32 and rounds each
// stored value once to nearest even (cpu_fp32_io.hpp). Every op completes before it returns;
// "backend memory" is host memory.
#pragma once

#include "models/backend/backend.hpp"

namespace gcb::models {

class CpuBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu"; }
  MemorySpace memory_space() const override { return MemorySpace::host; }
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void synchronize() override {}

  void fill(View x, size_t n, float value) override;
  void copy(View dst, View src, size_t n) override;
  void add(View out, View a, View b, size_t n) override;
  void scale(View x, double s, size_t n) override;
  void init_normal(View x, size_t n, uint64_t seed, uint64_t stream, uint64_t first_index, float std) override;
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
  void cross_entropy_backward(View dlogits, View probs, const int32_t* targets, int v0, int rows, int V,
                              float dloss) override;
  void adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) override;

 protected:
  void* raw_alloc(size_t bytes, MemCategory cat, AllocInit init) override;
  void raw_free(void* p) override;
};

// The matmul implementation linked in: "openblas" or "naive" (kernels::cpu_sgemm_impl).
const char* cpu_matmul_impl();
// C[M,N] = op(A)·op(B) + beta·C, row-major (no bias): kernels::cpu_sgemm.
void cpu_sgemm(bool trans_a, bool trans_b, int M, int N, int K, const float* A, const float* B, float* C, float beta);
// Threads the matmul library may use (OpenBLAS: openblas_set_num_threads; the naive loop follows
// OpenMP). OpenBLAS splits work differently for different thread counts, so its results are
// bitwise reproducible only at a fixed count: the training harness pins it (docs/readme-train.md
// "Determinism"). 0 = the library's default.
void set_cpu_matmul_threads(int threads);
int cpu_matmul_threads();

}  // namespace gcb::models
