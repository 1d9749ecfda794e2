// The collective operations of `gcbench coll`: names, nccl-tests' bus bandwidth factors and
// size → buffer shapes, option validation and the default backend.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "bench/coll/coll.hpp"
#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "core/gpu.hpp"
#include "core/host_memory.hpp"
#include "core/size.hpp"

namespace gcb::bench {

namespace {

struct OpInfo {
  CollOp op;
  std::string_view name;
  bool redop, root, in_place;
};

// in_place: nccl-tests runs in place where NCCL defines it (send == recv, or NCCL's offset
// forms for all_gather / reduce_scatter); alltoall, sendrecv, gather and scatter show N/A here.
constexpr std::array<OpInfo, 9> kOps{{
    {CollOp::all_reduce, "all_reduce", true, false, true},
    {CollOp::all_gather, "all_gather", false, false, true},
    {CollOp::reduce_scatter, "reduce_scatter", true, false, true},
    {CollOp::broadcast, "broadcast", false, true, true},
    {CollOp::reduce, "reduce", true, true, true},
    {CollOp::alltoall, "alltoall", false, false, false},
    {CollOp::sendrecv, "sendrecv", false, false, false},
    {CollOp::gather, "gather", false, true, false},
    {CollOp::scatter, "scatter", false, true, false},
}};

const OpInfo& info(CollOp op) {
  for (const auto& i : kOps)
    if (i.op == op) return i;
  return kOps[0];
}

}  // namespace

std::string_view coll_op_name(CollOp op) { return info(op).name; }

std::optional<CollOp> parse_coll_op(std::string_view name) {
  for (const auto& i : kOps)
    if (i.name == name) return i.op;
  if (name == "allreduce") return CollOp::all_reduce;
  if (name == "allgather") return CollOp::all_gather;
  if (name == "reducescatter") return CollOp::reduce_scatter;
  if (name == "all_to_all" || name == "alltoall") return CollOp::alltoall;
  return std::nullopt;
}

const std::vector<CollOp>& all_coll_ops() {
  static const std::vector<CollOp> ops = [] {
    std::vector<CollOp> v;
    for (const auto& i : kOps) v.push_back(i.op);
    return v;
  }();
  return ops;
}

bool coll_has_redop(CollOp op) { return info(op).redop; }
bool coll_has_root(CollOp op) { return info(op).root; }
bool coll_supports_in_place(CollOp op) { return info(op).in_place; }

double busbw_factor(CollOp op, int nranks) {
  const double n = nranks;
  switch (op) {
    // all_reduce: 2(n−1)/n — each element crosses 2(n−1) of n links (nccl-tests doc/PERFORMANCE.md,
    // src/all_reduce.cu AllReduceGetBw).
    case CollOp::all_reduce: return 2 * (n - 1) / n;
    // (n−1)/n: all_gather.cu, reduce_scatter.cu, alltoall.cu, gather.cu, scatter.cu *GetBw.
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::alltoall:
    case CollOp::gather:
    case CollOp::scatter: return (n - 1) / n;
    // 1: broadcast.cu, reduce.cu, sendrecv.cu *GetBw.
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::sendrecv: return 1;
  }
  return 1;
}

CollShape coll_shape(CollOp op, uint64_t requested_bytes, DType t, int nranks) {
  CollShape s;
  const size_t ts = dtype_size(t);
  const auto n = static_cast<size_t>(nranks);
  const size_t total = static_cast<size_t>(requested_bytes) / ts;
  // Sharded per-rank counts round down to a multiple of 16 B (nccl-tests *GetCollByteCount:
  // count & -(16 / eltSize)).
  const size_t align = ts >= 16 ? 1 : 16 / ts;
  const size_t shard = (total / n) / align * align;
  switch (op) {
    case CollOp::all_reduce:
    case CollOp::broadcast:
    case CollOp::reduce:
    case CollOp::sendrecv:
      s.count = total;
      s.send_count = s.recv_count = total;
      s.bytes = total * ts;
      break;
    case CollOp::all_gather:
    case CollOp::gather:
      s.count = shard;
      s.send_count = shard;
      s.recv_count = shard * n;
      s.bytes = shard * n * ts;
      break;
    case CollOp::reduce_scatter:
    case CollOp::scatter:
      s.count = shard;
      s.send_count = shard * n;
      s.recv_count = shard;
      s.bytes = shard * n * ts;
      break;
    case CollOp::alltoall:
      s.count = shard;
      s.send_count = s.recv_count = shard * n;
      s.bytes = shard * n * ts;
      break;
  }
  s.column_count = static_cast<size_t>(s.bytes) / ts;
  return s;
}

std::string_view timing_mode_name(TimingMode m) {
  switch (m) {
    case TimingMode::pipelined: return "pipelined";
    case TimingMode::isolated: return "isolated";
    case TimingMode::graph: return "graph";
  }
  return "?";
}

std::string_view timing_mode_description(TimingMode m) {
  switch (m) {
    case TimingMode::pipelined:
      return "back-to-back ops, host timer around each batch of -n ops (nccl-tests compatible)";
    case TimingMode::isolated: return "one op per sample: untimed barrier, op, synchronize";
    case TimingMode::graph: return "CUDA-graph replay of -n ops per launch (nccl-tests -G)";
  }
  return "?";
}

std::string_view rank_combine_name(RankCombine c) {
  switch (c) {
    case RankCombine::rank0: return "rank 0";
    case RankCombine::avg: return "avg";
    case RankCombine::min: return "min";
    case RankCombine::max: return "max";
  }
  return "?";
}

void validate(const CollOptions& o) {
  auto bad = [](const std::string& s) { return UsageError(s); };
  if (o.ops.empty()) throw bad("--op: no collective selected");
  if (o.redops.empty()) throw bad("-o: no reduction selected");
  if (o.dtypes.empty()) throw bad("-d: no datatype selected");
  for (DType t : o.dtypes)
    if (t != DType::f32 && t != DType::f64 && t != DType::f16 && t != DType::bf16 && t != DType::i32 && t != DType::i8)
      throw bad(fmt::format("-d {}: collectives support float, double, half, bfloat16, int32 and int8", dtype_name(t)));
  if (o.min_bytes == 0) throw bad("-b/--minbytes must be > 0");
  if (o.max_bytes < o.min_bytes)
    throw bad(fmt::format("-e/--maxbytes ({}) is below -b/--minbytes ({})", o.max_bytes, o.min_bytes));
  if (o.step_factor == 1) throw bad("-f/--stepfactor must be ≥ 2 (or 0 for additive -i steps)");
  if (o.step_factor == 0 && o.step_bytes == 0) throw bad("-i/--stepbytes must be > 0 when -f is not given");
  if (o.iters < 1) throw bad("-n/--iters must be ≥ 1");
  if (o.warmup_iters < 0) throw bad("-w/--warmup_iters must be ≥ 0");
  if (o.check < 0) throw bad("-c/--check must be ≥ 0");
  if (o.root < -1) throw bad("-r/--root must be ≥ 0, or -1 for every root");
  if (o.blocking < 0 || o.blocking > 1) throw bad("-z/--blocking must be 0 or 1");
  if (o.run_cycles < 0) throw bad("-N/--run_cycles must be ≥ 0 (0 = forever)");
  if (o.cudagraph < 0) throw bad("-G/--cudagraph must be ≥ 0");
  if (o.ranks < 0) throw bad("--ranks must be ≥ 1");
  if (!(o.timeout > 0)) throw bad("--timeout must be > 0 seconds");
  if (!o.backend.empty() && !communicator_backend_known(o.backend))
    throw bad(fmt::format("--backend {}: expected one of {}", o.backend, communicator_backend_names()));
  if (!o.backend.empty() && !communicator_backend_built(o.backend))
    throw bad(fmt::format("--backend {} was not built into this binary", o.backend));
}

double coll_host_bytes_per_rank(const CollOptions& o, int nranks) {
  double most = 0;
  for (CollOp op : o.ops)
    for (DType t : o.dtypes) {
      // Host buffers of one rank at the largest size: send and recv (coll_case.cpp), and during
      // the check the uploaded inputs, the downloaded output, the expected output and the two
      // count-sized rows of the reference reduction.
      const CollShape s = coll_shape(op, o.max_bytes, t, nranks);
      const double elements = 2.0 * static_cast<double>(s.send_count) + 3.0 * static_cast<double>(s.recv_count) +
                              2.0 * static_cast<double>(s.count);
      most = std::max(most, elements * static_cast<double>(dtype_size(t)));
    }
  return most;
}

void check_coll_host_memory(const CollOptions& o, int world_size) {
  const std::string backend = o.backend.empty() ? default_coll_backend() : o.backend;
  // Device buffers: the device-memory check belongs to the GPU path.
  if (communicator_backend_known(backend) && communicator_backend(backend).memory == MemorySpace::device) return;
  const LauncherInfo launcher = detect_launcher();
  // Rank threads share this process; MPI ranks on this host share its memory.
  const int here = !launcher.launched ? world_size : std::max(launcher.local_size, 1);
  check_host_memory(
      here * coll_host_bytes_per_rank(o, world_size),
      fmt::format("coll up to -e {} on {} rank(s) of this host", format_bytes(static_cast<double>(o.max_bytes)), here));
}

// Device memory when GPUs exist and a device backend is built, else host memory; one that spans
// processes under a launcher, else one of this process.
std::string default_coll_backend() {
  const bool processes = world_is_processes();
  if (gpu::device_count() > 0) {
    try {
      return std::string(communicator_for(MemorySpace::device, processes));
    } catch (const UsageError&) {  // no device backend built: measure host memory
    }
  }
  try {
    return std::string(communicator_for(MemorySpace::host, processes));
  } catch (const UsageError&) {  // under a launcher without MPI: the World says why
    return std::string(communicator_backends().front().name);
  }
}

}  // namespace gcb::bench
