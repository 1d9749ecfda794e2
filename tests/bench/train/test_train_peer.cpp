// The torch peer's rows (models/torch_peer.cpp) from a peer JSON written here: the tokens/s ratio,
// the loss comparison against the stated tolerance, and WAIVED rows where either side has no
// figure. (The live run of scripts/peers/torch_gpt.py is train_torch_peer_live, label python.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/train/train.hpp"
#include "models/torch_peer.hpp"

namespace gcb::bench {
namespace {

Result ours(std::vector<double> losses, double tokens_per_s = 1000.0) {
  Result r;
  r.key = "train/dp1";
  r.params = {{"layout", "dp1"}, {"backend", "cpu"}};
  r.metrics.push_back(Metric{"tokens_per_s", tokens_per_s, "tok/s", true, std::nullopt, ""});
  r.extra = {{"losses", losses}};
  return r;
}

nlohmann::json peer(const nlohmann::json& eager, const nlohmann::json& compile) {
  return {{"available", true}, {"torch", "2.x"}, {"impl", "plain"},
          {"device", "cpu"},   {"threads", 2},   {"results", {eager, compile}}};
}

TEST(TrainPeer, RatioIsOursOverTorchAndLossesWithinToleranceAgree) {
  const nlohmann::json eager = {
      {"mode", "eager"}, {"median_s", 0.5}, {"tokens_per_s", 500.0}, {"losses", {4.0, 3.9000001}}};
  const nlohmann::json compile = {{"mode", "compile"}, {"tokens_per_s", nullptr}, {"reason", "no C++ compiler"}};
  const std::vector<Result> rows =
      models::train_torch_ratios({ours({4.0, 3.9})}, peer(eager, compile), models::Precision::fp32);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "train/dp1/vs_torch_eager");
  EXPECT_EQ(rows[0].status, Status::pass) << rows[0].reason;
  ASSERT_EQ(rows[0].metrics.size(), 1u);
  EXPECT_DOUBLE_EQ(*rows[0].metrics[0].value, 2.0);  // 1000 ÷ 500
  EXPECT_NEAR(rows[0].extra["loss_max_rel_diff"].get<double>(), 1e-7 / 3.9000001, 1e-12);
  EXPECT_EQ(rows[1].key, "train/dp1/vs_torch_compile");
  EXPECT_EQ(rows[1].status, Status::waived);
  EXPECT_NE(rows[1].reason.find("no C++ compiler"), std::string::npos) << rows[1].reason;
}

TEST(TrainPeer, LossBeyondTheToleranceFails) {
  const nlohmann::json eager = {{"mode", "eager"}, {"tokens_per_s", 500.0}, {"losses", {4.0, 3.8}}};
  const nlohmann::json compile = {{"mode", "compile"}, {"tokens_per_s", 400.0}, {"losses", {4.0}}};
  const std::vector<Result> rows =
      models::train_torch_ratios({ours({4.0, 3.9})}, peer(eager, compile), models::Precision::bf16);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].status, Status::fail);  // 0.1 / 3.8 > 2^-7
  EXPECT_NE(rows[0].reason.find("loss differs"), std::string::npos) << rows[0].reason;
  EXPECT_EQ(rows[1].status, Status::pass) << rows[1].reason;  // only the steps both ran are compared
  EXPECT_DOUBLE_EQ(*rows[1].metrics[0].value, 2.5);
}

TEST(TrainPeer, NoPeerOrNoRunOfOursIsWaived) {
  const std::vector<Result> none = models::train_torch_ratios(
      {ours({4.0})}, {{"available", false}, {"reason", "torch not importable"}}, models::Precision::fp32);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].key, "train/vs_torch");
  EXPECT_EQ(none[0].status, Status::waived);
  EXPECT_NE(none[0].reason.find("torch not importable"), std::string::npos);

  Result waived = ours({});
  waived.status = Status::waived;
  waived.reason = "no GPU";
  waived.metrics.clear();
  const nlohmann::json eager = {{"mode", "eager"}, {"tokens_per_s", 500.0}, {"losses", {4.0}}};
  const std::vector<Result> rows = models::train_torch_ratios({waived}, peer(eager, eager), models::Precision::fp32);
  ASSERT_EQ(rows.size(), 2u);
  for (const Result& r : rows) {
    EXPECT_EQ(r.status, Status::waived);
    EXPECT_NE(r.reason.find("no GPU"), std::string::npos) << r.reason;
  }
}

// When none of our layouts ran, torch is not run: the rows say why ours did not (were the script
// run, the missing peers folder would give one "train/vs_torch" row about the script instead).
TEST(TrainPeer, NothingOfOursRanSoTorchIsNotRun) {
  ASSERT_EQ(setenv("GCB_PEERS_DIR", "/nonexistent/peers", 1), 0);
  Result waived = ours({});
  waived.status = Status::waived;
  waived.reason = "no GPU: no NVIDIA driver found";
  waived.metrics.clear();
  models::TrainRequest r;
  const std::vector<Result> rows = train_torch_peer_results(r, {waived});
  unsetenv("GCB_PEERS_DIR");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "train/dp1/vs_torch_eager");
  EXPECT_EQ(rows[1].key, "train/dp1/vs_torch_compile");
  for (const Result& x : rows) {
    EXPECT_EQ(x.status, Status::waived);
    EXPECT_NE(x.reason.find("no NVIDIA driver"), std::string::npos) << x.reason;
  }
}

TEST(TrainPeer, ToleranceFollowsThePrecision) {
  EXPECT_DOUBLE_EQ(models::torch_loss_tolerance(models::Precision::fp32), 1e-4);
  EXPECT_DOUBLE_EQ(models::torch_loss_tolerance(models::Precision::bf16), 1.0 / 128.0);
}

}  // namespace
}  // namespace gcb::bench
