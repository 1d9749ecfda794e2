// The compute Backend the training engines see (DESIGN.md "Backend"): memory allocated by
// category with current and peak bytes, and the ops a GPT-2 decoder needs. All ops are
// stream-ordered: they are enqueued on the backend's compute stream and may return before the
// result exists (CpuBackend completes them at once). Pointers are backend memory (host memory for
// CpuBackend, device memory for a CUDA backend); the host may touch it only through
// copy_to_host / copy_from_host, which synchronise. Engines read nothing back inside a step
// except the loss. Tensors are row-major fp32 unless a DType says otherwise.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "core/dtype.hpp"
#include "core/phase_timer.hpp"

namespace gcb::models {

enum class MemCategory : uint8_t {
  params,       // model weights (working copy used by forward/backward)
  grads,        // weight gradients (full buffers or shards)
  master,       // fp32 master weights (mixed precision; unused by the fp32 CPU backend)
  adam_m,       // AdamW first moment
  adam_v,       // AdamW second moment
  activations,  // saved forward activations and activation gradients
  comm,         // communication staging buffers
  workspace,    // scratch (token ids, loss accumulators, temporaries)
};
inline constexpr size_t kMemCategories = 8;
std::string_view mem_category_name(MemCategory c);

struct MemCounter {
  size_t current = 0;
  size_t peak = 0;
};
struct MemoryStats {
  std::array<MemCounter, kMemCategories> by_category{};
  MemCounter total;
  const MemCounter& operator[](MemCategory c) const { return by_category[static_cast<size_t>(c)]; }
};

class Backend;

// Owning handle to backend memory; frees (and updates the accounting) on destruction.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend* owner, void* ptr, size_t bytes, MemCategory cat)
      : owner_(owner), ptr_(ptr), bytes_(bytes), cat_(cat) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();
  void* data() const { return ptr_; }
  float* f32() const { return static_cast<float*>(ptr_); }
  size_t bytes() const { return bytes_; }
  MemCategory category() const { return cat_; }
  explicit operator bool() const { return ptr_ != nullptr; }

 private:
  Backend* owner_ = nullptr;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  MemCategory cat_ = MemCategory::workspace;
};

// Matrix product C[M,N] = op(A)[M,K] · op(B)[K,N] + beta·C (+ bias[N] broadcast over rows),
// row-major. op(A) = Aᵀ when trans_a (A stored [K,M]); op(B) = Bᵀ when trans_b (B stored [N,K]).
struct GemmArgs {
  bool trans_a = false;
  bool trans_b = false;
  int M = 0, N = 0, K = 0;
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
  float beta = 0.0f;            // 1 accumulates into C (gradient accumulation)
  const float* bias = nullptr;  // optional
};

struct AdamWArgs {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  int step = 1;  // 1-based, for bias correction
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // --- memory ------------------------------------------------------------------------------
  // Zero-initialised allocation of `bytes` in category `cat` (stream-ordered zeroing).
  Buffer alloc(MemCategory cat, size_t bytes);
  Buffer alloc_floats(MemCategory cat, size_t count) { return alloc(cat, count * sizeof(float)); }
  const MemoryStats& memory() const { return mem_; }
  void reset_peaks();
  // Synchronous copies between host memory and backend memory.
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  // Waits for all enqueued work.
  virtual void synchronize() = 0;
  // Cross-stream ordering around every collective an engine issues on backend memory: comm_begin()
  // makes the compute work enqueued so far visible to the communicator's stream (a CUDA backend
  // records an event that the comm stream waits on); comm_end() makes later compute wait for the
  // collective. Nothing blocks the host. Host backends complete every op at once: no-ops.
  // Together with stream-ordered raw_free this is what lets DP buckets overlap backward.
  virtual void comm_begin() {}
  virtual void comm_end() {}

  // --- element-wise ------------------------------------------------------------------------
  virtual void fill(float* x, size_t n, float value) = 0;
  virtual void copy(float* dst, const float* src, size_t n) = 0;
  virtual void add(float* out, const float* a, const float* b, size_t n) = 0;  // out = a + b
  virtual void scale(float* x, float s, size_t n) = 0;                         // x *= s
  // dst (dst_type) = src (src_type), round to nearest even; fp32, fp16, bf16.
  virtual void cast(void* dst, DType dst_type, const void* src, DType src_type, size_t n) = 0;
  // x[i] = std · normal(seed, stream, first_index + i): counter-based (models/init_rng.hpp), so
  // any slice of a tensor can be generated on its own and equals the same slice of the whole.
  virtual void init_normal(float* x, size_t n, uint64_t seed, uint64_t stream,
                           uint64_t first_index, float std) = 0;
  // out[0] (+)= Σ in[i] in index order (deterministic).
  virtual void sum(float* out, const float* in, size_t n, bool accumulate) = 0;

  // --- transformer ops (B·T = rows) ----------------------------------------------------------
  virtual void gemm(const GemmArgs& a) = 0;
  // dbias[N] += Σ_rows dout[M,N]
  virtual void bias_backward(float* dbias, const float* dout, int M, int N) = 0;
  // out = (x − mean)·rstd·w + b per row of C; saves mean[rows], rstd[rows]. eps = 1e-5.
  virtual void layernorm_forward(float* out, float* mean, float* rstd, const float* x,
                                 const float* w, const float* b, int rows, int C) = 0;
  // dx += …, dw += …, db += … (accumulating, so residual gradients add up).
  virtual void layernorm_backward(float* dx, float* dw, float* db, const float* dout,
                                  const float* x, const float* w, const float* mean,
                                  const float* rstd, int rows, int C) = 0;
  // GELU, tanh approximation (GPT-2).
  virtual void gelu_forward(float* out, const float* x, size_t n) = 0;
  virtual void gelu_backward(float* dx, const float* x, const float* dout, size_t n) = 0;  // dx =
  // Causal multi-head attention on fused qkv[B,T,3C] (q | k | v, heads contiguous in each):
  // out[B,T,C]; att[B,NH,T,T] keeps the softmax probabilities for backward.
  virtual void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C,
                                 int NH) = 0;
  // dqkv = (overwritten); datt: scratch [B,NH,T,T].
  virtual void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv,
                                  const float* att, int B, int T, int C, int NH) = 0;
  // losses[r] = −log softmax(logits[r])[targets[r]]; probs[rows,V] = softmax (kept for backward).
  virtual void cross_entropy_forward(float* losses, float* probs, const float* logits,
                                     const int32_t* targets, int rows, int V) = 0;
  // dlogits = (probs − onehot(target)) · dloss  (overwritten)
  virtual void cross_entropy_backward(float* dlogits, const float* probs, const int32_t* targets,
                                      int rows, int V, float dloss) = 0;
  // out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]
  virtual void embedding_forward(float* out, const int32_t* tokens, const float* wte,
                                 const float* wpe, int B, int T, int C) = 0;
  // dwte[tokens] += dout, dwpe[t] += dout (deterministic order)
  virtual void embedding_backward(float* dwte, float* dwpe, const float* dout,
                                  const int32_t* tokens, int B, int T, int C) = 0;
  // Decoupled weight decay (Loshchilov & Hutter): m,v updated, bias-corrected,
  // p −= lr·(m̂/(√v̂ + eps) + wd·p).
  virtual void adamw(float* params, const float* grads, float* m, float* v, size_t n,
                     const AdamWArgs& a) = 0;
  // --- tensor parallelism (Megatron vocabulary-parallel embedding and cross-entropy; Shoeybi et
  // al. 2019 §3; ../shared/reference/training.md §2). A rank holds vocabulary rows [v0, v0 + V)
  // of wte; tokens and targets outside that range contribute zero. The engine combines the
  // per-rank partial results with collectives between these ops.
  // out[b,t,:] = (v0 ≤ tok < v0+V ? wte[tok − v0,:] : 0) + (wpe ? wpe[t,:] : 0)
  virtual void embedding_forward_vocab(float* out, const int32_t* tokens, const float* wte,
                                       int v0, int V, const float* wpe, int B, int T, int C) = 0;
  // dwte[tok − v0] += dout for tokens in range; dwpe[t] += dout when dwpe (deterministic order).
  virtual void embedding_backward_vocab(float* dwte, float* dwpe, const float* dout,
                                        const int32_t* tokens, int v0, int V, int B, int T,
                                        int C) = 0;
  // Local pass 1: rowmax[r] = max_i logits[r,i] (then all-reduce max over the tp group).
  virtual void vocab_ce_max(float* rowmax, const float* logits, int rows, int V) = 0;
  // Local pass 2: stats[r] = {Σ_i exp(logits[r,i] − rowmax[r]), logits[r, target − v0] or 0}
  // (then all-reduce sum over the tp group).
  virtual void vocab_ce_sumexp(float* stats, const float* logits, const float* rowmax,
                               const int32_t* targets, int v0, int rows, int V) = 0;
  // losses[r] = log(sumexp) − (target logit − rowmax); probs = exp(logits − rowmax)/sumexp
  // (probs may alias logits).
  virtual void vocab_ce_finish(float* losses, float* probs, const float* logits,
                               const float* rowmax, const float* stats, int rows, int V) = 0;
  // dlogits = (probs − onehot(target − v0)) · dloss (may alias probs).
  virtual void vocab_ce_backward(float* dlogits, const float* probs, const int32_t* targets,
                                 int v0, int rows, int V, float dloss) = 0;

  // Optional phase split (core/phase_timer.hpp): backends report the inclusive span "matmul"
  // around gemm; engines push forward / backward / optimizer / comm:<kind> phases. Null = off.
  void set_phase_timer(PhaseTimer* t) { phases_ = t; }
  PhaseTimer* phase_timer() const { return phases_; }

 protected:
  // Raw allocation hooks (zeroed memory); alloc()/Buffer do the accounting. Both are
  // stream-ordered on a device backend (cudaMallocAsync/cudaFreeAsync on the compute stream), so
  // ZeRO-3 may free a gathered unit right after enqueuing the last op that reads it.
  virtual void* raw_alloc(size_t bytes) = 0;
  virtual void raw_free(void* p) = 0;

 private:
  friend class Buffer;
  void release(void* p, size_t bytes, MemCategory cat);
  MemoryStats mem_;
  PhaseTimer* phases_ = nullptr;
};

}  // namespace gcb::models
