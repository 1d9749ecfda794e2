// The result of a layout from its ranks' figures (training_result.hpp), a pure function: step time
// across ranks (min / median / max, the slowest rank named), NVML's flags and clocks over ranks, the
// backend's notes; the WAIVED row of a layout that did not run; the SM clock of an NVML sample.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "models/model/sweep.hpp"
#include "models/run/training_result.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

RankFigures rank(double step, double sm_clock, uint64_t throttle) {
  RankFigures f;
  f.step_median = f.step_p10 = f.step_p90 = f.step_mean = step;
  f.loss = 4.0;
  f.phases.assign(train_phase_names().size(), 0.0);
  f.memory_peak.assign(kMemCategories, 0.0);
  f.sm_clock_mhz = sm_clock;
  f.throttle = throttle;
  return f;
}

LayoutMeasurement three_ranks() {
  LayoutMeasurement m;
  m.layout = parse_sweep("dp3", 3)[0];
  m.options = apply_layout(test::tiny_options(2, 1, 1), m.layout);
  m.ranks = 3;
  m.global_batch = 3;
  m.ranks_figures = {rank(0.2, 1980, 0), rank(0.5, 1755, 0x4), rank(0.3, 1900, 0x20)};
  m.samples = {0.2, 0.2};
  m.losses = {4.1, 4.0};
  m.backend = "cuda";
  m.timer = "cuda events on the compute stream";
  m.notes.text = {{"attention", "ours (--attn ours)"}};
  m.notes.figures = {{"pool_used_peak", 1024.0}};
  return m;
}

TEST(TrainingResult, StepTimeAcrossRanksNamesTheSlowest) {
  const Result r = training_result(three_ranks(), 1e12, "flag:--peak-flops");
  EXPECT_DOUBLE_EQ(r.extra["step_time_min_rank"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(r.extra["step_time_median_rank"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(r.extra["step_time_max_rank"].get<double>(), 0.5);
  EXPECT_EQ(r.extra["slowest_rank"].get<int>(), 1);
  EXPECT_EQ(r.timer, "cuda events on the compute stream");
}

TEST(TrainingResult, ThrottleFlagsAndTheLowestClockOverRanksAndTheBackendNotes) {
  const Result r = training_result(three_ranks(), 1e12, "flag:--peak-flops");
  EXPECT_TRUE(r.throttled);
  EXPECT_EQ(r.extra["throttle_reasons_any_rank"].get<uint64_t>(), 0x24u);
  EXPECT_DOUBLE_EQ(r.extra["sm_clock_mhz_min_rank"].get<double>(), 1755.0);
  EXPECT_EQ(r.extra["backend_notes"]["attention"], "ours (--attn ours)");
  EXPECT_DOUBLE_EQ(r.extra["backend_notes"]["pool_used_peak"].get<double>(), 1024.0);

  LayoutMeasurement cpu = three_ranks();
  cpu.notes = {};
  for (RankFigures& f : cpu.ranks_figures) f.sm_clock_mhz = 0, f.throttle = 0;
  const Result c = training_result(cpu, 1e12, "flag:--peak-flops");
  EXPECT_FALSE(c.throttled);
  EXPECT_FALSE(c.extra.contains("sm_clock_mhz_min_rank"));
  EXPECT_FALSE(c.extra.contains("backend_notes"));
}

// A device backend's per-category bytes on the device go beside the requested bytes and formulas.
TEST(TrainingResult, DeviceMemoryPerCategorySitsBesideTheRequestedBytes) {
  LayoutMeasurement m = three_ranks();
  MemoryStats d;
  d.add(MemCategory::params, 4096);
  d.add(MemCategory::activations, 1024);
  d.remove(MemCategory::activations, 1024);
  m.device_memory = d;
  const Result r = training_result(m, 1e12, "flag:--peak-flops");
  EXPECT_DOUBLE_EQ(r.extra["memory"]["params"]["device_persistent"].get<double>(), 4096.0);
  EXPECT_DOUBLE_EQ(r.extra["memory"]["params"]["device"].get<double>(), 4096.0);
  EXPECT_DOUBLE_EQ(r.extra["memory"]["activations"]["device"].get<double>(), 1024.0);  // the peak
  EXPECT_DOUBLE_EQ(r.extra["memory"]["activations"]["device_persistent"].get<double>(), 0.0);
  const Result cpu = training_result(three_ranks(), 1e12, "flag:--peak-flops");
  EXPECT_FALSE(cpu.extra["memory"]["params"].contains("device"));
}

TEST(TrainingResult, WaivedRowCarriesTheLayoutAndTheReason) {
  const LayoutSpec l = parse_sweep("tp2", 2)[0];
  const Result r =
      waived_training_result(l, apply_layout(test::tiny_options(2, 1, 1), l), 4, "cuda", "no GPU: no driver");
  EXPECT_EQ(r.key, "train/" + l.name);
  EXPECT_EQ(r.status, Status::waived);
  EXPECT_EQ(r.reason, "no GPU: no driver");
  EXPECT_EQ(r.params["tp"], 2);
  EXPECT_EQ(r.params["global_batch"], 4);
  EXPECT_EQ(r.params["backend"], "cuda");
  EXPECT_TRUE(r.metrics.empty());
}

// NVML may give no SM clock (a null field) or no sample at all (null): 0, never an exception.
TEST(TrainingResult, SmClockOfAnNvmlSample) {
  EXPECT_DOUBLE_EQ(sampled_sm_clock({{"sm_clock_mhz", 1980}, {"power_mw", nullptr}}), 1980.0);
  EXPECT_DOUBLE_EQ(sampled_sm_clock({{"sm_clock_mhz", nullptr}}), 0.0);
  EXPECT_DOUBLE_EQ(sampled_sm_clock(nlohmann::json(nullptr)), 0.0);
  EXPECT_DOUBLE_EQ(sampled_sm_clock(nlohmann::json::object()), 0.0);
}

// A utilisation above 100 % is a wrong denominator: an ERROR that names it, not a PASS to gate on.
TEST(TrainingResult, UtilisationAboveOneHundredPercentIsAnErrorNamingThePeak) {
  const Result ok = training_result(three_ranks(), 1e12, "flag:--peak-flops");
  EXPECT_EQ(ok.status, Status::pass);
  const double mfu = *ok.metric("mfu")->value;
  ASSERT_GT(mfu, 0.0);
  const double tiny_peak = 1e12 * mfu / 150.0;  // this step would read 150 % of it
  const Result bad = training_result(three_ranks(), tiny_peak, "measured:sgemm 256^3");
  EXPECT_EQ(bad.status, Status::error);
  EXPECT_NE(bad.reason.find("exceed 100 %"), std::string::npos) << bad.reason;
  EXPECT_NE(bad.reason.find("measured:sgemm 256^3"), std::string::npos) << bad.reason;
}

}  // namespace
}  // namespace gcb::models
