// `gcbench plan --gpu cpu`'s host probe: what a rank of the training sees when all ranks of the
// layout run at once on this host's cores, measured the way training runs — one thread per rank,
// each with its own CpuBackend and buffers, the OpenMP/BLAS threads each rank thread gets by
// default, all ranks started together:
//   - each element-wise op's in-core ceiling (elements/s on cache-resident data: the roofline's
//     computational ceiling, Williams et al. 2009 CACM "Roofline" §4), at the model's row width;
//   - the contention of GEMMs: one sgemm of the model's MLP shape with every rank computing,
//     over the same call alone (the gemm / attn calibration runs alone);
//   - when the calibration has no `mem` triad, the memory roof: a STREAM triad (McCalpin,
//     a = b + s·c, 3 arrays of 32 MiB per rank, far beyond the last-level cache) on every rank.
// Each figure is timed by the suite's one harness (core/harness.hpp) through the multi-rank timer
// that `coll` and `p2p` use (collectives/rank_timer.hpp): one rank thread per rank of a
// ThreadWorld, every sample started together behind a barrier, the sample's time the slowest
// rank's, the figure the median over samples (plan.hpp RanksAtOnce says why).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "bench/plan/plan.hpp"
#include "collectives/rank_timer.hpp"
#include "collectives/thread_communicator.hpp"
#include "core/harness.hpp"
#include "kernels/mem/host_mem.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/planner/comm_model.hpp"

namespace gcb::bench {
namespace {

using models::planner::EwOp;
using Clock = std::chrono::steady_clock;

constexpr size_t kInCacheElements = 8192;  // 32 KiB per fp32 operand: L1/L2-resident

// time_ranks_at_once's per-rank call from a typed state: setup(rank) on the rank's thread, then
// call(state) per launch. Both are taken by reference: they outlive the timing.
template <typename Setup, typename Call>
auto calls_on_state(Setup& setup, Call& call) {
  return [&setup, &call](int r) -> std::function<void()> {
    auto state = std::make_shared<decltype(setup(r))>(setup(r));
    return [state, &call] { call(*state); };
  };
}

template <typename Setup, typename Call>
double concurrent_seconds(int ranks, Setup setup, Call call) {
  return time_ranks_at_once(ranks, calls_on_state(setup, call)).seconds;
}

// One rank's buffers for the element-wise ops, at `rows` × `width` (fp32).
struct OpBuffers {
  models::CpuBackend be;
  models::Buffer x, y, z, w, b, dw, db, m, v;
  std::vector<float> mean, rstd, rowmax, stats, losses;
  std::vector<int32_t> tokens;
  int rows = 1, width = 1;
  size_t n() const { return static_cast<size_t>(rows) * static_cast<size_t>(width); }
};

std::unique_ptr<OpBuffers> op_buffers(int rows, int width) {
  auto o = std::make_unique<OpBuffers>();
  o->rows = rows;
  o->width = width;
  const size_t n = o->n(), c = static_cast<size_t>(width), rr = static_cast<size_t>(rows);
  using models::MemCategory;
  for (models::Buffer* buf : {&o->x, &o->y, &o->z, &o->m, &o->v})
    *buf = o->be.alloc(MemCategory::workspace, DType::f32, n);
  for (models::Buffer* buf : {&o->w, &o->b, &o->dw, &o->db}) *buf = o->be.alloc(MemCategory::workspace, DType::f32, c);
  o->be.init_normal(o->x.view(), n, 1, 0, 0, 1.0f);
  o->be.init_normal(o->y.view(), n, 1, 1, 0, 1.0f);
  o->be.fill(o->w.view(), c, 1.0f);
  o->be.fill(o->v.view(), n, 1.0f);
  o->mean.assign(rr, 0.0f);
  o->rstd.assign(rr, 1.0f);
  o->rowmax.assign(rr, 0.0f);
  o->stats.assign(2 * rr, 1.0f);
  o->losses.assign(rr, 0.0f);
  o->tokens.resize(rr);
  for (int i = 0; i < rows; ++i) o->tokens[static_cast<size_t>(i)] = i % std::min(rows, width);  // < V and < T
  return o;
}

// The op as the engine calls it on `o`'s buffers.
void run_op(EwOp op, OpBuffers& o) {
  const int R = o.rows, W = o.width;
  const size_t n = o.n();
  models::Backend& be = o.be;
  switch (op) {
    case EwOp::layernorm_forward:
      be.layernorm_forward(o.z.view(), o.mean.data(), o.rstd.data(), o.x.view(), o.w.view(), o.b.view(), R, W);
      break;
    case EwOp::layernorm_backward:
      be.layernorm_backward(o.z.view(), o.dw.view(), o.db.view(), o.y.view(), o.x.view(), o.w.view(), o.mean.data(),
                            o.rstd.data(), R, W);
      break;
    case EwOp::bias_forward:  // CpuBackend::gemm's bias loop is one add per element, as add's
    case EwOp::residual_add: be.add(o.z.view(), o.x.view(), o.y.view(), n); break;
    case EwOp::bias_backward: be.bias_backward(o.db.view(), o.y.view(), R, W); break;
    case EwOp::gelu_forward: be.gelu_forward(o.z.view(), o.x.view(), n); break;
    case EwOp::gelu_backward: be.gelu_backward(o.z.view(), o.x.view(), o.y.view(), n); break;
    case EwOp::embedding_forward:  // a table of `rows` rows of width W (cache-resident)
      be.embedding_forward(o.z.view(), o.tokens.data(), o.x.view(), 0, R, o.y.view(), 1, R, W);
      break;
    case EwOp::embedding_backward:
      be.embedding_backward(o.z.view(), o.m.view(), o.y.view(), o.tokens.data(), 0, R, 1, R, W);
      break;
    case EwOp::cross_entropy_forward:  // no vocabulary padding: every column valid
      be.cross_entropy_max(o.rowmax.data(), o.x.view(), R, W, W);
      be.cross_entropy_sums(o.stats.data(), o.x.view(), o.rowmax.data(), o.tokens.data(), 0, R, W, W);
      be.cross_entropy_finish(o.losses.data(), o.z.view(), o.x.view(), o.rowmax.data(), o.stats.data(), R, W, W);
      break;
    case EwOp::cross_entropy_backward:
      be.cross_entropy_backward(o.z.view(), o.y.view(), o.tokens.data(), 0, R, W, 1.0f);
      break;
    case EwOp::fill: be.fill(o.z.view(), n, 0.0f); break;
    case EwOp::adamw: be.adamw(o.z.view(), o.y.view(), o.m.f32(), o.v.f32(), nullptr, n, {}); break;
    case EwOp::attention_scores: break;
    case EwOp::grad_norm: {
      double sq = 0.0;  // host memory: the probe runs the CPU backend
      be.sum_squares(models::View{&sq, DType::f64}, o.y.view(), n, false);
      break;
    }
  }
}

}  // namespace

HarnessOptions probe_harness_options() {
  HarnessOptions h;
  h.warmup = 2;                 // page faults, thread pools, the batch's calibration
  h.target_sample_time = 5e-3;  // ≥ 5 ms per sample: far above the barrier's microseconds
  h.min_samples = 5;
  h.max_samples = 50;
  h.min_time = 0.025;
  h.max_time = 0.15;  // per figure: about 20 figures, 2–4 s on a quiet host
  h.noise = 0.02;
  return h;
}

RanksAtOnce time_ranks_at_once(int ranks, const std::function<std::function<void()>(int rank)>& make_call,
                               const HarnessOptions& options) {
  RanksAtOnce out;
  ThreadWorld world(std::max(ranks, 1));
  std::vector<std::unique_ptr<ThreadCommunicator>> comms;
  for (int r = 0; r < world.size(); ++r) comms.push_back(world.communicator(r));
  run_rank_threads(world, [&](int r) {
    Communicator& comm = *comms[static_cast<size_t>(r)];
    const std::function<void()> launch = make_call(r);
    // Warm before the harness's first launch, which sets the batch: a cold first call (page
    // faults, BLAS and OpenMP pools starting) would make a microsecond op's batch far too short.
    launch();
    launch();
    // Each rank on a CPU of its own for the whole figure (see RanksKeptApart).
    const RanksKeptApart apart(comm);
    // Host work: the op has completed when the call returns, so the host communicator both runs
    // the barrier and "synchronizes" (a no-op on threads).
    RankTimer timer(comm, comm, TimingMode::pipelined, RankCombine::max, false);
    AgreedClock clock(comm);
    const Measurement m = measure(timer, launch, options, {}, clock);
    if (r != 0) return;  // every rank holds the same samples; rank 0 reports them
    out.seconds = m.stats.median;
    out.samples = m.samples.size();
    out.batch = m.batch;
    // The timer's per-rank record begins with the warm-up and calibration batches: keep the samples'.
    const auto& per = timer.per_rank();
    const size_t first = per.size() - std::min(per.size(), m.samples.size());
    out.per_rank.assign(per.begin() + static_cast<std::ptrdiff_t>(first), per.end());
    out.skew = rank_skew(out.per_rank);
  });
  return out;
}

namespace {

// Seconds per all_reduce of `bytes` (fp32 sum) over `ranks` rank threads of one ThreadWorld, every
// rank calling at once (the slowest rank's, median over samples).
double threads_all_reduce_seconds(int ranks, size_t bytes) {
  ThreadWorld world(ranks);
  struct Rank {
    std::unique_ptr<ThreadCommunicator> comm;
    std::vector<float> send, recv;
  };
  const size_t count = std::max<size_t>(1, bytes / sizeof(float));
  const auto setup = [&](int r) {
    return std::make_shared<Rank>(
        Rank{world.communicator(r), std::vector<float>(count, 1.0f), std::vector<float>(count)});
  };
  const auto call = [count](std::shared_ptr<Rank>& k) {
    k->comm->all_reduce(k->send.data(), k->recv.data(), count, DType::f32, ReduceOp::sum);
  };
  return concurrent_seconds(ranks, setup, call);
}

}  // namespace

HostProbe probe_shared_host(const models::GptConfig& model, int ranks, bool measure_bandwidth,
                            bool measure_all_reduce) {
  HostProbe out;
  out.ranks = ranks;
  out.threads_per_rank = kernels::host_threads();
  out.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto t0 = Clock::now();
  models::planner::SharedHostRates& rates = out.rates;
  for (size_t k = 0; k < models::planner::kEwOps; ++k) {
    const auto op = static_cast<EwOp>(k);
    if (op == EwOp::attention_scores) continue;
    const bool vocab = op == EwOp::cross_entropy_forward || op == EwOp::cross_entropy_backward;
    const int width = vocab ? model.vocab : model.hidden;
    const int rows = std::max(1, static_cast<int>(kInCacheElements / static_cast<size_t>(width)));
    const double s = concurrent_seconds(
        ranks, [&](int) { return op_buffers(rows, width); }, [&](std::unique_ptr<OpBuffers>& o) { run_op(op, *o); });
    rates.ceiling[k] = s > 0 ? static_cast<double>(rows) * width / s : 0.0;
  }
  // GEMM contention at the MLP's first GEMM of one sequence: [T, 4C] = [T, C]·[C, 4C].
  const int M = model.seq, N = 4 * model.hidden, K = model.hidden;
  struct Gemm {
    std::vector<float> a, b, c;
  };
  const auto setup = [&](int) {
    return Gemm{std::vector<float>(static_cast<size_t>(M) * K, 0.5f),
                std::vector<float>(static_cast<size_t>(K) * N, 0.25f), std::vector<float>(static_cast<size_t>(M) * N)};
  };
  const auto gemm = [&](Gemm& g) {
    models::cpu_sgemm(false, false, M, N, K, g.a.data(), g.b.data(), g.c.data(), 0.0f);
  };
  const auto gemm_call = calls_on_state(setup, gemm);
  const RanksAtOnce one = time_ranks_at_once(1, gemm_call);
  const double alone = one.seconds;
  double together = alone;
  if (ranks > 1) {
    // The same calls per sample as alone: a sample's length decides how often another process's
    // time slice lands in it, and the median's view of that must be the same on both sides of
    // the ratio (with the harness choosing each batch, together's shorter samples mostly missed
    // the slices that alone's longer ones caught: κ 0.3–0.6 under load).
    HarnessOptions same = probe_harness_options();
    same.batch = one.batch;
    const RanksAtOnce all = time_ranks_at_once(ranks, gemm_call, same);
    together = all.seconds;
    out.gemm_together_skew = all.skew;
  }
  rates.contention = alone > 0 ? together / alone : 1.0;
  out.gemm_alone_s = alone;
  out.gemm_together_s = together;
  out.gemm_shape = fmt::format("{}×{}×{}", M, N, K);
  if (measure_bandwidth) {
    constexpr size_t kArray = 32u << 20;  // bytes per array
    struct Triad {
      std::vector<float> a, b, c;
      kernels::HostStreamArrays arrays;
    };
    const auto triad_setup = [&](int) {
      auto t = std::make_unique<Triad>();
      const size_t n = kArray / sizeof(float);
      t->a.assign(n, 0.0f);
      t->b.assign(n, 1.0f);
      t->c.assign(n, 2.0f);
      t->arrays = {t->a.data(), t->b.data(), t->c.data(), n, DType::f32};
      return t;
    };
    const double s = concurrent_seconds(ranks, triad_setup, [](std::unique_ptr<Triad>& t) {
      kernels::host_stream_run(kernels::StreamOp::triad, t->arrays);
    });
    out.bandwidth = s > 0 ? 3.0 * static_cast<double>(kArray) / s : 0.0;
  }
  if (measure_all_reduce && ranks > 1) {
    // A layer's fp32 gradient (12C² + 13C elements), within 64 KiB … 64 MiB.
    const double c = model.hidden;
    const double layer_bytes = 4.0 * (12 * c * c + 13 * c);
    out.all_reduce_bytes = static_cast<size_t>(std::clamp(layer_bytes, 64.0 * 1024, 64.0 * 1024 * 1024));
    out.all_reduce_alpha_s = threads_all_reduce_seconds(ranks, sizeof(float));
    out.all_reduce_large_s = threads_all_reduce_seconds(ranks, out.all_reduce_bytes);
    const double transfer = out.all_reduce_large_s - out.all_reduce_alpha_s;
    if (transfer > 0)
      out.all_reduce_busbw = models::planner::bus_factor(models::planner::Collective::all_reduce, ranks) *
                             static_cast<double>(out.all_reduce_bytes) / transfer;
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rates.source = fmt::format("host probe: {} rank{} × {} thread{} at once on {} cores", ranks, ranks > 1 ? "s" : "",
                             out.threads_per_rank, out.threads_per_rank > 1 ? "s" : "", out.cores);
  return out;
}

}  // namespace gcb::bench
