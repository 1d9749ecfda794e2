// SdpaGraph → cuDNN backend descriptors (see cudnn_backend.hpp). Attribute names, types and
// element counts from the cuDNN backend API reference (docs.nvidia.com/deeplearning/cudnn,
// "Backend Descriptor Types") and cudnn_graph.h 9.19: every op descriptor takes its tensors as
// CUDNN_TYPE_BACKEND_DESCRIPTOR with count 1, the operation graph takes the op array.
#include "kernels/attention/cudnn_backend.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <array>
#include <map>

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
  template <typename T>
  void set_one(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, T value) {
    set(name, type, 1, &value);
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

cudnnDataType_t data_type(GraphType t) {
  switch (t) {
    case GraphType::f16: return CUDNN_DATA_HALF;
    case GraphType::bf16: return CUDNN_DATA_BFLOAT16;
    case GraphType::f32: return CUDNN_DATA_FLOAT;
    case GraphType::i32: return CUDNN_DATA_INT32;
    case GraphType::boolean: return CUDNN_DATA_BOOLEAN;
  }
  return CUDNN_DATA_FLOAT;
}

cudnnPointwiseMode_t pointwise_mode(PointwiseMode m) {
  switch (m) {
    case PointwiseMode::mul: return CUDNN_POINTWISE_MUL;
    case PointwiseMode::sub: return CUDNN_POINTWISE_SUB;
    case PointwiseMode::add: return CUDNN_POINTWISE_ADD;
    case PointwiseMode::div: return CUDNN_POINTWISE_DIV;
    case PointwiseMode::exp: return CUDNN_POINTWISE_EXP;
    case PointwiseMode::log: return CUDNN_POINTWISE_LOG;
    case PointwiseMode::identity: return CUDNN_POINTWISE_IDENTITY;
    case PointwiseMode::gen_index: return CUDNN_POINTWISE_GEN_INDEX;
    case PointwiseMode::cmp_ge: return CUDNN_POINTWISE_CMP_GE;
    case PointwiseMode::binary_select: return CUDNN_POINTWISE_BINARY_SELECT;
  }
  return CUDNN_POINTWISE_IDENTITY;
}

}  // namespace

struct CudnnGraphPlan::Descriptors {
  std::vector<std::unique_ptr<Desc>> all;
  Desc* plan = nullptr;
  Desc& make(cudnnBackendDescriptorType_t type) {
    all.push_back(std::make_unique<Desc>(type));
    return *all.back();
  }
};

CudnnGraphPlan::CudnnGraphPlan(const SdpaGraph& g, void* stream)
    : keep_(std::make_unique<Descriptors>()), stream_(stream) {
  if (const std::string bad = graph_problem(g); !bad.empty()) {
    unsupported_ = "malformed SDPA graph: " + bad;  // a bug in sdpa_graph.cpp, reported, not run
    return;
  }
  // No usable device (or driver) is a reason too, not a crash: the case is WAIVED with it.
  if (const cudnnStatus_t st = cudnnCreate(&handle_); st != CUDNN_STATUS_SUCCESS) {
    handle_ = nullptr;
    unsupported_ = "cudnnCreate failed: " + last_error(st);
    return;
  }
  if (const cudnnStatus_t st = cudnnSetStream(handle_, static_cast<cudaStream_t>(stream)); st != CUDNN_STATUS_SUCCESS) {
    unsupported_ = "cudnnSetStream failed: " + last_error(st);
    return;
  }
  for (const auto& t : g.tensors)
    if (t.kind == TensorKind::by_value) by_value_.emplace_back(t.uid, t.value);
  scratch_ = scratch_layout(g, &scratch_bytes_);
  zero_before_execute_ = scratch_to_zero(g, static_cast<int>(cudnnGetVersion()));
  unsupported_ = build(g);
}

CudnnGraphPlan::~CudnnGraphPlan() {
  keep_.reset();  // descriptors before the handle they reference
  if (handle_) cudnnDestroy(handle_);
}

std::string CudnnGraphPlan::build(const SdpaGraph& g) {
  Descriptors& k = *keep_;
  std::map<int64_t, Desc*> tensors;
  for (const auto& t : g.tensors) {
    Desc& d = k.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const bool by_value = t.kind == TensorKind::by_value;
    d.set_one(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, t.uid);
    d.set_one(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, data_type(t.type));
    d.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, t.dims.data());
    d.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, t.strides.data());
    d.set_one(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, int64_t{by_value ? 4 : 16});
    if (t.kind == TensorKind::virtual_tensor) d.set_one(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, true);
    if (by_value) d.set_one(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, true);
    if (const cudnnStatus_t st = d.finalize(); st != CUDNN_STATUS_SUCCESS)
      return fmt::format("cuDNN rejected tensor {}: {}", t.name, last_error(st));
    tensors[t.uid] = &d;
  }
  const auto io = [&](const std::vector<int64_t>& uids, size_t i) -> const Desc& { return *tensors.at(uids.at(i)); };

  std::vector<cudnnBackendDescriptor_t> ops;
  for (const auto& o : g.ops) {
    Desc* op = nullptr;
    switch (o.kind) {
      case OpKind::matmul: {
        Desc& m = k.make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
        m.set_one(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, data_type(o.compute));
        if (const cudnnStatus_t st = m.finalize(); st != CUDNN_STATUS_SUCCESS)
          return fmt::format("cuDNN rejected the matmul descriptor of {}: {}", o.name, last_error(st));
        op = &k.make(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        op->set_desc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, io(o.inputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, io(o.inputs, 1));
        op->set_desc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, io(o.outputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, m);
        break;
      }
      case OpKind::pointwise: {
        Desc& p = k.make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        p.set_one(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, pointwise_mode(o.pointwise));
        p.set_one(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, data_type(o.compute));
        if (o.pointwise == PointwiseMode::gen_index) p.set_one(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, o.axis);
        if (const cudnnStatus_t st = p.finalize(); st != CUDNN_STATUS_SUCCESS)
          return fmt::format("cuDNN rejected the pointwise descriptor of {}: {}", o.name, last_error(st));
        op = &k.make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, p);
        op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, io(o.inputs, 0));
        if (o.inputs.size() > 1) op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, io(o.inputs, 1));
        if (o.inputs.size() > 2) op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, io(o.inputs, 2));
        op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, io(o.outputs, 0));
        break;
      }
      case OpKind::reduction: {
        Desc& r = k.make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
        r.set_one(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                  o.reduction == ReductionMode::max ? CUDNN_REDUCE_TENSOR_MAX : CUDNN_REDUCE_TENSOR_ADD);
        r.set_one(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, data_type(o.compute));
        if (const cudnnStatus_t st = r.finalize(); st != CUDNN_STATUS_SUCCESS)
          return fmt::format("cuDNN rejected the reduction descriptor of {}: {}", o.name, last_error(st));
        op = &k.make(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
        op->set_desc(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, io(o.inputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, io(o.outputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
        break;
      }
      case OpKind::reshape:
        op = &k.make(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
        op->set_desc(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, io(o.inputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, io(o.outputs, 0));
        break;
      case OpKind::sdpa_forward:
#if CUDNN_VERSION < 91301
        // The unified SDPA operation's descriptors first appear in cuDNN 9.13.1's headers
        // (cudnn-frontend guards its UnifiedSDPANode the same way); PyTorch's wheels often carry older.
        return fmt::format("built against cuDNN {} headers, which have no SDPA_FWD operation (9.13.1+)", CUDNN_VERSION);
#else
        op = &k.make(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR);
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, io(o.inputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, io(o.inputs, 1));
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, io(o.inputs, 2));
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, io(o.inputs, 3));
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, io(o.outputs, 0));
        op->set_desc(CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, io(o.outputs, 1));
        break;
#endif
    }
    if (const cudnnStatus_t st = op->finalize(); st != CUDNN_STATUS_SUCCESS)
      return fmt::format("cuDNN rejected operation {}: {}", o.name, last_error(st));
    ops.push_back(op->get());
  }

  Desc& graph = k.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set_one(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, handle_);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops.size()), ops.data());
  if (const cudnnStatus_t st = graph.finalize(); st != CUDNN_STATUS_SUCCESS)
    return "cuDNN rejected the operation graph: " + last_error(st);

  std::string reasons;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    const char* mode_name = mode == CUDNN_HEUR_MODE_A ? "A" : "fallback";
    Desc& heur = k.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur.set_one(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, mode);
    if (const cudnnStatus_t st = heur.finalize(); st != CUDNN_STATUS_SUCCESS) {
      reasons += fmt::format(" heuristics {}: {};", mode_name, last_error(st));
      continue;
    }
    constexpr int64_t kRequested = 8;
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (int64_t i = 0; i < kRequested; ++i) cfgs.push_back(k.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
    int64_t returned = 0;
    if (const cudnnStatus_t st =
            cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     kRequested, &returned, cfgs.data());
        st != CUDNN_STATUS_SUCCESS) {
      reasons += fmt::format(" heuristics {} results: {};", mode_name, last_error(st));
      continue;
    }
    if (returned == 0) reasons += fmt::format(" heuristics {}: no engine config;", mode_name);
    for (int64_t i = 0; i < returned; ++i) {
      Desc& plan = k.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan.set_one(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, handle_);
      plan.set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
               &cfgs[static_cast<size_t>(i)]);
      if (const cudnnStatus_t st = plan.finalize(); st != CUDNN_STATUS_SUCCESS) {
        reasons += fmt::format(" mode {} config {}: {};", mode_name, i, last_error(st));
        continue;
      }
      int64_t count = 0, workspace = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &count, &workspace));
      // The graph's scratch starts after cuDNN's workspace, kept 256-byte aligned.
      cudnn_workspace_ = (static_cast<size_t>(workspace) + 255) / 256 * 256;
      engine_ = fmt::format("heuristic mode {} config #{}", mode_name, i);
      k.plan = &plan;
      return {};
    }
  }
  return "cuDNN has no engine for this graph:" + reasons;
}

void CudnnGraphPlan::execute(const std::vector<std::pair<int64_t, void*>>& device, void* workspace) {
  GCB_CHECK(keep_ && keep_->plan != nullptr, "cuDNN graph has no plan: " + unsupported_);
  std::vector<int64_t> uids;
  std::vector<void*> ptrs;
  for (const auto& [uid, p] : device) {
    uids.push_back(uid);
    ptrs.push_back(p);
  }
  for (auto& [uid, value] : by_value_) {
    uids.push_back(uid);
    ptrs.push_back(&value);  // by-value tensors: the variant pack points at host memory
  }
  for (const auto& s : scratch_) {
    uids.push_back(s.uid);
    ptrs.push_back(static_cast<unsigned char*>(workspace) + cudnn_workspace_ + s.offset);
  }
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()), ptrs.data());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  CUDNN_CHECK(pack.finalize());
  for (const auto& z : zero_before_execute_)
    CUDA_CHECK(cudaMemsetAsync(static_cast<unsigned char*>(workspace) + cudnn_workspace_ + z.offset, 0, z.bytes,
                               static_cast<cudaStream_t>(stream_)));
  CUDNN_CHECK(cudnnBackendExecute(handle_, keep_->plan->get(), pack.get()));
}

}  // namespace gcb::kernels::attn
