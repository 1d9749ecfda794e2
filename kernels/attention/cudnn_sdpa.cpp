// cuDNN SDPA forward through the backend C API (see cudnn_sdpa.hpp). The descriptor sequence is
// the one of reference/kernels.md §2.2 "Execution sequence": tensors → SDPA_FWD operation →
// operation graph → engine heuristics → execution plan → variant pack → execute.
#include "kernels/attention/cudnn_sdpa.hpp"

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <fmt/format.h>
#include <vector>

#include "core/error.hpp"

namespace gcb::kernels::attn {

namespace {

// One backend descriptor, destroyed with its owner.
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) { CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &d_)); }
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  template <typename T>
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count, const T* values) {
    CUDNN_CHECK(cudnnBackendSetAttribute(d_, name, type, count, values));
  }
  void set_desc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
  }
  // Finalize may legitimately fail (unsupported shape or engine): returns the status.
  cudnnStatus_t finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

std::string last_error(cudnnStatus_t s) {
  std::array<char, 1024> msg{};
  cudnnGetLastErrorString(msg.data(), msg.size());
  return fmt::format("{}{}{}", cudnnGetErrorString(s), msg[0] ? ": " : "", msg.data());
}

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kScale };

std::unique_ptr<Desc> tensor(int64_t uid, cudnnDataType_t type, std::array<int64_t, 4> dims,
                             std::array<int64_t, 4> strides, bool by_value = false) {
  auto t = std::make_unique<Desc>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const int64_t alignment = by_value ? 4 : 16;
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (by_value) {
    const bool yes = true;
    t->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
  }
  CUDNN_CHECK(t->finalize());
  return t;
}

}  // namespace

struct CudnnSdpaForward::Impl {
  cudnnHandle_t handle = nullptr;
  std::vector<std::unique_ptr<Desc>> keep;  // tensors, op, graph, configs, plan: alive with the plan
  Desc* plan = nullptr;
  std::string unsupported, engine;
  int64_t workspace = 0;
  float scale = 1.0f;
};

CudnnSdpaForward::CudnnSdpaForward(DType t, const AttnShape& a, void* stream) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  if (t != DType::f16 && t != DType::bf16) {
    m.unsupported = "cuDNN SDPA here supports fp16 and bf16";
    return;
  }
  if (a.causal) {
    m.unsupported = "causal cuDNN SDPA needs the composite graph (kernels.md 2.2 Route B) or cuDNN >= 9.21; not implemented";
    return;
  }
  if (cudnnGetVersion() < 91301) {
    m.unsupported = fmt::format("the unified SDPA_FWD operation needs cuDNN >= 9.13.1 (found {})", cudnnGetVersion());
    return;
  }
  CUDNN_CHECK(cudnnCreate(&m.handle));
  CUDNN_CHECK(cudnnSetStream(m.handle, static_cast<cudaStream_t>(stream)));
  m.scale = static_cast<float>(a.scale());
  const int64_t b = a.batch, h = a.heads, s = a.seq, d = a.head_dim;
  const cudnnDataType_t io = t == DType::f16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  const std::array<int64_t, 4> dims{b, h, s, d}, strides{h * s * d, s * d, d, 1};  // BHSD
  auto q = tensor(kQ, io, dims, strides), k = tensor(kK, io, dims, strides), v = tensor(kV, io, dims, strides),
       o = tensor(kO, io, dims, strides);
  auto stats = tensor(kStats, CUDNN_DATA_FLOAT, {b, h, s, 1}, {h * s, s, 1, 1});
  auto scale = tensor(kScale, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, true);

  auto op = std::make_unique<Desc>(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, *q);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, *k);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, *v);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, *o);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, *stats);
  op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, *scale);
  if (const cudnnStatus_t st = op->finalize(); st != CUDNN_STATUS_SUCCESS) {
    m.unsupported = "cuDNN rejected the SDPA_FWD operation: " + last_error(st);
    return;
  }
  auto graph = std::make_unique<Desc>(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &m.handle);
  graph->set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, *op);
  if (const cudnnStatus_t st = graph->finalize(); st != CUDNN_STATUS_SUCCESS) {
    m.unsupported = "cuDNN rejected the operation graph: " + last_error(st);
    return;
  }
  std::string reasons;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    auto heur = std::make_unique<Desc>(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur->set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *graph);
    heur->set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    if (const cudnnStatus_t st = heur->finalize(); st != CUDNN_STATUS_SUCCESS) {
      reasons += " heuristics: " + last_error(st) + ";";
      continue;
    }
    constexpr int64_t kRequested = 8;
    std::vector<std::unique_ptr<Desc>> cfgs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < kRequested; ++i) {
      cfgs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(cfgs.back()->get());
    }
    int64_t returned = 0;
    if (cudnnBackendGetAttribute(heur->get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, kRequested,
                                 &returned, raw.data()) != CUDNN_STATUS_SUCCESS)
      continue;
    for (int64_t i = 0; i < returned; ++i) {
      auto plan = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &m.handle);
      plan->set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *cfgs[static_cast<size_t>(i)]);
      if (const cudnnStatus_t st = plan->finalize(); st != CUDNN_STATUS_SUCCESS) {
        reasons += fmt::format(" config {}: {};", i, last_error(st));
        continue;
      }
      int64_t count = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                          &count, &m.workspace));
      m.engine = fmt::format("heuristic mode {} config #{}", mode == CUDNN_HEUR_MODE_A ? "A" : "fallback", i);
      m.plan = plan.get();
      for (auto* x : {&q, &k, &v, &o, &stats, &scale, &op, &graph, &heur}) m.keep.push_back(std::move(*x));
      for (auto& c : cfgs) m.keep.push_back(std::move(c));
      m.keep.push_back(std::move(plan));
      return;
    }
  }
  m.unsupported = "cuDNN has no engine for this SDPA graph:" + reasons;
}

CudnnSdpaForward::~CudnnSdpaForward() {
  if (!impl_) return;
  impl_->keep.clear();  // descriptors before the handle they reference
  if (impl_->handle) cudnnDestroy(impl_->handle);
}

const std::string& CudnnSdpaForward::unsupported() const { return impl_->unsupported; }
size_t CudnnSdpaForward::workspace_bytes() const { return static_cast<size_t>(impl_->workspace); }
std::string CudnnSdpaForward::engine() const { return impl_->engine; }

void CudnnSdpaForward::run(const void* q, const void* k, const void* v, void* o, float* stats, void* workspace) {
  GCB_CHECK(impl_->plan != nullptr, "cuDNN SDPA has no plan: " + impl_->unsupported);
  std::array<int64_t, 6> uids{kQ, kK, kV, kO, kStats, kScale};
  std::array<void*, 6> ptrs{const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), o, stats, &impl_->scale};
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 6, uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 6, ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  CUDNN_CHECK(pack.finalize());
  CUDNN_CHECK(cudnnBackendExecute(impl_->handle, impl_->plan->get(), pack.get()));
}

}  // namespace gcb::kernels::attn
