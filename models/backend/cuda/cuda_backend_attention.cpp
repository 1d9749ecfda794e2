// CudaBackend attention (attention_choice.hpp says which kernels and why). The flash kernels and
// cuDNN read [B, NH, T, hs] tensors, so q, k and v are copied out of the fused qkv rows into
// head-major scratch (llm.c's permute; 16-byte chunks at GPT-2's head dims), and the outputs copied
// back; the scratch is workspace memory freed in stream order when the op returns, zeroed only
// where a kernel may not write every element (dq, dk, dv). The simple row kernel reads the fused
// layout directly.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "core/gpu.hpp"
#include "kernels/attention/cudnn_sdpa.hpp"
#include "kernels/attention/flash_attn.hpp"
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
  std::string cudnn_reason = "not asked for";
  if (t != DType::f32 && options_.attn != AttentionImpl::ours) {
    p->cudnn_fwd = std::make_unique<attn::CudnnSdpaForward>(t, p->shape, compute_stream());
    p->cudnn_bwd = std::make_unique<attn::CudnnSdpaBackward>(t, p->shape, compute_stream());
    cudnn_reason = !p->cudnn_fwd->unsupported().empty() ? p->cudnn_fwd->unsupported() : p->cudnn_bwd->unsupported();
  }
  // Ours needs its backward's shared memory too (sm_86/89/120 allow less than it uses).
  std::string ours_reason = attn::flash_unsupported(t, p->shape);
  if (ours_reason.empty())
    ours_reason = attn::flash_smem_unsupported(
        p->shape.head_dim, true, gpu::runtime().devices.at(static_cast<size_t>(ops().device())).smem_per_block_optin);
  p->choice = choose_attention(options_.attn, t, ours_reason, cudnn_reason);
  AttnPlan& plan = *attn_.emplace(key, std::move(p)).first->second;
  note_choice(plan);
  return plan;
}

void CudaBackend::note_choice(const AttnPlan& p) {
  attn_note_ = fmt::format("{} ({}) at B {} NH {} T {} head dim {}", attention_path_name(p.choice.path), p.choice.why,
                           p.shape.batch, p.shape.heads, p.shape.seq, p.shape.head_dim);
}

// The plan the ops run. A plan still to be timed was not agreed before the first step (an op
// called outside the engine): it is timed on this rank alone.
CudaBackend::AttnPlan& CudaBackend::ready_plan(DType t, int B, int T, int C, int NH) {
  AttnPlan& p = attention_plan(t, B, T, C, NH);
  if (p.choice.needs_timing) {
    p.choice = choose_attention(options_.attn, t, "", "", time_attention(p, t), 1);
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
  p.choice = choose_attention(options_.attn, t, "", "", agreed, ranks);  // what the ops run and notes() records
  agreed_attn_times_ = agreed;
  note_choice(p);
}

// Forward + backward of ours and of cuDNN on the problem's shape (zeroed inputs are as fast as
// any: neither kernel's work depends on the values), 3 runs each after one warm-up, best of 3.
AttentionTimes CudaBackend::time_attention(AttnPlan& p, DType t) {
  const size_t n = p.shape.elements();
  std::vector<Buffer> io;
  for (int i = 0; i < 8; ++i) io.push_back(alloc(MemCategory::workspace, t, n));  // q k v o do dq dk dv
  Buffer lse = alloc(MemCategory::workspace, DType::f32, p.shape.rows());
  const size_t ws_bytes = std::max(
      {attn::flash_backward_workspace_bytes(p.shape), p.cudnn_fwd->workspace_bytes(), p.cudnn_bwd->workspace_bytes()});
  Buffer ws = alloc(MemCategory::workspace, DType::i8, ws_bytes);
  const auto d = [&](int i) { return io[static_cast<size_t>(i)].data(); };
  const DeviceStream s = compute_stream();
  const auto run = [&](AttentionPath path) {
    if (path == AttentionPath::ours) {
      attn::flash_forward(t, p.shape, d(0), d(1), d(2), d(3), lse.f32(), s);
      attn::flash_backward(t, p.shape, d(0), d(1), d(2), d(3), d(4), lse.f32(), d(5), d(6), d(7), ws.data(), s);
    } else {
      p.cudnn_fwd->run(d(0), d(1), d(2), d(3), lse.f32(), ws.data());
      p.cudnn_bwd->run(d(0), d(1), d(2), d(3), d(4), lse.f32(), d(5), d(6), d(7), ws.data());
    }
  };
  const DeviceEvent start = ops().create_event(true), stop = ops().create_event(true);
  AttentionTimes times;
  for (AttentionPath path : {AttentionPath::ours, AttentionPath::cudnn}) {
    run(path);
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      ops().record(start, s);
      run(path);
      ops().record(stop, s);
      best = std::min(best, ops().elapsed_seconds(start, stop));
    }
    (path == AttentionPath::ours ? times.ours : times.cudnn) = best;
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
  if (p.choice.path == AttentionPath::simple) {
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
  if (p.choice.path == AttentionPath::ours) {
    attn::flash_forward(t, p.shape, h.q.data(), h.k.data(), h.v.data(), h.o.data(), lse, s);
  } else {
    Buffer ws = alloc(MemCategory::workspace, DType::i8, p.cudnn_fwd->workspace_bytes());
    p.cudnn_fwd->run(h.q.data(), h.k.data(), h.v.data(), h.o.data(), lse, ws.data());
  }
  k::heads_to_rows(t, out.data, h.o.data(), C, 0, B, T, NH, hs, s);
}

void CudaBackend::attention_backward(View dqkv, View dout, View qkv, View out, const float* lse, int B, int T, int C,
                                     int NH) {
  const DType t = qkv.dtype;
  GCB_CHECK(out.dtype == t && dout.dtype == t && dqkv.dtype == t, "CudaBackend::attention_backward: one element type");
  AttnPlan& p = ready_plan(t, B, T, C, NH);
  const DeviceStream s = compute_stream();
  const size_t rows = p.shape.rows();
  if (p.choice.path == AttentionPath::simple) {
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
  if (p.choice.path == AttentionPath::ours) {
    Buffer ws = alloc(MemCategory::workspace, DType::i8, attn::flash_backward_workspace_bytes(p.shape));
    attn::flash_backward(t, p.shape, d(0), d(1), d(2), d(3), d(4), lse, d(5), d(6), d(7), ws.data(), s);
  } else {
    Buffer ws = alloc(MemCategory::workspace, DType::i8, p.cudnn_bwd->workspace_bytes());
    p.cudnn_bwd->run(d(0), d(1), d(2), d(3), d(4), lse, d(5), d(6), d(7), ws.data());
  }
  for (int i = 0; i < 3; ++i) k::heads_to_rows(t, dqkv.data, d(5 + i), 3 * C, i * C, B, T, NH, hs, s);
}

}  // namespace gcb::models
