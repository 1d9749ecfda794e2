// `gcbench coll`: the size sweep per operation, run identically on every rank; rank 0 prints the
// nccl-tests-style table, the statistics table and the footer, and records the results and the
// α–β fit of each sweep.
#include "bench/coll/coll.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

#include "bench/coll/coll_table.hpp"
#include "bench/common/rank_threads.hpp"
#include "collectives/verifiable_case.hpp"
#include "collectives/graph_capture.hpp"
#include "collectives/rank_timer.hpp"
#include "collectives/thread_communicator.hpp"
#include "collectives/factory.hpp"
#include "core/error.hpp"
#include "core/fit.hpp"
#include "core/gpu.hpp"
#include "core/size.hpp"
#include "reports/result.hpp"

namespace gcb::bench {

namespace {

struct RankLine {
  int32_t pid = 0;
  int32_t device = -1;
  char host[56] = {};
};
static_assert(sizeof(RankLine) == 64, "RankLine is exchanged as raw bytes");

// One measured placement (out-of-place or in-place) of one size.
struct Cell {
  double time_s = 0;  // mean seconds per op: total time / total ops, as nccl-tests
  double algbw = 0, busbw = 0;
  uint64_t wrong = 0;
  bool checked = false;
  RankSkew skew;
  double wall_s = 0;  // the whole cell on rank 0: buffers, inputs, warm-up, samples, checks
};

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

struct Sweep {
  CollOp op;
  DType dtype;
  ReduceOp redop;
  int root;  // -1 for ops without a root
};

class CollRun {
 public:
  CollRun(const CollOptions& o, const HarnessOptions& h, RankContext& ctx, Runner* runner, bool quiet)
      : o_(o), h_(h), ctx_(ctx), runner_(ctx.rank == 0 ? runner : nullptr), print_(ctx.rank == 0 && !quiet) {}

  uint64_t run() {
    print_ranks();
    const std::vector<uint64_t> sizes =
        size_sweep(o_.min_bytes, o_.max_bytes, o_.step_factor, o_.step_factor ? 0 : o_.step_bytes);
    for (int cycle = 0; !stopped_ && (o_.run_cycles == 0 || cycle < o_.run_cycles); ++cycle)
      for (CollOp op : o_.ops)
        for (DType t : o_.dtypes)
          for (ReduceOp redop : coll_has_redop(op) ? o_.redops : std::vector<ReduceOp>{ReduceOp::sum})
            for (int root : roots(op))
              if (!stopped_) run_sweep(Sweep{op, t, redop, root}, sizes, cycle);
    return total_wrong_;
  }

 private:
  std::vector<int> roots(CollOp op) const {
    if (!coll_has_root(op)) return {-1};
    if (o_.root >= 0) {
      if (o_.root >= ctx_.size)
        throw UsageError(fmt::format("-r/--root {} is outside the world of {} ranks", o_.root, ctx_.size));
      return {o_.root};
    }
    std::vector<int> all(static_cast<size_t>(ctx_.size));
    for (int r = 0; r < ctx_.size; ++r) all[static_cast<size_t>(r)] = r;
    return all;
  }

  void print_ranks() {
    RankLine mine;
    mine.pid = static_cast<int32_t>(getpid());
    mine.device = ctx_.device;
    std::memcpy(mine.host, ctx_.host.data(), std::min(ctx_.host.size(), sizeof(mine.host) - 1));
    std::vector<RankLine> all(static_cast<size_t>(ctx_.size));
    ctx_.host_comm.all_gather(&mine, all.data(), sizeof(RankLine), DType::i8);
    if (!print_) return;
    // The library measured: the backend's own (its results' "<backend>_version"), not whichever
    // NCCL this binary could load.
    const Communicator& comm = ctx_.world_comm;
    // One fact a line, each within 100 columns (the table below is nccl-tests' own, 116 wide).
    fmt::print("# gcbench coll  backend: {}  ranks: {} ({} node(s), {} per node, {})\n# library: {}\n", comm.backend(),
               ctx_.size, ctx_.nodes, ctx_.local_size, ctx_.processes ? "one process per rank" : "threads",
               library_label(communicator_backend(comm.backend()).library, comm.library_version()));
    fmt::print("# minBytes {} maxBytes {} step: {}  warmup iters: {}  iters: {}  validation: {}\n", o_.min_bytes,
               o_.max_bytes,
               o_.step_factor ? fmt::format("{}(factor)", o_.step_factor) : fmt::format("{}(bytes)", o_.step_bytes),
               warmup(), o_.iters, o_.check);
    fmt::print("# mode: {}: {}\n", timing_mode_name(o_.mode), timing_mode_description(o_.mode));
    const HarnessOptions h = harness();  // as every cell samples (isolated: at least -n samples)
    fmt::print("# time: per-rank times combined by {} (-a {}); samples: {}..{} within {} s per case\n#\n",
               rank_combine_name(o_.average), static_cast<int>(o_.average), h.min_samples, h.max_samples, h.max_time);
    for (int r = 0; r < ctx_.size; ++r) {
      const auto& l = all[static_cast<size_t>(r)];
      fmt::print("#  Rank {:2} Group  0 Pid {:6} on {:>10} device {:2} [{}]\n", r, l.pid,
                 std::string(l.host, strnlen(l.host, sizeof(l.host))), l.device, l.device < 0 ? "cpu" : "gpu");
    }
    std::fflush(stdout);
  }

  int warmup() const { return o_.warmup_iters >= 0 ? o_.warmup_iters : h_.warmup; }

  HarnessOptions harness() const {
    HarnessOptions h = h_;
    h.warmup = warmup();
    h.cold = false;
    switch (o_.mode) {
      case TimingMode::pipelined: h.batch = o_.iters; break;
      case TimingMode::isolated:
        h.batch = 1;
        h.min_samples = std::max(h.min_samples, o_.iters);
        h.max_samples = std::max(h.max_samples, h.min_samples);
        break;
      case TimingMode::graph: h.batch = std::max(o_.cudagraph, 1); break;
    }
    return h;
  }

  // One placement of one size: its cell (for the totals) and its result (for the runner and the
  // table, which is rendered from results as `gcbench report --format coll-table` renders it).
  Result measure_cell(const Sweep& s, const CollShape& shape, bool in_place, Cell& cell) {
    const double start = steady_clock().now();
    // Rank threads each on a CPU of their own for the whole cell, when they fit the CPUs this
    // process may use (RanksKeptApart; nothing otherwise). Spread once and let go, as before, the
    // scheduler put two spinning rank threads back on one CPU now and then on a 2-vCPU VM, and
    // every op of that cell waited out the 50 µs spin: one process measured a case at 54 µs per op
    // where another measured 0.15 µs (15 of 63 cases 2x or more apart between 10 processes); kept
    // apart, one case (docs/readme-coll.md). The same mask gives the same CPUs in every process.
    std::optional<RanksKeptApart> apart;
    if (!ctx_.processes) apart.emplace(ctx_.host_comm);
    const std::vector<int32_t> cpus = apart ? apart->all_cpus() : std::vector<int32_t>{};
    CollCaseSpec spec{s.op, s.dtype, s.redop, std::max(s.root, 0), shape, in_place, o_.seed};
    CollCase c(ctx_, spec);
    c.init_inputs();
    if (o_.fail_rank == ctx_.rank) throw Fault(fmt::format("test hook: rank {} fails on purpose", ctx_.rank));
    const int ops_per_launch = o_.mode == TimingMode::graph ? o_.iters : 1;
    RankTimer timer(ctx_.world_comm, ctx_.host_comm, o_.mode, o_.average, o_.blocking == 1, ops_per_launch);
    AgreedClock clock(ctx_.host_comm);
    std::unique_ptr<CollGraph> graph;
    if (o_.mode == TimingMode::graph)
      graph = capture_graph(
          ctx_.world_comm, [&c] { c.launch(); }, o_.iters);
    // Otherwise the op as bound once (CollCase::bound): per op only what a bare loop of the
    // library call does; its watch scope, if any, is opened per sample.
    if (!graph) timer.use_bound(c.bound());
    const Measurement m = graph ? measure(
                                      timer, [&graph] { graph->replay(); }, harness(), {}, clock)
                                : measure(timer, c.bound().launch, harness(), {}, clock);
    const auto& per_rank = timer.per_rank();
    const std::vector<std::vector<double>> sampled(per_rank.end() - static_cast<long>(m.samples.size()),
                                                   per_rank.end());
    cell.time_s = m.stats.mean;
    cell.algbw = cell.time_s > 0 ? static_cast<double>(shape.bytes) / cell.time_s / 1e9 : 0;
    cell.busbw = cell.algbw * busbw_factor(s.op, ctx_.size);
    cell.skew = rank_skew(sampled);
    if (o_.check > 0) {
      double local = 0;
      for (int k = 0; k < o_.check; ++k)
        local +=
            static_cast<double>(c.check(ctx_.rank == o_.corrupt_rank ? static_cast<long long>(o_.corrupt_index) : -1));
      double sum = 0;
      ctx_.host_comm.all_reduce(&local, &sum, 1, DType::f64, ReduceOp::sum);
      cell.wrong = static_cast<uint64_t>(sum);
      cell.checked = true;
    }
    cell.wall_s = steady_clock().now() - start;
    Result r = to_result(s, shape, in_place, cell, m);
    // The CPU each rank thread was kept on during the cell (-1: not pinned: too few CPUs).
    if (!cpus.empty()) r.extra["rank_cpus"] = cpus;
    if (runner_) runner_->add(r);
    return r;
  }

  nlohmann::json params(const Sweep& s) const {
    return {{"op", coll_op_name(s.op)},
            {"dtype", dtype_name(s.dtype)},
            {"redop", coll_has_redop(s.op) ? std::string(reduce_op_name(s.redop)) : std::string("none")},
            {"root", s.root},
            {"backend", ctx_.world_comm.backend()},
            {"ranks", ctx_.size},
            {"nodes", ctx_.nodes},
            {"ranks_per_node", ctx_.local_size},
            {"mode", timing_mode_name(o_.mode)}};
  }

  Result to_result(const Sweep& s, const CollShape& shape, bool in_place, const Cell& cell, const Measurement& m) {
    Result r;
    r.key = fmt::format("coll/{}", coll_op_name(s.op));
    r.params = params(s);
    r.params["bytes"] = shape.bytes;
    r.params["count"] = shape.column_count;
    r.params["inplace"] = in_place;
    if (o_.run_cycles != 1) r.params["cycle"] = cycle_;
    r.take(m);
    r.model = {{"bytes", shape.bytes}, {"busbw_factor", busbw_factor(s.op, ctx_.size)}};
    r.metrics = {Metric{"busbw", cell.busbw, "GB/s", true, {}, {}}, Metric{"algbw", cell.algbw, "GB/s", true, {}, {}},
                 Metric{"time", cell.time_s, "s", false, {}, {}}};
    r.extra = {{"wrong", cell.checked ? nlohmann::json(cell.wrong) : nlohmann::json(nullptr)},
               {"seed", o_.seed},
               {"rank_combine", rank_combine_name(o_.average)},
               {"skew_median", cell.skew.median_skew},
               {"slowest_rank", cell.skew.slowest_rank},
               {"slowest_rank_share", cell.skew.slowest_share},
               {"wall_seconds", cell.wall_s},
               {"busbw_formula", busbw_formula(s.op)}};
    if (const std::string v = ctx_.world_comm.library_version(); !v.empty())
      r.extra[fmt::format("{}_version", ctx_.world_comm.backend())] = v;
    for (const char* v : {"NCCL_ALGO", "NCCL_PROTO"})
      if (const std::string e = env_or_empty(v); !e.empty()) r.extra[v] = e;
    if (cell.wrong > 0) {
      r.status = Status::fail;
      r.reason = fmt::format("#wrong = {} elements differ from the exact reference", cell.wrong);
    }
    return r;
  }

  static std::string busbw_formula(CollOp op) {
    switch (op) {
      case CollOp::all_reduce: return "algbw * 2(n-1)/n (nccl-tests PERFORMANCE.md)";
      case CollOp::broadcast:
      case CollOp::reduce:
      case CollOp::sendrecv: return "algbw * 1 (nccl-tests PERFORMANCE.md)";
      default: return "algbw * (n-1)/n (nccl-tests PERFORMANCE.md)";
    }
  }

  void run_sweep(const Sweep& s, const std::vector<uint64_t>& sizes, int cycle) {
    cycle_ = cycle;
    Result head;
    head.params = params(s);
    if (print_) fmt::print("{}", coll_sweep_header(head));
    if (o_.mode == TimingMode::graph) {
      const std::string why = graph_waived_reason(ctx_.world_comm);
      if (!why.empty()) {
        Result r;
        r.key = fmt::format("coll/{}", coll_op_name(s.op));
        r.params = params(s);
        r.status = Status::waived;
        r.reason = why;
        if (print_) fmt::print("{}", coll_sweep_footer(std::vector<const Result*>{&r}, o_.verbose));
        if (runner_) runner_->add(std::move(r));
        return;
      }
    }
    std::deque<Result> results;  // pointers stay valid as it grows
    std::vector<const Result*> cells;
    std::vector<double> fit_bytes, fit_seconds;
    uint64_t last_bytes = 0;
    for (uint64_t size : sizes) {
      const CollShape shape = coll_shape(s.op, size, s.dtype, ctx_.size);
      // Too small for one element per rank (sharded ops), or the same buffer as the last row.
      if (shape.count == 0 || shape.bytes == last_bytes) continue;
      last_bytes = shape.bytes;
      // The safe point of Ctrl-C / scancel (core/interrupt.hpp): between sizes, agreed by every rank.
      const std::string running =
          fmt::format("coll/{} {} {} {} B{}", coll_op_name(s.op), dtype_name(s.dtype), reduce_op_name(s.redop),
                      shape.bytes, o_.run_cycles != 1 ? fmt::format(" cycle {}", cycle) : "");
      if (agreed_interrupt(ctx_, running) != 0) {
        stopped_ = true;
        break;
      }
      Cell out, in;
      const Result* out_result = &results.emplace_back(measure_cell(s, shape, false, out));
      const Result* in_result = nullptr;
      if (coll_supports_in_place(s.op) && o_.in_place)
        in_result = &results.emplace_back(measure_cell(s, shape, true, in));
      cells.push_back(out_result);
      if (in_result) cells.push_back(in_result);
      total_wrong_ += out.wrong + in.wrong;
      fit_bytes.push_back(static_cast<double>(shape.bytes));
      fit_seconds.push_back(out.time_s);
      if (print_) {
        fmt::print("{}", coll_table_row(*out_result, in_result));
        std::fflush(stdout);
      }
    }
    if (print_) fmt::print("{}", coll_sweep_footer(cells, o_.verbose));
    if (!stopped_) add_fit(s, fit_bytes, fit_seconds);  // a fit of part of a sweep would not say so
  }

  void add_fit(const Sweep& s, const std::vector<double>& bytes, const std::vector<double>& seconds) {
    if (!runner_) return;
    nlohmann::json p = params(s);
    p["scope"] = ctx_.nodes > 1 ? "inter-node" : "intra-node";
    p["inplace"] = false;
    if (o_.run_cycles != 1) p["cycle"] = cycle_;
    runner_->add(coll_fit_result(s.op, p, bytes, seconds));
  }

  const CollOptions& o_;
  HarnessOptions h_;
  RankContext& ctx_;
  Runner* runner_;
  bool print_;
  int cycle_ = 0;
  uint64_t total_wrong_ = 0;
  bool stopped_ = false;  // a stop signal was agreed: no further size runs
};

}  // namespace

Result coll_fit_result(CollOp op, const nlohmann::json& params, std::span<const double> bytes,
                       std::span<const double> seconds) {
  Result r;
  r.key = fmt::format("coll/{}/fit", coll_op_name(op));
  r.params = params;
  const AlphaBetaFit f = fit_alpha_beta(bytes, seconds);
  nlohmann::json residuals = nlohmann::json::array();
  if (f.ok)
    for (size_t i = 0; i < bytes.size(); ++i) {
      const double model = f.alpha_s + bytes[i] / f.beta_bytes_per_s;
      residuals.push_back(
          {{"bytes", bytes[i]}, {"time_s", seconds[i]}, {"rel_residual", (model - seconds[i]) / seconds[i]}});
    }
  r.extra = {{"model",
              "t(n) = alpha + n / beta over the out-of-place sweep (core/fit.hpp; Hockney, Parallel Computing 20(3), "
              "1994)"},
             {"points", f.points},
             {"residuals", residuals}};
  if (!f.ok) {
    r.status = Status::waived;
    r.reason = bytes.size() < 2 ? "an α–β fit needs at least two sizes" : "no physical α–β fit (β ≤ 0)";
    return r;
  }
  r.metrics = {Metric{"alpha", f.alpha_s * 1e6, "us", false, {}, {}},
               Metric{"beta", f.beta_bytes_per_s / 1e9, "GB/s", true, {}, {}},
               Metric{"n_half", f.n_half_bytes, "B", false, {}, {}},
               Metric{"max_rel_residual", f.max_rel_residual, "ratio", false, {}, {}}};
  return r;
}

uint64_t run_coll_on_rank(const CollOptions& o, const HarnessOptions& harness, RankContext& ctx, Runner* runner,
                          bool quiet) {
  return CollRun(o, harness, ctx, runner, quiet).run();
}

int run_coll(const CollOptions& o, const HarnessOptions& harness, Runner& runner, bool quiet,
             const std::vector<std::string>& args) {
  validate(o);
  validate(harness);
  return run_checked_world(o.backend, o.ranks, o.timeout, args, [&](RankContext& ctx) {
    return run_coll_on_rank(o, harness, ctx, ctx.rank == 0 ? &runner : nullptr, quiet);
  });
}

CollOptions quick_coll_options() {
  CollOptions o;
  o.ops = all_coll_ops();
  o.min_bytes = 8;
  o.max_bytes = uint64_t{1} << 20;
  o.step_factor = 16;
  o.iters = 10;
  // On a CPU-only machine, 2 rank threads, not the command's 4: more rank threads than cores made
  // consecutive quick runs of one binary differ by 2x as the scheduler's pattern flipped between
  // runs (4 threads on a 2-vCPU runner), and 2 is a fixed value, so the cases' keys do not depend
  // on the host. With GPUs, one rank per GPU as the command does.
  if (gpu::device_count() == 0) o.ranks = 2;
  return o;
}

int run_coll_quick(const HarnessOptions& harness, Runner& runner, bool quiet, uint64_t seed) {
  CollOptions o = quick_coll_options();
  o.seed = seed;
  if (o.ranks > 0 && !rank_threads_fit(runner, "coll/quick", o.ranks)) return kExitOk;
  return run_coll(o, harness, runner, quiet, {"run", "--suite", "quick"});
}

}  // namespace gcb::bench
