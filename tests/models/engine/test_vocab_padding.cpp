// Vocabulary padding (config.hpp padded_vocab): every vocabulary is padded to a multiple of
// 128·tp, tp 1 included. The padded rows must change nothing: the tp runs of
// `tiny` with such a vocabulary give the single-rank losses, parameters (after 3 AdamW steps) and
// gradients (one step) within the tolerances of test_parallel (rtol 1e-5: the same terms summed
// in a different order), and the bytes they hold are the padded sizes the theory counts.
// V = 65 at tp 2 pads to 256, so rank 1's shard is only padding; V = 301 pads to 512, so rank 1
// holds 45 real rows and 211 padded ones; V = 513 pads to 768 (rank 1: 129 real, 255 padded).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "collectives/thread_communicator.hpp"
#include "models/backend/cpu/cpu_backend.hpp"
#include "models/engine/engine.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

TEST(VocabPadding, PadsToAMultipleOf128TimesTpAtEveryTp) {
  EXPECT_EQ(padded_vocab(50257, 1), 50304);  // 393 · 128, as Megatron-LM and llm.c pad GPT-2
  EXPECT_EQ(padded_vocab(50304, 1), 50304);  // a multiple already: unchanged
  EXPECT_EQ(padded_vocab(50304, 2), 50432);  // divisible by 2 but not by 256: padded
  EXPECT_EQ(padded_vocab(64, 1), 128);       // tiny
  EXPECT_EQ(padded_vocab(256, 2), 256);
  EXPECT_EQ(padded_vocab(50257, 2), 50432);  // 197 · 256
  EXPECT_EQ(padded_vocab(50257, 4), 50688);  // 99 · 512
  EXPECT_EQ(padded_vocab(65, 2), 256);
  EXPECT_EQ(padded_vocab(301, 2), 512);
  EXPECT_EQ(padded_vocab(513, 2), 768);
}

// Adam's eps 1e-2 (test_parallel uses 1e-4): with a vocabulary of a few hundred rows most wte rows
// see few tokens, and gradients near eps turn summation-order noise δg (≈1e-7 here, see the
// gradient test below) into update differences up to lr·δg/eps — 1e-5 at eps 1e-4, above the
// 1e-6 the tolerance allows for a small weight, for padded (V 301, 513) and unpadded (V 303 at
// tp 3 … ) vocabularies alike. At eps 1e-2 that bound is 1e-7, while a wrong gradient still moves
// a weight by ~lr·|Δg|/eps, far outside the tolerance.
TrainOptions with_vocab(TrainOptions o, int vocab) {
  o.model.vocab = vocab;
  o.optim.adam.eps = 1e-2f;
  return o;
}

TEST(VocabPadding, TensorParallelRunsMatchSingleRank) {
  using Case = test::LayoutCase;
  constexpr auto Z0 = ZeroStage::none, Z1 = ZeroStage::one;
  constexpr auto G = PipeSchedule::gpipe;
  for (int vocab : {65, 301, 513}) {
    for (const Case& k :
         {Case{"tp2", {1, 2, 1}, 2, 2, 1, false, Z0, G}, Case{"tp2-sp", {1, 2, 1}, 2, 2, 2, true, Z0, G},
          Case{"dp2-tp2-zero1", {2, 2, 1}, 2, 1, 2, false, Z1, G}}) {
      const TrainOptions o = with_vocab(test::case_options(k), vocab);
      const std::string what = std::string(k.name) + " vocab " + std::to_string(vocab);
      const auto got = test::run_layout(k.lay, o);
      const test::RankOutcome want = test::single_rank_reference(k.lay, o);
      test::expect_close(got[0], want, o.model, test::Tolerance{}, what);
      // Padded parameters are real memory: a rank's embedding unit holds V_p/2 wte rows
      // (tiny: C 32, T 16; a layer (12C² + 7C)/2 + 6C = 6448), and the theory counts the same.
      const size_t rows = vocab == 65 ? 128 : vocab == 301 ? 256 : 384, layer = 6448;
      EXPECT_EQ(got[0].padded, 2 * layer + rows * 32 + 16 * 32 + 2 * 32) << what;
      EXPECT_EQ(got[0].padded, stage_padded_params(o.model, k.lay, 0)) << what;
    }
  }
}

// One step with lr 0: the canonical gradients of every real parameter agree with one rank's. The
// tolerance is 1e-5 of the largest gradient (summation-order differences scale with the terms
// summed, not with the component's own size, which may be ~0).
std::vector<float> grads_after_one_step(const ParallelLayout& lay, const TrainOptions& o) {
  std::vector<float> grads;
  run_ranks(lay.world(), [&](Communicator& world) {
    ParallelGroups ctx = make_parallel_groups(world, lay);
    CpuBackend be;
    auto engine = make_training_step(be, ctx, o);
    engine->step();
    std::vector<float> g = engine->full_grads();
    if (world.rank() == 0) grads = std::move(g);
  });
  return grads;
}

TEST(VocabPadding, GradientsOfRealParametersMatchSingleRank) {
  for (int vocab : {65, 301, 513}) {
    TrainOptions o = with_vocab(test::tiny_options(2, 2, 1), vocab);
    o.optim.adam.lr = 0.0f;
    const std::vector<float> want = grads_after_one_step(ParallelLayout{}, o);
    const std::vector<float> got = grads_after_one_step(ParallelLayout{1, 2, 1}, o);
    ASSERT_EQ(got.size(), want.size());
    float scale = 0.0f;
    for (float w : want) scale = std::max(scale, std::abs(w));
    ASSERT_GT(scale, 0.0f);
    size_t bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::abs(got[i] - want[i]) > 1e-5f * scale && bad++ < 5) {
        ADD_FAILURE() << "vocab " << vocab << " grad " << i << " got " << got[i] << " want " << want[i];
      }
    }
    EXPECT_EQ(bad, 0u) << "vocab " << vocab;
  }
}

}  // namespace
}  // namespace gcb::models
