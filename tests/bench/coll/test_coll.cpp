// gcbench coll on rank threads: busbw factors and shapes as nccl-tests, exact results for every
// op and placement, #wrong catching one corrupted element, identical harness samples on every
// rank, the α–β fit result on synthetic data, and the nccl-tests table's statistics of one sample.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "bench/common/cli.hpp"
#include "bench/coll/coll.hpp"
#include "bench/coll/coll_table.hpp"
#include "collectives/rank_timer.hpp"
#include "collectives/rendezvous.hpp"
#include "collectives/thread_communicator.hpp"
#include "collectives/verifiable_case.hpp"
#include "collectives/world.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "core/watchdog.hpp"

namespace gcb::bench {
namespace {

// A one-sample row has no spread: its CV is undefined and the statistics table under a sweep
// prints "-" there, as every console table does (tests/reports/test_result.cpp), not "0.00".
TEST(CollTable, UndefinedStatisticsPrintADash) {
  Result coll;
  coll.key = "coll/all_reduce";
  coll.params = {{"bytes", 8}, {"inplace", false}, {"mode", "pipelined"}};
  coll.samples = {1e-3};
  coll.sample_flags = {0};
  coll.stats = summarize(coll.samples);
  coll.metrics = {Metric{"bandwidth", 12.5, "GB/s", true, 100.0, "spec:test"}};
  coll.model = {{"bytes", 3072}};
  coll.throttled = true;
  coll.stop_reason = "converged";
  coll.batch = 4;
  const Result* cells[] = {&coll};
  const std::string footer = coll_sweep_footer(cells, false);
  const std::string last = footer.substr(footer.rfind("\n", footer.size() - 2) + 1);
  EXPECT_NE(last.find("   1000.00      -    0.0"), std::string::npos) << footer;  // max, CV%, skew%
}

TEST(CollBusbw, FactorsAreNcclTests) {
  // nccl-tests doc/PERFORMANCE.md and src/*.cu (NVIDIA/nccl-tests doc/PERFORMANCE.md).
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_reduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CollOp::all_reduce, 1), 0.0);
  for (CollOp op : {CollOp::all_gather, CollOp::reduce_scatter, CollOp::alltoall, CollOp::gather, CollOp::scatter}) {
    EXPECT_DOUBLE_EQ(busbw_factor(op, 4), 0.75) << coll_op_name(op);
    EXPECT_DOUBLE_EQ(busbw_factor(op, 8), 0.875) << coll_op_name(op);
  }
  for (CollOp op : {CollOp::broadcast, CollOp::reduce, CollOp::sendrecv}) EXPECT_DOUBLE_EQ(busbw_factor(op, 8), 1.0);
}

TEST(CollShape, ShardedCountsRoundDownTo16Bytes) {
  auto s = coll_shape(CollOp::all_gather, 1 << 20, DType::f32, 4);
  EXPECT_EQ(s.count, 65536u);
  EXPECT_EQ(s.bytes, uint64_t{1} << 20);
  EXPECT_EQ(s.recv_count, 262144u);
  // 100 B of floats over 4 ranks: 25 elements → 6 per rank → 4 (16 B) per rank → 64 B total.
  s = coll_shape(CollOp::reduce_scatter, 100, DType::f32, 4);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.bytes, 64u);
  EXPECT_EQ(s.send_count, 16u);
  EXPECT_EQ(coll_shape(CollOp::alltoall, 8, DType::f32, 4).count, 0u);  // too small: row skipped
  s = coll_shape(CollOp::all_reduce, 100, DType::f32, 4);               // not sharded: 25 elements
  EXPECT_EQ(s.count, 25u);
  EXPECT_EQ(s.bytes, 100u);
}

TEST(CollOps, NamesRoundTrip) {
  for (CollOp op : all_coll_ops()) EXPECT_EQ(parse_coll_op(coll_op_name(op)), op);
  EXPECT_EQ(all_coll_ops().size(), 9u);
  EXPECT_FALSE(parse_coll_op("allfoo"));
}

CollOptions small(std::vector<CollOp> ops) {
  CollOptions o;
  o.ops = std::move(ops);
  o.min_bytes = 64;
  o.max_bytes = 4096;
  o.step_factor = 8;
  o.iters = 2;
  o.warmup_iters = 1;
  return o;
}

HarnessOptions fast_harness() {
  HarnessOptions h;
  h.min_samples = 2;
  h.max_samples = 3;
  h.min_time = 0;
  h.max_time = 1;
  return h;
}

uint64_t run_threads(const CollOptions& o, int ranks, Runner* runner = nullptr) {
  WorldOptions w;
  w.ranks = ranks;
  w.timeout = std::chrono::milliseconds(20'000);
  uint64_t wrong = 0;
  run_world(w, [&](RankContext& ctx) {
    const uint64_t x = run_coll_on_rank(o, fast_harness(), ctx, runner, true);
    if (ctx.rank == 0) wrong = x;
    return 0;
  });
  return wrong;
}

// The inputs a rank uploads (one pass over its stream) are, element for element, the values the
// references are built from, in every type and for every reduction's value range.
TEST(CollInputs, FilledStreamEqualsEachElementsValue) {
  for (const DType t : {DType::f32, DType::bf16, DType::f64})
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::avg})
      for (const int rank : {0, 5}) {
        const size_t n = 1000;
        std::vector<std::byte> buf(n * dtype_size(t));
        fill_coll_inputs(42, rank, op, 8, t, n, buf.data());
        for (size_t i = 0; i < n; ++i)
          ASSERT_EQ(load_as(t, buf.data(), i), coll_input_value(42, rank, i, op, 8))
              << dtype_name(t) << " " << reduce_op_name(op) << " rank " << rank << " element " << i;
      }
  // Different ranks get different streams.
  size_t same = 0;
  for (size_t i = 0; i < 1000; ++i)
    same += coll_input_value(1, 0, i, ReduceOp::sum, 2) == coll_input_value(1, 1, i, ReduceOp::sum, 2);
  EXPECT_LT(same, 400u);  // 1 in 4 agree by chance
}

TEST(CollThreads, EveryOpIsExactInBothPlacements) {
  for (int ranks : {1, 3, 4}) {
    CollOptions o = small(all_coll_ops());
    o.root = -1;  // every root
    o.redops = {ReduceOp::sum, ReduceOp::prod, ReduceOp::min, ReduceOp::max, ReduceOp::avg};
    EXPECT_EQ(run_threads(o, ranks), 0u) << ranks << " ranks";
  }
}

TEST(CollThreads, ExactForEveryDatatype) {
  CollOptions o = small({CollOp::all_reduce, CollOp::reduce_scatter});
  o.dtypes = {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i8};
  o.redops = {ReduceOp::sum, ReduceOp::avg};
  EXPECT_EQ(run_threads(o, 4), 0u);
}

TEST(CollThreads, OneCorruptedElementIsOneWrong) {
  CollOptions o = small({CollOp::all_reduce});
  o.min_bytes = o.max_bytes = 1024;
  o.corrupt_rank = 2;
  o.corrupt_index = 17;
  bench::RunnerOptions ro;
  ro.harness = fast_harness();
  ro.quiet = true;
  Runner runner(ro, nullptr);
  // One size, out-of-place and in-place, one check each: one wrong element per placement.
  EXPECT_EQ(run_threads(o, 4, &runner), 2u);
  int failed = 0;
  for (const auto& r : runner.results())
    if (r.key == "coll/all_reduce") {
      EXPECT_EQ(r.status, Status::fail);
      EXPECT_EQ(r.extra.at("wrong").get<uint64_t>(), 1u);
      ++failed;
    }
  EXPECT_EQ(failed, 2);
}

TEST(CollThreads, InPlaceCanBeLeftOut) {
  CollOptions o = small({CollOp::all_reduce});
  o.min_bytes = o.max_bytes = 1024;
  o.in_place = false;  // gcbench scan measures one placement
  o.corrupt_rank = 1;
  o.corrupt_index = 3;
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  EXPECT_EQ(run_threads(o, 2, &runner), 1u);  // one placement checked, one element flipped
  int cells = 0;
  for (const auto& r : runner.results())
    if (r.key == "coll/all_reduce") {
      EXPECT_EQ(r.params["inplace"], false);
      ++cells;
    }
  EXPECT_EQ(cells, 1);
}

TEST(CollThreads, CheckOffReportsNoVerdict) {
  CollOptions o = small({CollOp::all_reduce});
  o.min_bytes = o.max_bytes = 1024;
  o.check = 0;
  o.corrupt_rank = 0;  // ignored: nothing is checked
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  EXPECT_EQ(run_threads(o, 2, &runner), 0u);
  ASSERT_FALSE(runner.results().empty());
  EXPECT_TRUE(runner.results()[0].extra.at("wrong").is_null());
  EXPECT_EQ(runner.results()[0].status, Status::pass);
}

TEST(CollThreads, ResultsCarryParamsMetricsAndFit) {
  CollOptions o = small({CollOp::all_gather});
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  run_threads(o, 4, &runner);
  const Result* first = nullptr;
  const Result* fit = nullptr;
  for (const auto& r : runner.results()) {
    if (r.key == "coll/all_gather" && !first) first = &r;
    if (r.key == "coll/all_gather/fit") fit = &r;
  }
  ASSERT_NE(first, nullptr);
  ASSERT_NE(fit, nullptr);
  for (const char* p : {"op", "bytes", "count", "dtype", "redop", "root", "backend", "ranks", "nodes", "ranks_per_node",
                        "mode", "inplace"})
    EXPECT_TRUE(first->params.contains(p)) << p;
  EXPECT_EQ(first->params["backend"], "threads");
  EXPECT_EQ(first->params["ranks"], 4);
  const Metric* busbw = first->metric("busbw");
  const Metric* algbw = first->metric("algbw");
  ASSERT_TRUE(busbw && algbw && busbw->value && algbw->value);
  EXPECT_DOUBLE_EQ(*busbw->value, *algbw->value * 0.75);
  EXPECT_EQ(fit->params["scope"], "intra-node");
}

// Each rank thread is kept on a CPU of its own for the whole cell when the ranks fit the CPUs
// this process may use — the r-th CPU of the process's mask, so the same CPUs in every process —
// recorded per cell in extra.rank_cpus; more ranks than CPUs are not pinned (-1). Afterwards every
// rank thread has its mask back (threads it starts later are not confined to one CPU).
TEST(CollThreads, RankThreadsKeptOnTheirOwnCpusDuringEveryCell) {
  cpu_set_t process;
  CPU_ZERO(&process);
  ASSERT_EQ(sched_getaffinity(0, sizeof(process), &process), 0);
  const int usable = CPU_COUNT(&process);
  for (int ranks : {2, usable + 1}) {
    Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
    std::mutex mu;
    std::vector<bool> mask_back(static_cast<size_t>(ranks), false);
    WorldOptions w;
    w.ranks = ranks;
    w.timeout = std::chrono::milliseconds(20'000);
    run_world(w, [&](RankContext& ctx) {
      run_coll_on_rank(small({CollOp::all_reduce, CollOp::broadcast}), fast_harness(), ctx,
                       ctx.rank == 0 ? &runner : nullptr, true);
      cpu_set_t after;
      CPU_ZERO(&after);
      pthread_getaffinity_np(pthread_self(), sizeof(after), &after);
      std::lock_guard lk(mu);
      mask_back[static_cast<size_t>(ctx.rank)] = CPU_EQUAL(&after, &process);
      return 0;
    });
    int cells = 0;
    for (const Result& r : runner.results()) {
      if (r.key.ends_with("/fit")) continue;
      ASSERT_TRUE(r.extra.contains("rank_cpus")) << r.key;
      ASSERT_EQ(r.extra["rank_cpus"].size(), static_cast<size_t>(ranks)) << r.key;
      for (int k = 0; k < ranks; ++k)
        EXPECT_EQ(r.extra["rank_cpus"][static_cast<size_t>(k)], ranks <= usable ? detail::nth_cpu(process, k) : -1)
            << ranks << " ranks, rank " << k << " of " << r.key;
      ++cells;
    }
    EXPECT_GT(cells, 0);
    for (int k = 0; k < ranks; ++k) EXPECT_TRUE(mask_back[static_cast<size_t>(k)]) << ranks << " ranks, rank " << k;
  }
}

TEST(CollThreads, BadRootIsAUsageError) {
  CollOptions o = small({CollOp::broadcast});
  o.root = 4;
  EXPECT_THROW(run_threads(o, 4), UsageError);
}

TEST(CollTiming, EveryRankSeesTheSameSamples) {
  // The noise rule and the budget must decide identically on every rank, or ranks deadlock.
  WorldOptions w;
  w.ranks = 3;
  std::vector<std::vector<double>> samples(3);
  run_world(w, [&](RankContext& ctx) {
    RankTimer timer(ctx.world_comm, ctx.host_comm, TimingMode::isolated, RankCombine::max, false);
    AgreedClock clock(ctx.host_comm);
    HarnessOptions h;
    h.batch = 1;
    h.min_samples = 5;
    h.max_samples = 200;
    h.noise = 0.01;
    h.max_time = 0.3;
    double x = 1, y = 0;
    const Measurement m = measure(
        timer, [&] { ctx.world_comm.all_reduce(&x, &y, 1, DType::f64, ReduceOp::sum); }, h, {}, clock);
    samples[static_cast<size_t>(ctx.rank)] = m.samples;
    return 0;
  });
  EXPECT_GE(samples[0].size(), 5u);
  EXPECT_EQ(samples[0], samples[1]);
  EXPECT_EQ(samples[0], samples[2]);
}

// Bound launches watch no call of their own (BoundCall::watch): the timer holds one scope per
// batch, so a launch that never returns still ends the run within the timeout, named as the
// bound call asked; without use_bound the same stall is not watched.
TEST(CollTiming, WatchedBatchesEndAStalledLaunch) {
  using namespace std::chrono_literals;
  ThreadWorld world(1);
  const auto comm = world.communicator(0);
  std::mutex mu;
  std::condition_variable fired;
  std::vector<WatchExpiry> seen;
  arm_watchdog(100ms, [&](const WatchExpiry& e) {
    std::lock_guard lk(mu);
    seen.push_back(e);
    fired.notify_all();
  });
  // Unwatched: three times the timeout plus its monitor period, and nothing may fire.
  RankTimer unwatched(*comm, *comm, TimingMode::pipelined, RankCombine::max, false);
  unwatched.time_batch([] { std::this_thread::sleep_for(400ms); }, 1);
  // Watched: the launch stalls until the watchdog has fired (at most 10 s, however late a loaded
  // machine schedules the monitor), so a fixed sleep cannot end it before the expiry.
  const std::function<void()> stall = [&] {
    std::unique_lock lk(mu);
    fired.wait_for(lk, 10s, [&] { return !seen.empty(); });
  };
  RankTimer timer(*comm, *comm, TimingMode::pipelined, RankCombine::max, false);
  timer.use_bound(BoundCall{stall, {}, "MPI collectives"});
  timer.time_batch(stall, 1);
  disarm_watchdog();
  std::lock_guard lk(mu);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].what, "MPI collectives");
}

// A pipelined batch of a bound call is one repeat(batch), as a bare loop; isolated and blocking
// batches call the launch once per op.
TEST(CollTiming, PipelinedBatchesOfABoundCallRunItsLoop) {
  ThreadWorld world(1);
  const auto comm = world.communicator(0);
  int launches = 0, repeated = 0;
  const BoundCall counted{[&] { ++launches; }, [&](int n) { repeated += n; }, nullptr};
  for (auto [mode, blocking, want_launches, want_repeated] :
       {std::tuple{TimingMode::pipelined, false, 0, 7}, std::tuple{TimingMode::pipelined, true, 7, 0},
        std::tuple{TimingMode::isolated, false, 7, 0}}) {
    launches = repeated = 0;
    RankTimer timer(*comm, *comm, mode, RankCombine::max, blocking);
    timer.use_bound(counted);
    timer.time_batch(counted.launch, 7);
    EXPECT_EQ(launches, want_launches) << timing_mode_name(mode) << (blocking ? " -z 1" : "");
    EXPECT_EQ(repeated, want_repeated) << timing_mode_name(mode) << (blocking ? " -z 1" : "");
  }
}

TEST(CollTiming, CombineAndSkew) {
  const std::vector<double> t{2, 4, 6};
  EXPECT_DOUBLE_EQ(combine_rank_times(t, RankCombine::rank0), 2);
  EXPECT_DOUBLE_EQ(combine_rank_times(t, RankCombine::avg), 4);
  EXPECT_DOUBLE_EQ(combine_rank_times(t, RankCombine::min), 2);
  EXPECT_DOUBLE_EQ(combine_rank_times(t, RankCombine::max), 6);
  const RankSkew s = rank_skew({{1, 2}, {1, 4}, {3, 1}});
  // skews 0.5, 0.75, 2/3 → median 2/3; rank 1 slowest in 2 of 3 samples.
  EXPECT_NEAR(s.median_skew, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(s.slowest_rank, 1);
  EXPECT_NEAR(s.slowest_share, 2.0 / 3.0, 1e-12);
}

TEST(CollFit, RecoversAlphaAndBetaFromSyntheticSweep) {
  // t(n) = 5 us + n / (12.5 GB/s), exactly.
  std::vector<double> bytes, seconds;
  for (double n = 8; n <= (1 << 26); n *= 4) {
    bytes.push_back(n);
    seconds.push_back(5e-6 + n / 12.5e9);
  }
  const Result r = coll_fit_result(CollOp::all_reduce, {{"op", "all_reduce"}}, bytes, seconds);
  EXPECT_EQ(r.key, "coll/all_reduce/fit");
  EXPECT_EQ(r.status, Status::pass);
  ASSERT_NE(r.metric("alpha"), nullptr);
  // Exact data: only floating-point rounding of the least-squares sums separates fit and truth.
  EXPECT_NEAR(*r.metric("alpha")->value, 5.0, 5.0 * 1e-6);
  EXPECT_NEAR(*r.metric("beta")->value, 12.5, 12.5 * 1e-6);
  EXPECT_NEAR(*r.metric("n_half")->value, 5e-6 * 12.5e9, 62500 * 1e-5);
  EXPECT_LT(*r.metric("max_rel_residual")->value, 1e-9);
  EXPECT_EQ(r.extra["residuals"].size(), bytes.size());
  // The document names the model's primary source, something a reader of the result can look up.
  EXPECT_NE(r.extra["model"].get<std::string>().find("Hockney, Parallel Computing 20(3), 1994"), std::string::npos)
      << r.extra["model"];
  const Result one = coll_fit_result(CollOp::all_reduce, {}, std::vector<double>{8}, std::vector<double>{1e-6});
  EXPECT_EQ(one.status, Status::waived);
}

TEST(CollOptions, ValidationRefusesImpossibleValues) {
  CollOptions o;
  EXPECT_NO_THROW(validate(o));
  o.step_factor = 1;
  EXPECT_THROW(validate(o), UsageError);
  o = CollOptions{};
  o.max_bytes = 1;
  EXPECT_THROW(validate(o), UsageError);
  o = CollOptions{};
  o.dtypes = {DType::fp8_e4m3};
  EXPECT_THROW(validate(o), UsageError);
  o = CollOptions{};
  o.backend = "pigeon";
  EXPECT_THROW(validate(o), UsageError);
}

// The harness a microsecond-scale family gets from its flags (bench/common/cli.hpp).
HarnessOptions family_harness(std::vector<std::string> args, int samples = kMicrosecondFamilySamples) {
  CLI::App app;
  CommonOptions common;
  add_common_options(app, common, false, true);
  std::reverse(args.begin(), args.end());  // CLI11 parses a reversed vector
  app.parse(args);
  return microsecond_family_harness(app, common.harness, samples);
}

TEST(MicrosecondFamilyHarness, FixedSampleCountUnlessTheNoiseRuleIsAsked) {
  HarnessOptions h = family_harness({});
  EXPECT_EQ(h.min_samples, kMicrosecondFamilySamples);
  EXPECT_EQ(h.max_samples, kMicrosecondFamilySamples);
  h = family_harness({}, 5);
  EXPECT_EQ(h.min_samples, 5);
  EXPECT_EQ(h.max_samples, 5);
  // --noise: the common stopping rule, untouched.
  h = family_harness({"--noise", "0.01"});
  EXPECT_EQ(h.min_samples, HarnessOptions{}.min_samples);
  EXPECT_EQ(h.max_samples, HarnessOptions{}.max_samples);
  EXPECT_DOUBLE_EQ(h.noise, 0.01);
  // An explicit count is the count.
  h = family_harness({"--max-samples", "50"});
  EXPECT_EQ(h.min_samples, 50);
  EXPECT_EQ(h.max_samples, 50);
  h = family_harness({"--min-samples", "3"});
  EXPECT_EQ(h.min_samples, 3);
  EXPECT_EQ(h.max_samples, 3);
  h = family_harness({"--min-samples", "3", "--max-samples", "40"});
  EXPECT_EQ(h.min_samples, 3);
  EXPECT_EQ(h.max_samples, 40);
}

// `gcbench run --seed N` reaches the suite's collectives: every cell's payload is seeded by it.
TEST(CollQuick, TheSuitesSeedSeedsEveryPayload) {
  Runner runner(RunnerOptions{fast_harness(), false, true}, nullptr);
  run_coll_quick(fast_harness(), runner, /*quiet=*/true, 7);
  int cells = 0;
  for (const Result& r : runner.results()) {
    if (!r.extra.contains("seed")) continue;
    EXPECT_EQ(r.extra["seed"], 7u) << r.key;
    ++cells;
  }
  EXPECT_GT(cells, 0);
}

}  // namespace
}  // namespace gcb::bench
