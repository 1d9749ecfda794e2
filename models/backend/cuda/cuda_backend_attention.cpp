// CudaBackend attention (attention_choice.hpp says which kernels and why). The registry's kernels
// (kernels/attention/attention_registry.hpp) read [B, NH, T, hs] tensors, so q, k and v are copied out of the fused qkv
// rows into head-major scratch (llm.c's permute; 16-byte chunks at GPT-2's head dims), and the outputs copied back; the
// scratch is workspace memory freed in stream order when the op returns, zeroed only where a kernel may not write every
// element (dq, dk, dv). The simple row kernel reads the fused layout directly.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/attention/attention_registry.hpp"
#include "kernels/train/train_kernels.hpp"
#include "models/backend/cuda/cuda_backend.hpp"

namespace gcb::models {
namespace k = gcb::kernels::train;
namespace attn = gcb::kernels::attn;

namespace {

attn::AttnShape shape_of(int B, int T, int C, int NH) {
  attn::AttnShape a;
  a.batch = B;
  a.heads = NH;
  a.seq = T;
  a.head_dim = C / NH;
  a.causal = true;
  return a;
}

// q, k, v (and o, do, dq, dk, dv) of one problem in the head-major layout.
struct HeadTensors {
  Buffer q, k, v, o;
};

}  // namespace

CudaBackend::AttnPlan& CudaBackend::attention_plan(DType t, int B, int T, int C, int NH) {
  GCB_CHECK(NH > 0 && C % NH == 0, "attention: C must be a multiple of the head count");
  const AttnKey key{B, T, NH, C / NH};
  auto it = attn_.find(key);
  if (it != attn_.end()) return *it->second;
  auto p = std::make_unique<AttnPlan>();
  p->shape = shape_of(B, T, C, NH);
  // A row's kernel for this problem (forward + backward), kept when it takes it; cuDNN builds its
  // plans in prepare().
  const auto make = [&](AttnImplId id) {
    std::string why = attn::attention_impl_refuses(id, t, p->shape.head_dim);
    if (why.empty()) {
      std::unique_ptr<attn::AttnKernel> kernel = attn::attention_impl(id).make(t, p->shape, true, ops().device());
      why = kernel->unsupported();
      if (why.empty()) why = kernel->prepare(compute_stream());
      if (why.empty()) p->kernels.emplace(id, std::move(kernel));
    }
    p->unsupported[id] = why;
  };
  // An asked row alone (no other row's plans are built) unless it cannot run; auto: every row that trains.
  if (const std::optional<AttnImplId> asked = requested_impl(options_.attn)) make(*asked);
  if (p->kernels.empty())
    for (const AttnImplId id : attn::training_attention_impls())
      if (!p->unsupported.contains(id)) make(id);
  p->choice = choose_attention(options_.attn, t, p->unsupported);
  AttnPlan& plan = *attn_.emplace(key, std::move(p)).first->second;
  note_choice(plan);
  return plan;
}

void CudaBackend::note_choice(const AttnPlan& p) {
  attn_note_ = fmt::format("{} ({}) at B {} NH {} T {} head dim {}", attention_choice_name(p.choice), p.choice.why,
                           p.shape.batch, p.shape.heads, p.shape.seq, p.shape.head_dim);
}

// The plan the ops run. A plan still to be timed was not agreed before the first step (an op
// called outside the engine): it is timed on this rank alone.
CudaBackend::AttnPlan& CudaBackend::ready_plan(DType t, int B, int T, int C, int NH) {
  AttnPlan& p = attention_plan(t, B, T, C, NH);
  if (p.choice.needs_timing) {
    p.choice = choose_attention(options_.attn, t, p.unsupported, time_attention(p, t), 1);
    note_choice(p);
  }
  return p;
}

std::optional<AttentionTimes> CudaBackend::measure_attention(DType t, int B, int T, int C, int NH) {
  AttnPlan& p = attention_plan(t, B, T, C, NH);
  if (!p.choice.needs_timing) return std::nullopt;
  own_attn_times_ = time_attention(p, t);
  return own_attn_times_;
}

void CudaBackend::adopt_attention(DType t, int B, int T, int C, int NH, const AttentionTimes& agreed, int ranks) {
  AttnPlan& p = attention_plan(t, B, T, C, NH);
  if (!p.choice.needs_timing) return;
  p.choice = choose_attention(options_.attn, t, p.unsupported, agreed, ranks);  // what the ops run and notes() records
  agreed_attn_times_ = agreed;
  note_choice(p);
}

// Forward + backward of every usable row on the problem's shape (zeroed inputs are as fast as
// any: no kernel's work depends on the values), 3 runs each after one warm-up, best of 3.
AttentionTimes CudaBackend::time_attention(AttnPlan& p, DType t) {
  const size_t n = p.shape.elements();
  std::vector<Buffer> io;
  for (int i = 0; i < 8; ++i) io.push_back(alloc(MemCategory::workspace, t, n));  // q k v o do dq dk dv
  Buffer lse = alloc(MemCategory::workspace, DType::f32, p.shape.rows());
  size_t ws_bytes = 0;
  for (const auto& [id, kernel] : p.kernels)
    ws_bytes = std::max({ws_bytes, kernel->workspace_bytes(false), kernel->workspace_bytes(true)});
  Buffer ws = alloc(MemCategory::workspace, DType::i8, ws_bytes);
  const auto d = [&](int i) { return io[static_cast<size_t>(i)].data(); };
  const attn::AttnTensors x{d(0), d(1), d(2), d(3), lse.f32(), d(4), d(5), d(6), d(7), ws.data()};
  const DeviceStream s = compute_stream();
  const DeviceEvent start = ops().create_event(true), stop = ops().create_event(true);
  AttentionTimes times;
  for (const auto& [id, kernel] : p.kernels) {
    const auto run = [&] {
      kernel->forward(x, s);
      kernel->backward(x, s);
    };
    run();
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      ops().record(start, s);
      run();
      ops().record(stop, s);
      best = std::min(best, ops().elapsed_seconds(start, stop));
    }
    times[id] = best;
  }
  ops().destroy_event(start);
  ops().destroy_event(stop);
  return times;
}

void CudaBackend::attention_forward(View out, float* lse, View qkv, int B, int T, int C, int NH) {
  const DType t = qkv.dtype;
  GCB_CHECK(out.dtype == t, "CudaBackend::attention_forward: out and qkv of one type");
  AttnPlan& p = ready_plan(t, B, T, C, NH);
  const DeviceStream s = compute_stream();
  if (!p.choice.impl) {
    k::simple_attention_forward(t, out.data, lse, qkv.data, B, T, C, NH, s);
    return;
  }
  const int hs = C / NH;
  const size_t n = p.shape.elements();
  // Unset: the permutes write every element of q, k, v, and the kernels every element of o.
  const auto scratch = [&] { return alloc(MemCategory::workspace, t, n, AllocInit::unset); };
  HeadTensors h{scratch(), scratch(), scratch(), scratch()};
  k::rows_to_heads(t, h.q.data(), qkv.data, 3 * C, 0, B, T, NH, hs, s);
  k::rows_to_heads(t, h.k.data(), qkv.data, 3 * C, C, B, T, NH, hs, s);
  k::rows_to_heads(t, h.v.data(), qkv.data, 3 * C, 2 * C, B, T, NH, hs, s);
  attn::AttnKernel& kernel = *p.kernels.at(*p.choice.impl);
  Buffer ws;
  if (const size_t bytes = kernel.workspace_bytes(false); bytes > 0)
    ws = alloc(MemCategory::workspace, DType::i8, bytes);
  kernel.forward({h.q.data(), h.k.data(), h.v.data(), h.o.data(), lse, nullptr, nullptr, nullptr, nullptr, ws.data()},
                 s);
  k::heads_to_rows(t, out.data, h.o.data(), C, 0, B, T, NH, hs, s);
}

void CudaBackend::attention_backward(View dqkv, View dout, View qkv, View out, const float* lse, int B, int T, int C,
                                     int NH) {
  const DType t = qkv.dtype;
  GCB_CHECK(out.dtype == t && dout.dtype == t && dqkv.dtype == t, "CudaBackend::attention_backward: one element type");
  AttnPlan& p = ready_plan(t, B, T, C, NH);
  const DeviceStream s = compute_stream();
  const size_t rows = p.shape.rows();
  if (!p.choice.impl) {
    Buffer D = alloc(MemCategory::workspace, DType::f32, rows);
    k::simple_attention_backward(t, dqkv.data, dout.data, qkv.data, out.data, lse, B, T, C, NH, D.f32(), s);
    return;
  }
  const int hs = C / NH;
  const size_t n = p.shape.elements();
  std::vector<Buffer> x;  // q k v o do dq dk dv, head-major; the permutes write every element of the first five
  for (int i = 0; i < 8; ++i)
    x.push_back(alloc(MemCategory::workspace, t, n, i < 5 ? AllocInit::unset : AllocInit::zeros));
  const auto d = [&](int i) { return x[static_cast<size_t>(i)].data(); };
  for (int i = 0; i < 3; ++i) k::rows_to_heads(t, d(i), qkv.data, 3 * C, i * C, B, T, NH, hs, s);
  k::rows_to_heads(t, d(3), out.data, C, 0, B, T, NH, hs, s);
  k::rows_to_heads(t, d(4), dout.data, C, 0, B, T, NH, hs, s);
  attn::AttnKernel& kernel = *p.kernels.at(*p.choice.impl);
  Buffer ws;
  if (const size_t bytes = kernel.workspace_bytes(true); bytes > 0)
    ws = alloc(MemCategory::workspace, DType::i8, bytes);
  // The backward reads lse (const); AttnTensors' lse is the forward's output.
  kernel.backward({d(0), d(1), d(2), d(3), const_cast<float*>(lse), d(4), d(5), d(6), d(7), ws.data()}, s);
  for (int i = 0; i < 3; ++i) k::heads_to_rows(t, dqkv.data, d(5 + i), 3 * C, i * C, B, T, NH, hs, s);
}

}  // namespace gcb::models
