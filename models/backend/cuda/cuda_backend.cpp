// CudaBackend ops other than attention: each checks the element types it is given and launches
// its kernel (kernels/train) or cuBLASLt (kernels/gemm) on the compute stream. Compiles,
// unvalidated.
#include "models/backend/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/gemm/cublaslt_gemm.hpp"
#include "kernels/gemm/lt_linear.hpp"
#include "kernels/train/train_kernels.hpp"
#include "models/backend/cuda/cuda_device_ops.hpp"
#include "models/model/init_rng.hpp"

namespace gcb::models {
namespace k = gcb::kernels::train;

namespace {

std::string type_list(std::initializer_list<View> views) {
  std::string s;
  for (const View& v : views) s += (s.empty() ? "" : ", ") + std::string(v ? dtype_name(v.dtype) : "none");
  return s;
}

// The CUDA kernels take one element type per op for their tensors (fp32 and bf16 instantiations).
DType same_type(const char* op, std::initializer_list<View> views) {
  DType t = DType::f32;
  bool first = true;
  for (const View& v : views) {
    if (!v) continue;
    if (first) t = v.dtype;
    if (v.dtype != t)
      throw Fault(fmt::format("CudaBackend::{}: tensors of one type expected, got {}", op, type_list(views)));
    first = false;
  }
  return t;
}

}  // namespace

namespace detail {
CudaDevice::CudaDevice(int device, const std::vector<int>& process_devices)
    : device_ops(make_cuda_device_ops(device, process_devices)), device_stream(cuda_compute_stream(*device_ops)) {}
CudaDevice::~CudaDevice() = default;
}  // namespace detail

CudaBackend::CudaBackend(const CudaBackendOptions& o)
    : detail::CudaDevice(o.device, o.process_devices),
      DeviceBackend(*device_ops, device_stream),
      options_(o),
      lt_(std::make_unique<kernels::LtContext>(o.device)),
      linear_(std::make_unique<kernels::LtLinear>(*lt_)) {
  const auto& devices = gpu::runtime().devices;
  device_name_ = o.device < static_cast<int>(devices.size()) ? devices[static_cast<size_t>(o.device)].name : "?";
}

CudaBackend::~CudaBackend() {
  online_.reset();
  synchronize();
}

BackendNotes CudaBackend::notes() const {
  BackendNotes n;
  n.text.emplace_back("device", fmt::format("cuda:{} {}", options_.device, device_name_));
  n.text.emplace_back(
      "gemm", fmt::format("{} (LtLinear: heuristic #0, fp32 accumulation, bias epilogue{})",
                          kernels::cublaslt_version(), options_.lt_gelu ? ", GELU epilogues (unvalidated)" : ""));
  n.text.emplace_back("attn_asked", attention_request_name(options_.attn));
  n.text.emplace_back("attention", attn_note_.empty() ? "not run" : attn_note_);
  // --attn auto: the times the run chose from (per registry row the slowest rank's) and this rank's own.
  if (agreed_attn_times_)
    for (const auto& [id, seconds] : *agreed_attn_times_)
      n.figures.emplace_back(fmt::format("attn_{}_s", kernels::attn::attention_impl_name(id)), seconds);
  if (own_attn_times_)
    for (const auto& [id, seconds] : *own_attn_times_)
      n.figures.emplace_back(fmt::format("attn_{}_s_this_rank", kernels::attn::attention_impl_name(id)), seconds);
  const PoolCounters p = ops().pool();
  n.figures.emplace_back("pool_used_peak", static_cast<double>(p.used_high));
  n.figures.emplace_back("pool_reserved_peak", static_cast<double>(p.reserved_high));
  const DeviceMemoryInfo d = ops().memory_info();  // the whole device, other processes included
  n.figures.emplace_back("device_free", static_cast<double>(d.free));
  n.figures.emplace_back("device_total", static_cast<double>(d.total));
  n.figures.emplace_back("cublaslt_workspace", static_cast<double>(lt_->workspace_bytes()));
  return n;
}

void CudaBackend::fill(View x, size_t n, float value) { k::fill(x.dtype, x.data, n, value, compute_stream()); }

void CudaBackend::copy(View dst, View src, size_t n) {
  if (dst.dtype == src.dtype) {
    ops().copy_async(dst.data, src.data, n * dtype_size(dst.dtype), compute_stream());
  } else {
    k::cast(dst.dtype, dst.data, src.dtype, src.data, n, compute_stream());
  }
}

void CudaBackend::add(View out, View a, View b, size_t n) {
  k::add(same_type("add", {out, a, b}), out.data, a.data, b.data, n, compute_stream());
}

void CudaBackend::scale(View x, double s, size_t n) { k::scale(x.dtype, x.data, s, n, compute_stream()); }

// On the host, then uploaded: the same values as the CPU oracle, bit for bit, so that both
// backends start from the same weights. Once per tensor shard, at start-up.
void CudaBackend::init_normal(View x, size_t n, uint64_t seed, uint64_t rng_stream, uint64_t first_index, float std) {
  std::vector<unsigned char> host(n * dtype_size(x.dtype));
#pragma omp parallel for if (n > (size_t{1} << 16))
  for (size_t i = 0; i < n; ++i)
    store_as(x.dtype, host.data(), i, std * counter_normal(seed, rng_stream, first_index + i));
  copy_from_host(x.data, host.data(), host.size());
}

void CudaBackend::sum(View out, View in, size_t n, bool accumulate) {
  GCB_CHECK(in.dtype == DType::f32, "CudaBackend::sum: fp32 inputs (per-token losses)");
  k::sum(out.dtype, out.data, static_cast<const float*>(in.data), n, accumulate, compute_stream());
}

void CudaBackend::sum_squares(View out, View in, size_t n, bool accumulate) {
  GCB_CHECK(out.dtype == DType::f64, "CudaBackend::sum_squares: the result is fp64");
  // Scratch for the block partials, freed stream-ordered after the launches that use it.
  const Buffer partials = alloc(MemCategory::workspace, DType::f64, k::kSumSquaresBlocks, AllocInit::unset);
  k::sum_squares(in.dtype, static_cast<double*>(out.data), in.data, n, accumulate,
                 static_cast<double*>(partials.data()), compute_stream());
}

void CudaBackend::gemm(const GemmArgs& a) {
  // Our tanh-GELU kernels after the GEMM unless --lt-gelu asked for cuBLASLt's epilogue, which
  // needs N divisible by 8 (its aux leading dimension, lt_linear.hpp).
  if (a.gelu != GemmGelu::none && (!options_.lt_gelu || a.N % 8 != 0)) {
    gemm_then_gelu(a);
    return;
  }
  const SpanScope span(phase_timer(), "matmul");
  GCB_CHECK(a.beta == 0.0f || a.beta == 1.0f, "CudaBackend::gemm: beta is 0 or 1");
  kernels::LinearGemm g;
  g.trans_a = a.trans_a;
  g.trans_b = a.trans_b;
  g.m = a.M;
  g.n = a.N;
  g.k = a.K;
  g.type = same_type("gemm", {a.A, a.B, a.C, a.bias});
  g.bias = static_cast<bool>(a.bias);
  g.accumulate = a.beta != 0.0f;
  g.gelu = a.gelu == GemmGelu::forward    ? kernels::LinearGelu::forward
           : a.gelu == GemmGelu::backward ? kernels::LinearGelu::backward
                                          : kernels::LinearGelu::none;
  if (a.gelu != GemmGelu::none) same_type("gemm", {a.C, a.gelu_aux});
  linear_->run(g, a.A.data, a.B.data, a.C.data, a.bias.data, a.gelu_aux.data, compute_stream());
}

void CudaBackend::bias_backward(View dbias, View dout, int M, int N) {
  const DType t = same_type("bias_backward", {dbias, dout});
  if (N == 0) return;  // no columns
  // The column sums' per-split partials (train_kernels.hpp), freed stream-ordered after use.
  const Buffer partials = alloc(MemCategory::workspace, DType::f32, k::column_sum_partials(M, N), AllocInit::unset);
  k::bias_backward(t, dbias.data, dout.data, M, N, partials.f32(), compute_stream());
}

void CudaBackend::layernorm_forward(View out, float* mean, float* rstd, View x, View w, View b, int rows, int C) {
  k::layernorm_forward(same_type("layernorm_forward", {out, x, w, b}), out.data, mean, rstd, x.data, w.data, b.data,
                       rows, C, compute_stream());
}

void CudaBackend::layernorm_backward(View dx, View dw, View db, View dout, View x, View w, const float* mean,
                                     const float* rstd, int rows, int C) {
  const DType t = same_type("layernorm_backward", {dx, dw, db, dout, x, w});
  // dw's and db's per-split partials (train_kernels.hpp), freed stream-ordered after use.
  const Buffer partials =
      alloc(MemCategory::workspace, DType::f32, 2 * k::column_sum_partials(rows, C), AllocInit::unset);
  k::layernorm_backward(t, dx.data, dw.data, db.data, dout.data, x.data, w.data, mean, rstd, rows, C, partials.f32(),
                        compute_stream());
}

void CudaBackend::gelu_forward(View out, View x, size_t n) {
  k::gelu_forward(same_type("gelu_forward", {out, x}), out.data, x.data, n, compute_stream());
}

void CudaBackend::gelu_backward(View dx, View x, View dout, size_t n) {
  k::gelu_backward(same_type("gelu_backward", {dx, x, dout}), dx.data, x.data, dout.data, n, compute_stream());
}

void CudaBackend::embedding_forward(View out, const int32_t* tokens, View wte, int v0, int V, View wpe, int B, int T,
                                    int C) {
  k::embedding_forward(same_type("embedding_forward", {out, wte, wpe}), out.data, tokens, wte.data, v0, V, wpe.data, B,
                       T, C, compute_stream());
}

void CudaBackend::embedding_backward(View dwte, View dwpe, View dout, const int32_t* tokens, int v0, int V, int B,
                                     int T, int C) {
  const size_t bytes = k::embedding_backward_workspace(B * T);
  // Unset: the kernels write the keys and row ids before the sort reads them, and cub's temporary
  // storage needs no initial value (NVIDIA/cccl cub/device/device_radix_sort.cuh).
  Buffer ws = alloc(MemCategory::workspace, DType::i8, bytes, AllocInit::unset);
  k::embedding_backward(same_type("embedding_backward", {dwte, dwpe, dout}), dwte.data, dwpe.data, dout.data, tokens,
                        v0, V, B, T, C, ws.data(), bytes, compute_stream());
}  // ws is freed in stream order, after the kernels that read it

void CudaBackend::cross_entropy_max(float* rowmax, View logits, int rows, int V, int valid) {
  if (online_.count() < 2 * static_cast<size_t>(rows))
    online_ = alloc(MemCategory::workspace, DType::f32, 2 * static_cast<size_t>(rows), AllocInit::unset);  // max writes
  k::cross_entropy_max(logits.dtype, rowmax, online_.f32(), logits.data, rows, V, valid, compute_stream());
  online_logits_ = logits.data;
  online_rows_ = rows;
  online_V_ = V;
  online_valid_ = valid;
}

void CudaBackend::cross_entropy_sums(float* stats, View logits, const float* rowmax, const int32_t* targets, int v0,
                                     int rows, int V, int valid) {
  const bool same = online_logits_ == logits.data && online_rows_ == rows && online_V_ == V && online_valid_ == valid;
  k::cross_entropy_sums(logits.dtype, stats, logits.data, rowmax, same ? online_.f32() : nullptr, targets, v0, rows, V,
                        valid, compute_stream());
  online_logits_ = nullptr;  // one use: the logits may change after this
}

void CudaBackend::cross_entropy_finish(float* losses, View probs, View logits, const float* rowmax, const float* stats,
                                       int rows, int V, int valid) {
  k::cross_entropy_finish(same_type("cross_entropy_finish", {probs, logits}), losses, probs.data, logits.data, rowmax,
                          stats, rows, V, valid, compute_stream());
}

void CudaBackend::cross_entropy_finish_backward(float* losses, View dlogits, View logits, const float* rowmax,
                                                const float* stats, const int32_t* targets, int v0, int rows, int V,
                                                int valid, float dloss) {
  k::cross_entropy_finish_backward(same_type("cross_entropy_finish_backward", {dlogits, logits}), losses, dlogits.data,
                                   logits.data, rowmax, stats, targets, v0, rows, V, valid, dloss, compute_stream());
}

void CudaBackend::cross_entropy_backward(View dlogits, View probs, const int32_t* targets, int v0, int rows, int V,
                                         float dloss) {
  k::cross_entropy_backward(same_type("cross_entropy_backward", {dlogits, probs}), dlogits.data, probs.data, targets,
                            v0, rows, V, dloss, compute_stream());
}

void CudaBackend::adamw(View params, View grads, float* m, float* v, float* master, size_t n, const AdamWArgs& a) {
  adamw_multi({{params, grads, m, v, master, n}}, a);
}

// Two multi-tensor updates: the tensors that decay, then those that do not (weight decay 0).
void CudaBackend::adamw_multi(const std::vector<AdamWBuffers>& tensors, const AdamWArgs& a) {
  if (tensors.empty()) return;
  const DType t = tensors.front().params.dtype;
  for (const bool decay : {true, false}) {
    std::vector<k::AdamWTensor> list;
    for (const AdamWBuffers& x : tensors) {
      GCB_CHECK(same_type("adamw", {x.params, x.grads}) == t, "CudaBackend::adamw_multi: one element type per list");
      if (x.decay == decay) list.push_back({x.params.data, x.grads.data, x.m, x.v, x.master, x.n});
    }
    if (list.empty()) continue;
    k::adamw_multi(t, list,
                   k::adamw_step(a.lr, a.beta1, a.beta2, a.eps, decay ? a.weight_decay : 0.0f, a.step, a.grad_scale),
                   compute_stream());
  }
}

}  // namespace gcb::models
