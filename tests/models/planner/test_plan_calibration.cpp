// The planner reads a `gcbench scan` document as calibration: a real scan of 2 rank threads that
// pretend to be nodes (--test-fake-nodes) gives its per-node triad and GEMM, a send/recv α–β
// from the pair stage (median one-way latency, median bandwidth) and an all-reduce α–β from the
// collective stage's points — and `plan --calibration scan.json` prices with them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "core/stats.hpp"
#include "models/planner/calibration.hpp"
#include "models/planner/comm_model.hpp"
#include "tests/bench/run_cli.hpp"

namespace gcb::models::planner {
namespace {

namespace fs = std::filesystem;

double median_of(const std::vector<double>& v) { return percentile(v, 0.5); }

class ScanCalibration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = (fs::temp_directory_path() / ("gcb-plan-scan-" + std::to_string(getpid()) + ".json")).string();
    const test::CliRun r = test::run_gcbench(
        "scan --ranks 2 --test-fake-nodes --stages device,pairs,coll --budget 18 --tolerance 0.99 --device-size 1M "
        "--gemm-size 128 --pair-size 256K --coll-size 256K --quiet --json " +
            path_,
        true);
    ASSERT_EQ(r.code, 0) << r.out;
  }
  static void TearDownTestSuite() { fs::remove(path_); }
  static std::string path_;
};
std::string ScanCalibration::path_;

TEST_F(ScanCalibration, PairsCollectivesTriadAndGemmBecomeCalibration) {
  const ResultDocument doc = load_document(path_);
  Calibration cal;
  add_calibration(cal, doc, {});
  // What the document holds, by hand: the pairs' latencies and bandwidths, the triads, the GEMMs.
  std::vector<double> lat, bw;
  int triads = 0, gemms = 0, triad_threads = 0;
  std::vector<std::pair<double, double>> allreduce;  // bytes, seconds
  for (const Result& r : doc.results) {
    if (r.status != Status::pass) continue;
    if (r.key == "p2p/latency") lat.push_back(*r.metric("latency")->value * 1e-9);
    if (r.key == "p2p/bandwidth") bw.push_back(*r.metric("bandwidth")->value * 1e9);
    if (r.key == "mem/host/triad") {
      ++triads;
      triad_threads = r.params.at("threads").get<int>();  // OpenMP's default: the environment's
    }
    if (r.key == "gemm/fp32") ++gemms;
    if (r.key == "coll/all_reduce") allreduce.push_back({r.params.at("bytes").get<double>(), *r.metric("time")->value});
  }
  ASSERT_FALSE(lat.empty());
  ASSERT_FALSE(bw.empty());
  ASSERT_FALSE(allreduce.empty());
  EXPECT_EQ(static_cast<int>(cal.triad.size()), triads);
  EXPECT_EQ(static_cast<int>(cal.gemm.size()), gemms);
  EXPECT_GT(triads, 0);
  EXPECT_EQ(cal.triad.front().threads, triad_threads);
  const auto fit = [&](const std::string& op) {
    return std::find_if(cal.coll.begin(), cal.coll.end(), [&](const CollFit& f) { return f.op == op && f.nodes == 2; });
  };
  // The pair stage: a two-rank send/recv across nodes, α the median one-way latency, β the median
  // bandwidth.
  const auto sr = fit("sendrecv");
  ASSERT_NE(sr, cal.coll.end());
  EXPECT_EQ(sr->ranks, 2);
  EXPECT_DOUBLE_EQ(sr->alpha_s, median_of(lat));
  EXPECT_DOUBLE_EQ(sr->bytes_per_s, median_of(bw));
  // The collective stage: the all-reduce of the whole job through its point(s): the line passes
  // through the mean point (one size: α = 2(n−1) ring steps × the pair latency, capped at half).
  const auto ar = fit("all_reduce");
  ASSERT_NE(ar, cal.coll.end());
  EXPECT_EQ(ar->ranks, 2);
  double n = 0, t = 0;
  for (const auto& [b, s] : allreduce) {
    n += b / static_cast<double>(allreduce.size());
    t += s / static_cast<double>(allreduce.size());
  }
  EXPECT_NEAR(ar->alpha_s + n / ar->bytes_per_s, t, 1e-9 * t + 1e-15);
  // The comm model prices an inter-node all-reduce of 2 with it.
  Cluster c;
  c.gpus = 2;
  c.gpus_per_node = 1;
  const CommModel comm(c, cal);
  const AlphaBeta ab = comm.model(Collective::all_reduce, 2, Tier::inter_node);
  EXPECT_DOUBLE_EQ(ab.alpha_s, ar->alpha_s);
  EXPECT_DOUBLE_EQ(ab.bytes_per_s, ar->bytes_per_s);
}

TEST_F(ScanCalibration, PlanReadsTheScanDocument) {
  const test::CliRun r = test::run_gcbench(
      "plan --model tiny --gpu cpu --gpus 2 --global-batch 4 --layout dp2 --no-host-probe "
      "--calibration " +
          path_,
      true);
  ASSERT_EQ(r.code, 0) << r.out;
  // The scan's triad, as one rank's share of it.
  EXPECT_NE(r.out.find("per rank (calibration: mem triad of "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GEMMs: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("GEMMs: 0.68"), std::string::npos) << r.out;  // calibrated, not the efficiency
}

}  // namespace
}  // namespace gcb::models::planner
