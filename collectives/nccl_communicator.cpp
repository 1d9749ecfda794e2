// NcclCommunicator: thin mapping of the Communicator interface onto NCCL calls on one stream,
// plus the one piece of policy NCCL lacks: a synchronize() that never hangs forever.
// Status: compiles on the CPU-only build machines; not yet validated on a GPU.
#include "collectives/nccl_communicator.hpp"

#include <sched.h>

#include <cstring>
#include <fmt/format.h>

#include "collectives/stream_poll.hpp"
#include "core/error.hpp"

namespace gcb {

namespace {

static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId must match NcclCommunicator's 128-byte id");

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::f64: return ncclFloat64;
    case DType::f32: return ncclFloat32;
    case DType::tf32: return ncclFloat32;  // stored as fp32
    case DType::f16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 3)  // FP8 types first appear in NCCL 2.24.3
    case DType::fp8_e4m3: return ncclFloat8e4m3;
    case DType::fp8_e5m2: return ncclFloat8e5m2;
#else
    case DType::fp8_e4m3:
    case DType::fp8_e5m2: break;  // built against an older NCCL: reported below
#endif
    case DType::i8: return ncclInt8;
    case DType::i32: return ncclInt32;
  }
  throw UsageError(fmt::format("dtype {} has no NCCL equivalent", dtype_name(t)));
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::avg: return ncclAvg;
  }
  GCB_CHECK(false, fmt::format("reduction op {} out of range", static_cast<int>(op)));  // the switch names every op
  return ncclSum;
}

const std::byte* at(const void* base, size_t offset) { return static_cast<const std::byte*>(base) + offset; }
std::byte* at(void* base, size_t offset) { return static_cast<std::byte*>(base) + offset; }

}  // namespace

std::array<std::byte, 128> NcclCommunicator::new_unique_id() {
  ncclUniqueId id;
  NCCL_CHECK(ncclGetUniqueId(&id));
  std::array<std::byte, 128> bytes{};
  std::memcpy(bytes.data(), &id, sizeof(id));
  return bytes;
}

NcclCommunicator::NcclCommunicator(const std::array<std::byte, 128>& unique_id, int nranks, int rank, int device,
                                   std::chrono::milliseconds timeout)
    : device_(device), timeout_(timeout) {
  ncclUniqueId id;
  std::memcpy(&id, unique_id.data(), sizeof(id));
  CUDA_CHECK(cudaSetDevice(device_));
  NCCL_CHECK(ncclCommInitRank(&comm_, nranks, id, rank));
  init_common();
}

NcclCommunicator::NcclCommunicator(ncclComm_t comm, int device, std::chrono::milliseconds timeout)
    : comm_(comm), device_(device), timeout_(timeout) {
  CUDA_CHECK(cudaSetDevice(device_));
  init_common();
}

void NcclCommunicator::init_common() {
  NCCL_CHECK(ncclCommUserRank(comm_, &rank_));
  NCCL_CHECK(ncclCommCount(comm_, &size_));
  // Non-blocking: must not serialise with work on the legacy default stream.
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&barrier_word_), sizeof(int)));
}

NcclCommunicator::~NcclCommunicator() {
  // Destructors must not throw: errors here are ignored, the process is usually ending.
  cudaSetDevice(device_);
  if (comm_ != nullptr) ncclCommDestroy(comm_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
  if (barrier_word_ != nullptr) cudaFree(barrier_word_);
}

void NcclCommunicator::abort_and_throw(const std::string& why) {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
  check_failed("NCCL", "synchronize()", why + "; communicator aborted", __FILE__, __LINE__);
}

void NcclCommunicator::all_reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclAllReduce(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream_));
}

void NcclCommunicator::all_gather(const void* send, void* recv, size_t count, DType t) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclAllGather(send, recv, count, nccl_type(t), comm_, stream_));
}

void NcclCommunicator::reduce_scatter(const void* send, void* recv, size_t count, DType t, ReduceOp op) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclReduceScatter(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream_));
}

void NcclCommunicator::broadcast(const void* send, void* recv, size_t count, DType t, int root) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclBroadcast(send, recv, count, nccl_type(t), root, comm_, stream_));
}

void NcclCommunicator::reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclReduce(send, recv, count, nccl_type(t), nccl_op(op), root, comm_, stream_));
}

void NcclCommunicator::all_to_all(const void* send, void* recv, size_t count, DType t) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  if (send == recv) throw UsageError("the NCCL backend has no in-place all_to_all");
  const size_t bytes = count * dtype_size(t);
  NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < size_; ++r) {
    const size_t offset = static_cast<size_t>(r) * bytes;
    NCCL_CHECK(ncclSend(at(send, offset), count, nccl_type(t), r, comm_, stream_));
    NCCL_CHECK(ncclRecv(at(recv, offset), count, nccl_type(t), r, comm_, stream_));
  }
  NCCL_CHECK(ncclGroupEnd());
}

void NcclCommunicator::group_start() { NCCL_CHECK(ncclGroupStart()); }
void NcclCommunicator::group_end() { NCCL_CHECK(ncclGroupEnd()); }

void NcclCommunicator::send(const void* buf, size_t count, DType t, int peer) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclSend(buf, count, nccl_type(t), peer, comm_, stream_));
}

void NcclCommunicator::recv(void* buf, size_t count, DType t, int peer) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  NCCL_CHECK(ncclRecv(buf, count, nccl_type(t), peer, comm_, stream_));
}

void NcclCommunicator::barrier() {
  all_reduce(barrier_word_, barrier_word_, 1, DType::i32, ReduceOp::sum);
  synchronize();
}

void NcclCommunicator::synchronize() {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  StreamPoll poll;
  poll.done = [this] {
    const cudaError_t status = cudaStreamQuery(stream_);
    if (status != cudaErrorNotReady) CUDA_CHECK(status);
    return status == cudaSuccess;
  };
  poll.async_error = [this]() -> std::string {
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    return async == ncclSuccess || async == ncclInProgress ? "" : ncclGetErrorString(async);
  };
  poll.yield = [] { sched_yield(); };
  if (const std::string why = poll_stream(poll, timeout_); !why.empty()) abort_and_throw(why);
}

std::string NcclCommunicator::library_version() const {
  int v = 0;
  NCCL_CHECK(ncclGetVersion(&v));
  // NCCL ≥ 2.9 encodes major·10000 + minor·100 + patch.
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  GCB_CHECK(comm_ != nullptr, "NCCL communicator was aborted");
  ncclComm_t child = nullptr;
  NCCL_CHECK(ncclCommSplit(comm_, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &child, nullptr));
  if (child == nullptr) return nullptr;
  return std::unique_ptr<Communicator>(new NcclCommunicator(child, device_, timeout_));
}

}  // namespace gcb
