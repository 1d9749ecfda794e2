// `--attn auto` as one decision for the run (models/engine/attention_agreement.hpp): with fake timings
// under which the ranks, each choosing alone, would run different attention kernels, every rank
// adopts the same choice before the first step, runs exactly that one, and that one is recorded.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "models/engine/attention_agreement.hpp"
#include "models/engine/engine.hpp"
#include "models/engine/parallel_groups.hpp"
#include "tests/models/backend/fake_device.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::test {
namespace {

const auto kCompute = reinterpret_cast<DeviceStream>(uintptr_t{1});
constexpr uintptr_t kFirstCommStream = 100;

const AttnImplId kOurs = kernels::attn::find_attention_impl("ours").value();
const AttnImplId kCudnn = kernels::attn::find_attention_impl("cudnn").value();
const std::map<AttnImplId, std::string> kBothUsable = {{kOurs, ""}, {kCudnn, ""}};

AttentionTimes times(double ours, double cudnn) { return {{kOurs, ours}, {kCudnn, cudnn}}; }

std::string alone(const AttentionTimes& t) {
  return attention_choice_name(choose_attention(AttentionRequest::automatic, DType::bf16, kBothUsable, t));
}

TEST(AttentionAgreement, AgreedTimesAreTheSlowestRanksPerImplementation) {
  const auto agreed = agreed_attention_times({times(1e-3, 2e-3), std::nullopt, times(3e-3, 2.5e-3)});
  ASSERT_TRUE(agreed.has_value());
  EXPECT_EQ(agreed->at(kOurs), 3e-3);
  EXPECT_EQ(agreed->at(kCudnn), 2.5e-3);
  EXPECT_FALSE(agreed_attention_times({std::nullopt, std::nullopt}).has_value());
  EXPECT_FALSE(agreed_attention_times({}).has_value());
  // The reason names how many ranks the times come from.
  const AttentionChoice c = choose_attention(AttentionRequest::automatic, DType::bf16, kBothUsable, agreed, 2);
  EXPECT_NE(c.why.find("the slowest of 2 ranks: ours 3.000 ms, cudnn 2.500 ms"), std::string::npos) << c.why;
}

struct RankRun {
  std::optional<AttentionChoice> adopted;
  int adopted_calls = 0;
  std::set<std::string> attention_kernels;  // the attention paths the rank's kernels ran
  std::string recorded;                     // notes()' "attention"
  std::vector<double> losses;
};

// dp2 × pp2 with 1F1B: the agreement is a world collective before the first step, so the stages
// (which reach their first attention at different times) cannot wait on each other inside it.
TEST(AttentionAgreement, RanksThatWouldDisagreeRunTheSameRecordedChoice) {
  const ParallelLayout lay{2, 1, 2};
  TrainOptions o = tiny_options(2, 2, 2);
  o.schedule = PipeSchedule::one_f_one_b;
  const int n = lay.world();
  // Alone, ranks 0 and 2 pick ours and ranks 1 and 3 cudnn; the slowest ranks' times are
  // ours 3 ms and cudnn 2.6 ms, so every rank runs cudnn.
  const std::vector<AttentionTimes> measured{times(1e-3, 2e-3), times(3e-3, 2.5e-3), times(1.5e-3, 2.6e-3),
                                             times(2.8e-3, 1e-3)};
  ASSERT_EQ(alone(measured[0]), "ours");
  ASSERT_EQ(alone(measured[1]), "cudnn");
  std::vector<RankRun> runs(static_cast<size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    const auto r = static_cast<size_t>(world.rank());
    FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
    FakeDeviceBackend be(d.ops, kCompute);
    be.fake_attention_times = measured[r];
    auto engine = make_training_step(be, d.ctx, o);
    for (int s = 0; s < 2; ++s) runs[r].losses.push_back(engine->step());
    runs[r].adopted = be.adopted;
    runs[r].adopted_calls = be.adopted_calls;
    for (const auto& op : d.ops.log())
      if (op.what.starts_with("attention_")) runs[r].attention_kernels.insert(op.what.substr(op.what.find(':') + 1));
    for (const auto& [k, v] : be.notes().text)
      if (k == "attention") runs[r].recorded = v;
  });
  const std::vector<RankOutcome> cpu = run_layout(lay, o, 2);
  for (size_t r = 0; r < runs.size(); ++r) {
    const RankRun& me = runs[r];
    ASSERT_TRUE(me.adopted.has_value()) << "rank " << r;
    EXPECT_EQ(me.adopted_calls, 1) << "rank " << r;
    EXPECT_EQ(me.adopted->impl, kCudnn) << "rank " << r;
    EXPECT_EQ(me.attention_kernels, (std::set<std::string>{"cudnn"})) << "rank " << r;
    EXPECT_EQ(me.recorded.rfind("cudnn (auto:", 0), 0u) << me.recorded;
    EXPECT_NE(me.recorded.find("slowest of 4 ranks: ours 3.000 ms, cudnn 2.600 ms"), std::string::npos) << me.recorded;
    EXPECT_EQ(me.losses, cpu[r].losses) << "rank " << r;  // the agreement changes no value
  }
}

// Nothing to measure (the CPU oracle, an explicit --attn, fp32): nothing adopted, the step as before.
TEST(AttentionAgreement, NoRankMeasuringAdoptsNothing) {
  const ParallelLayout lay{2, 1, 1};
  const TrainOptions o = tiny_options(2, 2, 1);
  std::vector<int> adopted(2, -1);
  run_ranks(lay.world(), [&](Communicator& world) {
    FakeRankDevice d(world, lay, kCompute, kFirstCommStream);
    FakeDeviceBackend be(d.ops, kCompute);
    make_training_step(be, d.ctx, o)->step();
    adopted[static_cast<size_t>(world.rank())] = be.adopted_calls;
  });
  EXPECT_EQ(adopted, (std::vector<int>{0, 0}));
}

}  // namespace
}  // namespace gcb::models::test
