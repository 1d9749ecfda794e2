// The compute Backend the training engine sees (docs/design.md "Backend"): memory allocated by category
// and element type with current and peak bytes, and the ops a GPT-2 decoder needs. All ops are
// stream-ordered: they are enqueued on the backend's compute stream and may return before the
// result exists (CpuBackend completes them at once). Memory is the backend's (host memory for
// CpuBackend, device memory for a CUDA backend); the host touches it only through copy_to_host /
// copy_from_host, which synchronise. The engine reads nothing back inside a step except the loss.
//
// Tensors carry their element type (View): parameters, gradients and activations may be fp32 or
// bf16 (fp16 where a backend supports it); LayerNorm statistics, attention log-sum-exps, per-token
// losses, fp32 master weights and Adam moments are always fp32 (plain float*). Every op computes
// in fp32 and rounds each value it stores to its destination type once, to nearest even; an op
// that accumulates (+=) reads the destination, adds in fp32 and rounds once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/buffer.hpp"
#include "core/dtype.hpp"
#include "core/phase_timer.hpp"
#include "core/timeline.hpp"
#include "models/model/adamw_args.hpp"
#include "models/model/attention_choice.hpp"
#include "models/model/mem_category.hpp"

namespace gcb {
class Communicator;
}

namespace gcb::models {

// What a new allocation holds. `zeros` for memory that is read before it is written: an
// accumulator (a gemm with beta = 1, a `+=` op, Adam's moments) or a region some writer leaves
// out (the padding of a unit). `unset` where every element is written before it is read: a
// device backend then enqueues no memset (a GPU allocator hands out whatever the memory last
// held; on the fake device, tests/models/backend/fake_device.hpp, NaN), the CPU oracle zeroes anyway.
enum class AllocInit : uint8_t { zeros, unset };

struct MemCounter {
  size_t current = 0;
  size_t peak = 0;
};
struct MemoryStats {
  std::array<MemCounter, kMemCategories> by_category{};
  MemCounter total;
  const MemCounter& operator[](MemCategory c) const { return by_category[static_cast<size_t>(c)]; }
  void add(MemCategory c, size_t bytes);  // current += bytes; peaks follow
  void remove(MemCategory c, size_t bytes);
  void reset_peaks();  // peak = current
};

// A typed, non-owning view of backend memory: an address and the element type stored there.
// Element counts come from each op's shape arguments.
struct View {
  void* data = nullptr;
  DType dtype = DType::f32;

  // The view `elements` elements further on.
  View at(size_t elements) const { return {static_cast<std::byte*>(data) + elements * dtype_size(dtype), dtype}; }
  explicit operator bool() const { return data != nullptr; }
};

// What a backend chose and measured that belongs beside a run's figures: the device, the kernels
// it picked and why, the device allocator's own counters. Empty for the CPU oracle.
struct BackendNotes {
  std::vector<std::pair<std::string, std::string>> text;
  std::vector<std::pair<std::string, double>> figures;
};

class Backend;

// Owning handle to backend memory of `count` elements of one type; frees (and updates the
// accounting) on destruction.
class Buffer {
 public:
  Buffer() = default;
  Buffer(Backend* owner, View view, size_t count, MemCategory cat, bool host = false)
      : owner_(owner), view_(view), count_(count), cat_(cat), host_(host) {}
  Buffer(Buffer&& o) noexcept { *this = std::move(o); }
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { reset(); }

  void reset();
  View view() const { return view_; }
  View at(size_t elements) const { return view_.at(elements); }
  void* data() const { return view_.data; }
  // The memory as fp32 / int32; gcb::Fault when the buffer holds another type.
  float* f32() const;
  int32_t* i32() const;
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * dtype_size(view_.dtype); }
  MemCategory category() const { return cat_; }
  bool host() const { return host_; }  // Backend::alloc_host memory
  explicit operator bool() const { return view_.data != nullptr; }

 private:
  Backend* owner_ = nullptr;
  View view_{};
  size_t count_ = 0;
  MemCategory cat_ = MemCategory::workspace;
  bool host_ = false;
};

// A GELU (tanh form, GPT-2) on a matrix product, which a backend may fuse into its GEMM's
// epilogue (cuBLASLt's GELU_AUX / DGELU, llm.c's fused MLP):
//   forward:  gelu_aux = product (+ bias), C = gelu(gelu_aux)
//   backward: C = gelu'(gelu_aux) · product, gelu_aux the forward's GELU input
// Both with beta = 0. Unfused (Backend::gemm_then_gelu), it is the GEMM then gelu_forward /
// gelu_backward, exactly the ops and roundings of the CPU oracle.
enum class GemmGelu : uint8_t { none, forward, backward };

// Matrix product C[M,N] = op(A)[M,K] · op(B)[K,N] + beta·C (+ bias[N] broadcast over rows),
// row-major, accumulated in fp32. op(A) = Aᵀ when trans_a (A stored [K,M]); op(B) = Bᵀ when
// trans_b (B stored [N,K]). Optionally a GELU on the product (GemmGelu).
struct GemmArgs {
  bool trans_a = false;
  bool trans_b = false;
  int M = 0, N = 0, K = 0;
  View A, B, C;
  float beta = 0.0f;  // 1 accumulates into C (gradient accumulation)
  View bias{};        // optional
  GemmGelu gelu = GemmGelu::none;
  View gelu_aux{};  // [M,N], C's type: the GELU input (written by forward, read by backward)
};

// One tensor of an optimizer step over several (Backend::adamw_multi): what adamw takes. decay:
// whether AdamWArgs::weight_decay applies to these elements (the optimizer's parameter groups:
// matrices and embeddings decay, biases and LayerNorm parameters not; train_options.hpp).
struct AdamWBuffers {
  View params, grads;
  float* m = nullptr;
  float* v = nullptr;
  float* master = nullptr;
  size_t n = 0;
  bool decay = true;
};
// The arguments AdamW takes for tensor x: `a`, with weight decay 0 where x does not decay.
inline AdamWArgs adamw_args_for(const AdamWBuffers& x, AdamWArgs a) {
  if (!x.decay) a.weight_decay = 0.0f;
  return a;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Where this backend's memory lives; the engine refuses communicators that move another kind.
  virtual MemorySpace memory_space() const = 0;

  // --- memory ------------------------------------------------------------------------------
  // Allocation of `count` elements of `dtype` in category `cat`, zeroed unless `init` says the
  // caller writes every element before reading it (AllocInit).
  Buffer alloc(MemCategory cat, DType dtype, size_t count, AllocInit init = AllocInit::zeros);
  const MemoryStats& memory() const { return mem_; }
  // Zeroed host memory the host computes on (ZeRO-Offload's optimizer states, model_states.hpp),
  // page-locked on a device backend so that copies to and from it run at the link's full rate;
  // counted per category in host_memory(), apart from memory(). On the CPU oracle it is plain host
  // memory like the rest, kept apart only in the accounting.
  Buffer alloc_host(MemCategory cat, DType dtype, size_t count);
  const MemoryStats& host_memory() const { return host_mem_; }
  // The bytes the device allocator actually took for the allocations of each category, measured
  // at each allocation (DeviceBackend); nullptr where the memory is not a device's (the CPU oracle).
  virtual const MemoryStats* device_memory() const { return nullptr; }
  virtual void reset_peaks();
  // Synchronous copies between host memory and backend memory.
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  // Copies between backend memory and alloc_host memory enqueued in order with the compute work
  // (a device backend: on its compute stream, from or to page-locked memory), returning at once:
  // the host reads a download's destination, or writes an upload's source again, only after
  // synchronize() (or a synchronous copy). By default the synchronous copies above.
  virtual void download_async(void* host_dst, const void* src, size_t bytes) { copy_to_host(host_dst, src, bytes); }
  virtual void upload_async(void* dst, const void* host_src, size_t bytes) { copy_from_host(dst, host_src, bytes); }
  // Waits for all enqueued work.
  virtual void synchronize() = 0;
  // Ordering around every collective on backend memory, against the communicator that runs it:
  // comm_begin(c) makes the compute work enqueued so far visible to c (a CUDA backend records an
  // event that c's stream waits on, or synchronises when c.stream() is null because c reads the
  // memory on the calling thread); comm_end(c) makes later compute wait for what c has enqueued.
  // Nothing blocks the host otherwise. A backend whose ops complete at once (CpuBackend) does
  // nothing. Together with stream-ordered raw_free this lets gradient buckets overlap backward.
  virtual void comm_begin(Communicator& c) { (void)c; }
  virtual void comm_end(Communicator& c) { (void)c; }

  // --- element-wise ------------------------------------------------------------------------
  virtual void fill(View x, size_t n, float value) = 0;
  // dst = src, converting (round to nearest even) when the types differ.
  virtual void copy(View dst, View src, size_t n) = 0;
  virtual void add(View out, View a, View b, size_t n) = 0;  // out = a + b
  virtual void scale(View x, double s, size_t n) = 0;        // x *= s (in x's type)
  // x[i] = std · normal(seed, stream, first_index + i): counter-based (models/model/init_rng.hpp), so
  // any slice of a tensor can be generated on its own and equals the same slice of the whole.
  virtual void init_normal(View x, size_t n, uint64_t seed, uint64_t stream, uint64_t first_index, float std) = 0;
  // out[0] (+)= Σ in[i], summed in double in index order (deterministic); out is fp32 or fp64.
  virtual void sum(View out, View in, size_t n, bool accumulate) = 0;
  // out[0] (+)= Σ in[i]², in double (out fp64; in fp32 or bf16), in an order that depends on n only
  // (deterministic): the gradient norm of clipping (models/engine/model_states.hpp).
  virtual void sum_squares(View out, View in, size_t n, bool accumulate) = 0;

  // --- transformer ops (B·T = rows) ----------------------------------------------------------
  virtual void gemm(const GemmArgs& a) = 0;
  // dbias[N] += Σ_rows dout[M,N]
  virtual void bias_backward(View dbias, View dout, int M, int N) = 0;
  // out = (x − mean)·rstd·w + b per row of C; saves mean[rows], rstd[rows]. eps = 1e-5.
  virtual void layernorm_forward(View out, float* mean, float* rstd, View x, View w, View b, int rows, int C) = 0;
  // dx += …, dw += …, db += … (accumulating, so residual gradients add up).
  virtual void layernorm_backward(View dx, View dw, View db, View dout, View x, View w, const float* mean,
                                  const float* rstd, int rows, int C) = 0;
  // GELU, tanh approximation (GPT-2).
  virtual void gelu_forward(View out, View x, size_t n) = 0;
  virtual void gelu_backward(View dx, View x, View dout, size_t n) = 0;  // dx = gelu'(x)·dout
  // Causal multi-head attention, FlashAttention-2 (Dao 2023, Alg. 1): from the fused
  // qkv[B,T,3C] (q | k | v, heads contiguous in each) to out[B,T,C] and lse[B,NH,T], the natural
  // log of each softmax row's normaliser. No [T,T] matrix outlives the op.
  virtual void attention_forward(View out, float* lse, View qkv, int B, int T, int C, int NH) = 0;
  // dqkv (overwritten) from dout and the forward's qkv, out and lse; the probabilities are
  // recomputed blockwise (FA2 Alg. 2). Scratch it needs (D = rowsum(dO∘O), an fp32 dQ
  // accumulator) the backend allocates itself, in category workspace.
  virtual void attention_backward(View dqkv, View dout, View qkv, View out, const float* lse, int B, int T, int C,
                                  int NH) = 0;
  // Embedding of one vocabulary shard (Megatron's vocabulary-parallel embedding, Shoeybi et al.
  // 2019 §3; the whole vocabulary when v0 = 0 and V = vocab): rows [v0, v0 + V) of wte.
  // out[b,t,:] = (v0 ≤ tok < v0+V ? wte[tok − v0,:] : 0) + (wpe ? wpe[t,:] : 0)
  virtual void embedding_forward(View out, const int32_t* tokens, View wte, int v0, int V, View wpe, int B, int T,
                                 int C) = 0;
  // dwte[tok − v0] += dout for tokens in the shard; dwpe[t] += dout when dwpe (deterministic).
  virtual void embedding_backward(View dwte, View dwpe, View dout, const int32_t* tokens, int v0, int V, int B, int T,
                                  int C) = 0;
  // Softmax cross-entropy over a vocabulary shard of V logits per row (V is the row stride), in
  // three local passes between which the engine combines the shards (at one shard, nothing to
  // combine). Columns [valid, V) are vocabulary padding (config.hpp padded_vocab): left out of
  // the max and Σexp and given probability 0, so they change neither the loss nor any gradient.
  // 1. rowmax[r] = max_{i<valid} logits[r,i] (−inf when valid = 0)   (then all-reduce max)
  virtual void cross_entropy_max(float* rowmax, View logits, int rows, int V, int valid) = 0;
  // 2. stats[r] = {Σ_{i<valid} exp(logits[r,i] − rowmax[r]), logits[r, target − v0] or 0}
  //    (then all-reduce sum)
  virtual void cross_entropy_sums(float* stats, View logits, const float* rowmax, const int32_t* targets, int v0,
                                  int rows, int V, int valid) = 0;
  // 3. losses[r] = log(Σexp) − (target logit − rowmax), the log-sum-exp form (finite however
  //    wrong the prediction); probs = exp(logits − rowmax)/Σexp below valid, 0 from valid on
  //    (probs may alias logits).
  virtual void cross_entropy_finish(float* losses, View probs, View logits, const float* rowmax, const float* stats,
                                    int rows, int V, int valid) = 0;
  // 3 and 4 at once: losses as finish computes them, and dlogits = (softmax − onehot(target − v0))
  //    · dloss with 0 in the padding columns, written over the logits (dlogits may alias logits)
  //    without storing the probabilities (llm.c's fused classifier, karpathy/llm.c
  //    llmc/fused_classifier.cuh). By default finish then backward (the CPU oracle); a device
  //    backend fuses the two passes into one.
  virtual void cross_entropy_finish_backward(float* losses, View dlogits, View logits, const float* rowmax,
                                             const float* stats, const int32_t* targets, int v0, int rows, int V,
                                             int valid, float dloss);
  // dlogits = (probs − onehot(target − v0)) · dloss (may alias probs).
  virtual void cross_entropy_backward(View dlogits, View probs, const int32_t* targets, int v0, int rows, int V,
                                      float dloss) = 0;
  // AdamW with decoupled weight decay (Loshchilov & Hutter): m, v updated, bias-corrected,
  // w −= lr·(m̂/(√v̂ + eps) + wd·w). Mixed precision: w is the fp32 `master` and params receives
  // w rounded to its type; fp32: master is null and params (fp32) is w.
  virtual void adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) = 0;
  // adamw on every tensor of the list (each element's update is independent of the others, so any
  // grouping gives the same bits), with weight decay 0 on the tensors whose `decay` is false. By
  // default one adamw per tensor (the CPU oracle); a device
  // backend updates the list in multi-tensor launches (kernels/train/multi_tensor_plan.hpp).
  virtual void adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a);

  // --- choices made by measuring, one for the whole run ------------------------------------------
  // Before the first step every rank's engine calls measure_attention on its attention problem,
  // the times are combined over the world (agreed_attention_times) and every rank calls
  // adopt_attention with the same times (attention_agreement.hpp), so every rank runs the same
  // implementation. nullopt: nothing to measure (the CPU oracle, an explicit --attn, fp32, only
  // one implementation usable). `ranks`: how many ranks the agreed times come from.
  virtual std::optional<AttentionTimes> measure_attention(DType t, int B, int T, int C, int NH);
  virtual void adopt_attention(DType t, int B, int T, int C, int NH, const AttentionTimes& agreed, int ranks);

  // Optional phase split (core/phase_timer.hpp): backends report the inclusive span "matmul"
  // around gemm; the engine pushes forward / backward / optimizer / comm:<kind> phases.
  void set_phase_timer(PhaseTimer* t) { phases_ = t; }
  PhaseTimer* phase_timer() const { return phases_; }
  // The timeline a run times this backend's work on (the steps and their phase split): the host
  // clock by default, where every op has completed when it returns; a device backend's marks are
  // events on its compute stream.
  virtual Timeline& timeline() { return host_timeline_; }
  virtual BackendNotes notes() const { return {}; }

 protected:
  // A GemmArgs with a GELU as two ops: gemm (into gelu_aux for forward) and gelu_forward /
  // gelu_backward. What gemm does on a backend that does not fuse the GELU.
  void gemm_then_gelu(const GemmArgs& a);
  // Raw allocation hooks (zeroed memory when `init` is AllocInit::zeros); alloc()/Buffer do the
  // accounting. Both are stream-ordered on a device backend (cudaMallocAsync/cudaFreeAsync on the
  // compute stream), so ZeRO-3 may free a gathered unit right after enqueuing the last op that
  // reads it.
  virtual void* raw_alloc(size_t bytes, MemCategory cat, AllocInit init) = 0;
  virtual void raw_free(void* p) = 0;
  // Zeroed host memory for alloc_host; by default std::calloc / std::free.
  virtual void* raw_alloc_host(size_t bytes);
  virtual void raw_free_host(void* p);

 private:
  friend class Buffer;
  void release(void* p, size_t bytes, MemCategory cat, bool host);
  MemoryStats mem_, host_mem_;
  PhaseTimer* phases_ = nullptr;
  HostTimeline host_timeline_;
};

// Runs `collective` on `comm` in order with the compute enqueued before and after it.
template <typename Fn>
void ordered_collective(Backend& be, Communicator& comm, Fn&& collective) {
  be.comm_begin(comm);
  collective();
  be.comm_end(comm);
}

}  // namespace gcb::models
