// The torch peer's rows (models/run/torch_peer.cpp) from a peer JSON written here: the tokens/s ratio,
// the loss comparison against the stated tolerance, WAIVED rows where either side has no figure,
// and the merging of the alternating rounds (models::kPeerOrder). (The live run of
// scripts/peers/torch_gpt.py is train_torch_peer_live, label python.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench/train/train.hpp"
#include "models/run/torch_peer.hpp"

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

// Two torch rounds (eager first, then compile first): per mode the mean of the rounds' figures in
// the first round's order, the first round's losses, each round's tokens/s; a mode without a
// figure in any round has none, with that round's reason.
TEST(TrainPeer, TorchRoundsMergeIntoTheirMean) {
  const nlohmann::json r1 =
      peer({{"mode", "eager"}, {"median_s", 0.4}, {"tokens_per_s", 500.0}, {"losses", {4.0, 3.9}}},
           {{"mode", "compile"}, {"median_s", 0.2}, {"tokens_per_s", 1000.0}, {"losses", {4.0, 3.9}}});
  const nlohmann::json r2 =
      peer({{"mode", "compile"}, {"tokens_per_s", nullptr}, {"reason", "recompile failed"}},
           {{"mode", "eager"}, {"median_s", 0.2}, {"tokens_per_s", 700.0}, {"losses", {4.0, 3.95}}});
  const nlohmann::json m = models::merge_torch_rounds({r1, r2});
  ASSERT_TRUE(m.value("available", false));
  EXPECT_EQ(m.at("order"), models::kPeerOrder);
  const auto& res = m.at("results");
  ASSERT_EQ(res.size(), 2u);
  EXPECT_EQ(res[0].at("mode"), "eager");
  EXPECT_DOUBLE_EQ(res[0].at("tokens_per_s").get<double>(), 600.0);
  EXPECT_DOUBLE_EQ(res[0].at("median_s").get<double>(), 0.3);
  EXPECT_EQ(res[0].at("rounds_tokens_per_s"), (std::vector<double>{500.0, 700.0}));
  EXPECT_EQ(res[0].at("losses"), (std::vector<double>{4.0, 3.9}));  // the first round's
  EXPECT_EQ(res[1].at("mode"), "compile");
  EXPECT_TRUE(res[1].at("tokens_per_s").is_null());
  EXPECT_EQ(res[1].at("reason"), "recompile failed");
  // An unavailable round makes the whole peer unavailable, with its reason.
  const nlohmann::json gone = models::merge_torch_rounds({r1, {{"available", false}, {"reason", "CUDA OOM"}}});
  EXPECT_FALSE(gone.value("available", true));
  EXPECT_EQ(gone.at("reason"), "CUDA OOM");
}

// Ours in two rounds: tokens/s the mean where the layout passed in both, rounds listed; the ratio
// row divides the two means and says the order and each side's rounds.
TEST(TrainPeer, OurRoundsMergeAndTheRatioUsesBothSidesMeans) {
  Result other = ours({4.0, 3.9}, 2000.0);
  other.key = "train/tp2";
  Result other_failed = other;
  other_failed.status = Status::error;
  other_failed.reason = "rank 1 died";
  const std::vector<Result> merged =
      models::merge_our_rounds({{ours({4.0, 3.9}, 1000.0), other}, {ours({4.0, 3.9}, 1400.0), other_failed}});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_DOUBLE_EQ(*merged[0].metric("tokens_per_s")->value, 1200.0);
  EXPECT_EQ(merged[0].extra.at("rounds_tokens_per_s"), (std::vector<double>{1000.0, 1400.0}));
  EXPECT_DOUBLE_EQ(*merged[1].metric("tokens_per_s")->value, 2000.0);  // the first round's, untouched
  EXPECT_FALSE(merged[1].extra.contains("rounds_tokens_per_s"));

  const nlohmann::json r1 = peer({{"mode", "eager"}, {"tokens_per_s", 500.0}, {"losses", {4.0, 3.9}}},
                                 {{"mode", "compile"}, {"tokens_per_s", 1000.0}, {"losses", {4.0, 3.9}}});
  const nlohmann::json r2 = peer({{"mode", "compile"}, {"tokens_per_s", 1400.0}, {"losses", {4.0, 3.9}}},
                                 {{"mode", "eager"}, {"tokens_per_s", 700.0}, {"losses", {4.0, 3.9}}});
  const std::vector<Result> rows =
      models::train_torch_ratios({merged[0]}, models::merge_torch_rounds({r1, r2}), models::Precision::fp32);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "train/dp1/vs_torch_eager");
  EXPECT_DOUBLE_EQ(*rows[0].metrics[0].value, 2.0);  // 1200 ÷ 600
  EXPECT_EQ(rows[0].extra.at("order"), models::kPeerOrder);
  EXPECT_EQ(rows[0].extra.at("ours_rounds_tokens_per_s"), (std::vector<double>{1000.0, 1400.0}));
  EXPECT_EQ(rows[0].extra.at("torch_rounds_tokens_per_s"), (std::vector<double>{500.0, 700.0}));
  EXPECT_DOUBLE_EQ(*rows[1].metrics[0].value, 1.0);  // 1200 ÷ 1200
}

TEST(TrainPeer, ToleranceFollowsThePrecision) {
  EXPECT_DOUBLE_EQ(models::torch_loss_tolerance(models::Precision::fp32), 1e-4);
  EXPECT_DOUBLE_EQ(models::torch_loss_tolerance(models::Precision::bf16), 1.0 / 128.0);
}

}  // namespace
}  // namespace gcb::bench
