// The planner's cost models on their own: the pipeline formula against theory.hpp's bubble, the
// ring α–β carried between group sizes, the tier of a group, compute rates from calibration
// points, the element-wise roofline and shared-host contention, the element-wise op list against
// gpt_layers.cpp, a rank's share of a measured triad, the 16-bytes-per-parameter rule of
// mixed-precision Adam, the enumeration's rejection reasons, and full recomputation in blocks of
// K layers where it changes what fits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "models/planner/calibration.hpp"
#include "models/planner/layout_space.hpp"
#include "models/planner/planner.hpp"
#include "models/theory/theory.hpp"

namespace gcb::models::planner {
namespace {

// A device without links (communication not costed) so that stages differ only by compute.
Cluster bare_cluster(int gpus, int per_node) {
  Cluster c;
  c.device = "test";
  c.gpus = gpus;
  c.gpus_per_node = per_node;
  c.peak_flops = 1e14;
  c.memory_bytes = 1e12;
  c.memory_bandwidth = 1e12;
  return c;
}

PlanRequest request(const GptConfig& m, int global_batch, Cluster c) {
  PlanRequest r;
  r.model = m;
  r.global_batch = global_batch;
  r.cluster = std::move(c);
  r.efficiency = 0.5;
  return r;
}

Candidate candidate(int dp, int tp, int pp, int mb, int v = 1) {
  return make_candidate({.name = {}, .dp = dp, .tp = tp, .pp = pp}, mb, Recompute::none, v);
}

TEST(PlanModels, PipelineOfEqualStagesHasTheoryBubble) {
  // 8 layers on 4 stages, no embedding cost difference matters: take the bottleneck's share.
  GptConfig m{"t", 8, 256, 8, 256, 128};
  const PlanModel pm = plan_model(request(m, 16, bare_cluster(4, 4)));
  const Prediction p1 = predict(pm, candidate(1, 1, 4, 1));
  const int micro = 16;
  // step part of the pipeline = m·T_max + Σ_{s≠max} T_s; with T_s ≤ T_max the bubble is at most
  // (p − 1)·T_max, the theory's (p − 1)/(m + p − 1) of an equal-stage pipeline.
  const double pipeline = p1.time.step - (p1.time.dp_comm + p1.time.optimizer + p1.time.other_comm);
  EXPECT_LE(p1.time.bubble / pipeline, bubble_fraction(4, micro) + 1e-12);
  EXPECT_GT(p1.time.bubble / pipeline, 0.5 * bubble_fraction(4, micro));
  // Interleaving with v chunks shrinks fill and drain v-fold (Narayanan et al. 2021 §2.2.2);
  // without costed links the stage times are the same, so exactly by 2.
  const Prediction p2 = predict(pm, candidate(1, 1, 4, 1, 2));
  EXPECT_DOUBLE_EQ(p2.time.bubble, p1.time.bubble / 2);
  // No pipeline, no bubble.
  const Prediction p0 = predict(pm, candidate(4, 1, 1, 1));
  EXPECT_EQ(p0.time.bubble, 0.0);
}

TEST(PlanModels, RankZerosGemmTimeIsTheFirstStagesNotTheBottlenecks) {
  // The small CPU model (L 4, C 256, V 4096, T 128) on two stages, uncalibrated, so a GEMM's time
  // is its FLOPs over one rate. Stage 1 holds the LM head [T, C]·[C, V] on top of the same two
  // layers, so it is the bottleneck and its GEMM time exceeds stage 0's by the head's forward and
  // two backward GEMMs per micro-batch: V/(24·C) = 2/3 of the layers' 2 × 12·C² per token.
  // `--verify` compares rank 0's measured matmul time with stage 0's (rank 0 runs stage 0);
  // before, it printed the bottleneck's, 5/3 of it — the ~1.6× "GEMM over-prediction" of pp runs.
  const GptConfig m{"small", 4, 256, 8, 4096, 128};
  const PlanModel pm = plan_model(request(m, 8, bare_cluster(2, 2)));
  const Prediction pp = predict(pm, candidate(1, 1, 2, 1));
  ASSERT_EQ(pp.bottleneck_stage, 1);
  const double rate = 0.5 * 1e14, T = 128, C = 256, V = 4096, micro = 8;
  const double layer = 3 * 2 * T * 12 * C * C;  // forward + two backward GEMMs of one layer, per micro-batch
  EXPECT_NEAR(pp.time.gemm_stage0, micro * 2 * layer / rate, 1e-9 * pp.time.gemm_stage0);
  EXPECT_NEAR(pp.time.gemm - pp.time.gemm_stage0, micro * 3 * 2 * T * C * V / rate, 1e-9 * pp.time.gemm);
  // One stage: the bottleneck is stage 0, and both figures are the same.
  const Prediction dp = predict(pm, candidate(2, 1, 1, 1));
  EXPECT_EQ(dp.time.gemm_stage0, dp.time.gemm);
}

TEST(PlanModels, RingAlphaBetaCarriesToOtherGroupSizes) {
  Calibration cal;
  // A measured 2-rank all-reduce: α 10 µs, β (algorithm bandwidth) 10 GB/s.
  cal.coll.push_back({"all_reduce", 2, 1, 10e-6, 10e9, "threads"});
  const CommModel comm(bare_cluster(8, 8), cal);
  const AlphaBeta same = comm.model(Collective::all_reduce, 2, Tier::intra_node);
  EXPECT_DOUBLE_EQ(same.alpha_s, 10e-6);
  EXPECT_DOUBLE_EQ(same.bytes_per_s, 10e9);
  // 8 ranks: 2·7 ring steps of α/2 each; bus bandwidth 10 GB/s · 1 kept, algbw = busbw / (2·7/8).
  const AlphaBeta eight = comm.model(Collective::all_reduce, 8, Tier::intra_node);
  EXPECT_DOUBLE_EQ(eight.alpha_s, 14 * 10e-6 / 2);
  EXPECT_DOUBLE_EQ(eight.bytes_per_s, 10e9 * 1.0 / (14.0 / 8));
  // Another op from the same fit: an all-gather of 8 has 7 steps and bus factor 7/8.
  const AlphaBeta ag = comm.model(Collective::all_gather, 8, Tier::intra_node);
  EXPECT_DOUBLE_EQ(ag.alpha_s, 7 * 10e-6 / 2);
  EXPECT_DOUBLE_EQ(ag.bytes_per_s, 10e9 / (7.0 / 8));
  // Nothing measured across nodes and no link rate: not costed, and said so.
  const AlphaBeta inter = comm.model(Collective::all_reduce, 4, Tier::inter_node);
  EXPECT_EQ(inter.bytes_per_s, 0.0);
  EXPECT_NE(inter.source.find("not costed"), std::string::npos);
  EXPECT_EQ(comm.seconds(Collective::all_reduce, 1e6, 4, Tier::inter_node), 0.0);
  EXPECT_DOUBLE_EQ(comm.seconds(Collective::all_reduce, 1e6, 2, Tier::intra_node), 10e-6 + 1e6 / 10e9);
}

TEST(PlanModels, GroupTiersFollowMegatronOrder) {
  const Cluster c = bare_cluster(64, 8);
  EXPECT_EQ(group_tier(c, 8, 1), Tier::intra_node);   // tp 8: one node
  EXPECT_EQ(group_tier(c, 2, 4), Tier::intra_node);   // dp 2 over tp 4: 8 ranks, one node
  EXPECT_EQ(group_tier(c, 4, 4), Tier::inter_node);   // dp 4 over tp 4: spans two nodes
  EXPECT_EQ(group_tier(c, 8, 8), Tier::inter_node);   // pp over a full node
  EXPECT_EQ(group_tier(c, 1, 64), Tier::intra_node);  // a group of one
}

TEST(PlanModels, ComputeRatesFromCalibrationPoints) {
  Calibration cal;
  cal.gemm.push_back({256, 256, 256, 2.0 * 256 * 256 * 256 / 1e10});        // 10 GFLOP/s
  cal.gemm.push_back({1024, 1024, 1024, 2.0 * 1024 * 1024 * 1024 / 4e10});  // 40 GFLOP/s
  const ComputeModel cm(1e12, 0.5, 1e10, cal);
  EXPECT_DOUBLE_EQ(cm.gemm_seconds({256, 256, 256}), 2.0 * 256 * 256 * 256 / 1e10);  // a measured shape: its rate
  // 512³ lies halfway (in log2) between them: the geometric mean of the rates, 20 GFLOP/s.
  EXPECT_NEAR(cm.gemm_seconds({512, 512, 512}), 2.0 * 512 * 512 * 512 / 2e10, 1e-15);
  // Uncalibrated attention: the efficiency × the peak.
  const AttnShapeCall a{1, 8, 128, 32, true, false};
  EXPECT_DOUBLE_EQ(cm.attention_seconds(a), a.flops() / (0.5 * 1e12));
  EXPECT_DOUBLE_EQ(cm.elementwise_seconds(1e10), 1.0);
}

TEST(PlanModels, MixedPrecisionAdamIsSixteenBytesPerParameterWithoutZero) {
  // bf16 parameters and gradients, fp32 master, m and v: 2 + 2 + 4 + 4 + 4 (ZeRO paper §3.1).
  GptConfig m = named_config("gpt2-124m");
  PlanRequest r = request(m, 8, bare_cluster(1, 1));
  r.precision = Precision::bf16;
  const PlanModel pm = plan_model(r);
  const Prediction p = predict(pm, candidate(1, 1, 1, 1));
  const double states = p.memory.at(MemCategory::params) + p.memory.at(MemCategory::grads) +
                        p.memory.at(MemCategory::master) + p.memory.at(MemCategory::adam_m) +
                        p.memory.at(MemCategory::adam_v);
  EXPECT_EQ(states, 16.0 * static_cast<double>(stage_padded_params(m, {1, 1, 1}, 0)));
  // ZeRO-3 over 8 divides all 16 bytes by 8 (the gathered unit aside, counted once).
  const PlanModel pm8 = plan_model([&] {
    PlanRequest q = request(m, 8, bare_cluster(8, 8));
    q.precision = Precision::bf16;
    return q;
  }());
  const Candidate z3 = make_candidate({.name = {}, .dp = 8, .zero = ZeroStage::three}, 1, Recompute::none);
  const Prediction p8 = predict(pm8, z3);
  EXPECT_LT(p8.memory.at(MemCategory::adam_m), p.memory.at(MemCategory::adam_m) / 7.9);
}

// Full recomputation in blocks of K layers (Chen et al. 2016 §3–4) where it changes what fits: 48
// layers of tiny (T 256, bf16) on one device. K = 2 keeps 24 block outputs y = 2·256·32 bytes
// instead of 48 and one more layer's tensors X = 16.5·y; with a limit between the two, none,
// selective and plain full recomputation do not fit and the plan gains a full-k2 row, as fast as
// full (the same FLOPs). With K fixed (space.recompute_every) there is no such row.
TEST(PlanModels, BlockRecomputationRowWhereItChangesWhatFits) {
  GptConfig m = named_config("tiny");
  m.layers = 48;
  m.seq = 256;
  PlanRequest r = request(m, 1, bare_cluster(1, 1));
  r.space.micro_batches = {1};
  r.space.offload = {Offload::none};  // offload would fit too (OffloadRowWhereOnlyItFits, test_plan_cli.cpp)
  const PlanModel pm = plan_model(r);
  Candidate full = candidate(1, 1, 1, 1);
  full.recompute = Recompute::full;
  Candidate k2 = full;
  k2.recompute_every = 2;
  const double y = 2.0 * 256 * 32, X = 16.5 * y;
  const double full_bytes = candidate_memory(pm, full).total(), k2_bytes = candidate_memory(pm, k2).total();
  EXPECT_EQ(full_bytes - k2_bytes, 24 * y - X);
  Candidate k3 = full;
  k3.recompute_every = 3;
  EXPECT_EQ(candidate_memory(pm, k3).total() - full_bytes, 2 * X - 32 * y);  // 16 outputs: more than K = 1
  r.cluster.memory_bytes = (full_bytes + k2_bytes) / 2;
  EXPECT_EQ(smallest_fitting_block(plan_model(r), full), 2);
  const PlanOutcome out = make_plan(r);
  ASSERT_EQ(out.fits.size(), 1u);
  EXPECT_EQ(out.fits[0].candidate.name(), "dp1-mb1-full-k2");
  EXPECT_EQ(out.fits[0].options.recompute_every, 2);
  EXPECT_EQ(out.oom.size(), 3u);  // none, selective, full
  EXPECT_EQ(out.candidates, 4u);
  const Prediction plain = predict(plan_model(r), full);
  EXPECT_DOUBLE_EQ(out.fits[0].time.step, plain.time.step);
  EXPECT_EQ(out.fits[0].hfu, plain.hfu);
  r.space.recompute_every = 1;
  EXPECT_TRUE(make_plan(r).fits.empty());
  r.cluster.memory_bytes = k2_bytes - 1;
  EXPECT_EQ(smallest_fitting_block(plan_model(r), full), std::nullopt);
}

TEST(PlanModels, EnumerationExplainsEveryRejection) {
  const GptConfig m{"t", 4, 256, 8, 4096, 128};
  const PlanModel pm = plan_model(request(m, 8, bare_cluster(32, 8)));
  SearchSpace space;
  space.micro_batches = {1, 16};
  std::vector<Rejection> rejected;
  const std::vector<Candidate> cands = enumerate_candidates(pm, space, rejected);
  ASSERT_FALSE(cands.empty());
  for (const Candidate& c : cands) {
    EXPECT_EQ(c.layout.dp * c.layout.tp * c.layout.pp, 32);
    EXPECT_LE(c.layout.tp, 8);
    EXPECT_EQ(candidate_error(pm, c, false), "");
  }
  auto rejected_for = [&](const std::string& what) {
    for (const Rejection& r : rejected)
      if (r.what == what) return r.reason;
    return std::string();
  };
  EXPECT_EQ(rejected_for("dp1-tp32-pp1"),
            "tp 32 > 8 GPUs per node (tp all-reduces in every layer need the intra-node links)");
  EXPECT_EQ(rejected_for("dp1-tp4-pp8"), "pp 8 > 4 layers");
  EXPECT_EQ(rejected_for("dp32-tp1-pp1"), "global batch 8 not divisible by dp 32");
  EXPECT_EQ(rejected_for("dp8-tp2-pp2-1f1b-mb16-none"), "global batch 8 not divisible by dp 8 × micro-batch 16");
}

TEST(PlanModels, ElementwiseCallsTakeTheSlowerRoofAndContentionScalesComputeCalls) {
  Calibration cal;
  cal.gemm.push_back({256, 256, 256, 1e-3});
  ComputeModel cm(1e12, 0.5, 1e10, cal);  // memory roof 10 GB/s
  SharedHostRates shared;
  shared.ceiling[static_cast<size_t>(EwOp::gelu_forward)] = 1e8;  // 100 M elements/s in cache
  shared.contention = 1.5;
  cm.set_shared_host(shared);
  // GELU of 1M fp32 elements, 8 MB: 0.8 ms at the memory roof, 10 ms at its ceiling: the ceiling.
  EXPECT_DOUBLE_EQ(cm.elementwise_seconds(EwCall{EwOp::gelu_forward, 1e6, 8e6, 2}), 2 * 1e6 / 1e8);
  // 1 GB of GELU traffic: 0.1 s at the roof, more than 10 ms at the ceiling: the roof.
  EXPECT_DOUBLE_EQ(cm.elementwise_seconds(EwCall{EwOp::gelu_forward, 1e6, 1e9, 1}), 1e9 / 1e10);
  // An op without a measured ceiling: the memory roof alone.
  EXPECT_DOUBLE_EQ(cm.elementwise_seconds(EwCall{EwOp::residual_add, 1e6, 12e6, 1}), 12e6 / 1e10);
  // A GEMM keeps its calibrated time; the layout scales it (below).
  EXPECT_DOUBLE_EQ(cm.gemm_seconds({256, 256, 256}), 1e-3);
}

TEST(PlanModels, ContentionFollowsHowManyOtherRanksComputeAtOnce) {
  // dp and tp peers always compute together: the whole κ measured with all ranks at once.
  EXPECT_DOUBLE_EQ(layout_contention(1.5, 2, 1, 1, 4), 1.5);
  EXPECT_DOUBLE_EQ(layout_contention(1.5, 1, 2, 1, 1), 1.5);
  EXPECT_DOUBLE_EQ(layout_contention(1.5, 1, 1, 1, 4), 1.0);  // one rank: alone
  // Two stages, m micro-batches: the other stage is busy m − 1 of a stage's m slots.
  EXPECT_DOUBLE_EQ(layout_contention(1.5, 1, 1, 2, 2), 1.0 + 0.5 * 1.0 / 2);
  EXPECT_DOUBLE_EQ(layout_contention(1.5, 1, 1, 2, 8), 1.0 + 0.5 * 7.0 / 8);
  // Four stages, one micro-batch: never two at once.
  EXPECT_DOUBLE_EQ(layout_contention(2.0, 1, 1, 4, 1), 1.0);
  // dp 2 × pp 2, m = 2: the dp peer always (1) and both ranks of the other stage half the time
  // (2 × 1/2): 2 of the 3 other ranks.
  EXPECT_DOUBLE_EQ(layout_contention(1.6, 2, 1, 2, 2), 1.0 + 0.6 * 2.0 / 3);
}

// Σ count × elements of `op` over `calls`.
double elements_of(const std::vector<EwCall>& calls, EwOp op) {
  double n = 0;
  for (const EwCall& c : calls)
    if (c.op == op) n += c.count * c.elements;
  return n;
}

TEST(PlanModels, ElementwiseOpsFollowTheEnginesLayers) {
  // gpt_layers.cpp per layer: 2 LayerNorms, 2 residual adds, GELU on R × 4C/t, biases of qkv, proj,
  // fc, fcproj; backward the GELU gradient, 4 bias gradients, 2 LayerNorm backwards; the head a
  // final LayerNorm, cross-entropy over R × V/t, its gradient, and the input gradient zeroed.
  TrainOptions o;
  o.model = GptConfig{"t", 3, 64, 4, 512, 32};
  o.micro_batch = 2;
  const ParallelLayout lay{1, 2, 1};  // tp 2, no SP
  const StageWork w = stage_work(o, lay, 0);
  const double R = 2 * 32, C = 64, Cl = 32, L = 3, V = 512;
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::layernorm_forward), (2 * L + 1) * R * C);
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::gelu_forward), L * R * 4 * Cl);
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::residual_add), 2 * L * R * C);
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::bias_forward), L * R * (3 * Cl + C + 4 * Cl + C));
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::cross_entropy_forward), R * V / 2);
  EXPECT_EQ(elements_of(w.forward.elementwise, EwOp::embedding_forward), R * C);
  EXPECT_EQ(elements_of(w.backward.elementwise, EwOp::gelu_backward), L * R * 4 * Cl);
  EXPECT_EQ(elements_of(w.backward.elementwise, EwOp::layernorm_backward), (2 * L + 1) * R * C);
  EXPECT_EQ(elements_of(w.backward.elementwise, EwOp::bias_backward), L * R * (C + 4 * Cl + C + 3 * Cl));
  EXPECT_EQ(elements_of(w.backward.elementwise, EwOp::cross_entropy_backward), R * V / 2);
  EXPECT_TRUE(w.recompute.elementwise.empty());
  // fp32: GELU reads x and writes y, 8 bytes per element; its backward 12.
  for (const EwCall& c : w.forward.elementwise) {
    if (c.op == EwOp::gelu_forward) {
      EXPECT_EQ(c.bytes, 8 * c.elements);
    }
  }
  for (const EwCall& c : w.backward.elementwise) {
    if (c.op == EwOp::gelu_backward) {
      EXPECT_EQ(c.bytes, 12 * c.elements);
    }
  }
  // The optimizer: AdamW over the rank's padded parameters, and their gradients zeroed.
  EXPECT_EQ(elements_of(w.optimizer, EwOp::adamw), static_cast<double>(stage_padded_params(o.model, lay, 0)));
  EXPECT_EQ(elements_of(w.optimizer, EwOp::fill), static_cast<double>(stage_padded_params(o.model, lay, 0)));
  // Full recomputation reruns each layer's forward element-wise ops (not the head's).
  o.recompute = Recompute::full;
  const StageWork f = stage_work(o, lay, 0);
  EXPECT_EQ(elements_of(f.recompute.elementwise, EwOp::gelu_forward), L * R * 4 * Cl);
  EXPECT_EQ(elements_of(f.recompute.elementwise, EwOp::layernorm_forward), 2 * L * R * C);
}

TEST(PlanModels, ARanksShareOfTheTriadComesFromTheClosestThreadCount) {
  Calibration cal;
  EXPECT_FALSE(rank_bandwidth(cal, 2, 1));
  cal.triad.push_back({20e9, 1, 1 << 20});
  // Only a single-thread triad: assumed to scale to both ranks' threads (and said so).
  std::optional<RankBandwidth> b = rank_bandwidth(cal, 2, 1);
  ASSERT_TRUE(b);
  EXPECT_DOUBLE_EQ(b->bytes_per_s, 20e9);
  EXPECT_NE(b->source.find("assumed"), std::string::npos);
  // A triad of 2 threads at once: each of 2 one-thread ranks streams half of it.
  cal.triad.push_back({30e9, 2, 1 << 25});
  b = rank_bandwidth(cal, 2, 1);
  EXPECT_DOUBLE_EQ(b->bytes_per_s, 15e9);
  EXPECT_EQ(b->source.find("assumed"), std::string::npos);
  // One rank of 2 threads: the 2-thread figure whole.
  EXPECT_DOUBLE_EQ(rank_bandwidth(cal, 1, 2)->bytes_per_s, 30e9);
}

// --offload optimizer is priced from `mem` results: the best pinned copy-engine h2d and d2h copies
// set the host link, the best host triad / GPUs per node the CPU AdamW's rate; the offload time is
// the gradients out, the host AdamW's traffic (g, m, v, master read; m, v, master and the bf16
// parameters written) and the parameters back, each at its rate; the device keeps no optimizer state.
TEST(PlanModels, OffloadIsPricedAtTheMeasuredHostLinkAndHostTriad) {
  auto copy = [](const char* key, double bytes, double seconds, const char* engine, const char* memory) {
    Result r;
    r.key = key;
    r.params = {{"engine", engine}, {"direction", "unidirectional"}, {"host_memory", memory}, {"bytes", bytes}};
    r.model = {{"bytes", bytes}};
    r.samples = {seconds};
    return r;
  };
  ResultDocument doc;
  doc.results.push_back(copy("mem/copy/h2d", 1e9, 0.05, "ce", "pinned"));    // 20 GB/s
  doc.results.push_back(copy("mem/copy/h2d", 1e6, 0.0001, "ce", "pinned"));  // 10 GB/s: not the best
  doc.results.push_back(copy("mem/copy/h2d", 1e9, 0.01, "ce", "pageable"));  // pageable: ignored
  doc.results.push_back(copy("mem/copy/d2h", 1e9, 0.04, "ce", "pinned"));    // 25 GB/s
  doc.results.push_back(copy("mem/copy/d2h", 1e9, 0.001, "sm", "pinned"));   // SM copy: ignored
  Result triad;
  triad.key = "mem/host/triad";
  triad.params = {{"threads", 64}};
  triad.model = {{"bytes", 3e9}};
  triad.samples = {0.01};  // 300 GB/s
  doc.results.push_back(triad);
  Calibration cal;
  add_calibration(cal, doc, {.cpu = false, .dtype = "bf16"});
  ASSERT_TRUE(cal.h2d_bytes_per_s && cal.d2h_bytes_per_s && cal.host_triad_bytes_per_s);
  EXPECT_DOUBLE_EQ(*cal.h2d_bytes_per_s, 20e9);
  EXPECT_DOUBLE_EQ(*cal.d2h_bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(*cal.host_triad_bytes_per_s, 300e9);

  GptConfig m{"t", 4, 256, 8, 256, 128};
  PlanRequest r = request(m, 8, bare_cluster(8, 4));
  r.calibration = cal;
  const PlanModel pm = plan_model(r);
  EXPECT_DOUBLE_EQ(pm.cluster.h2d_bandwidth, 20e9);
  EXPECT_DOUBLE_EQ(pm.cluster.host_memory_bandwidth, 300e9 / 4);
  Candidate c =
      make_candidate({.name = {}, .dp = 8, .zero = ZeroStage::one}, 1, Recompute::none, 1, Offload::optimizer);
  EXPECT_EQ(c.name(), "dp8-zero1-mb1-none-offload");
  const Prediction p = predict(pm, c);
  const double own = static_cast<double>(stage_padded_params(m, {8, 1, 1}, 0)) / 8;  // bf16, ZeRO-1 shard
  // Gradients out, then the host AdamW and the copies back pipelined over the stage's 5 units (4
  // layers and the embedding): the longer of the two plus a fifth of the shorter.
  const double adamw = (2 + 24 + 2) * own / (300e9 / 4), back = 2 * own / 20e9;
  EXPECT_DOUBLE_EQ(p.time.offload, 2 * own / 25e9 + std::max(adamw, back) + std::min(adamw, back) / 5);
  EXPECT_EQ(p.memory.at(MemCategory::master) + p.memory.at(MemCategory::adam_m), 0.0);
  EXPECT_DOUBLE_EQ(p.memory.host, 16 * own);
  c.offload = Offload::none;
  const Prediction q = predict(pm, c);
  EXPECT_EQ(q.time.offload, 0.0);
  EXPECT_DOUBLE_EQ(q.memory.total() - p.memory.total(), 12 * own);  // master, m, v left the device
}

}  // namespace
}  // namespace gcb::models::planner
