// The LM head in chunks of rows (TrainOptions::logit_rows): a run whose head holds a few rows of
// logits at a time equals the run that holds all B·T of them — losses and parameters after 3 AdamW
// steps within test_parallel's tolerance (rtol 1e-5: only wte's gradient sums its rows in another
// order, chunk by chunk) — on one rank and under vocabulary-parallel layouts with a padded
// vocabulary; the activation peak falls by exactly the logits no longer held, and the theory
// counts the same bytes. A chunk that does not divide B·T leaves a shorter last chunk.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models {
namespace {

TEST(ChunkedLogits, ChunkedHeadEqualsTheWholeHeadUnderEveryVocabularyLayout) {
  using Case = test::LayoutCase;
  constexpr auto Z0 = ZeroStage::none, Z1 = ZeroStage::one;
  constexpr auto G = PipeSchedule::gpipe, F = PipeSchedule::one_f_one_b;
  for (const Case& k :
       {Case{"single", {1, 1, 1}, 2, 2, 1, false, Z0, G}, Case{"tp2", {1, 2, 1}, 2, 2, 1, false, Z0, G},
        Case{"tp2-sp", {1, 2, 1}, 2, 2, 2, true, Z0, G}, Case{"dp2-tp2-zero1", {2, 2, 1}, 2, 1, 2, false, Z1, G},
        Case{"pp2-1f1b", {1, 1, 2}, 2, 2, 2, false, Z0, F}}) {
    TrainOptions whole = test::case_options(k);
    whole.model.vocab = 301;       // padded to 512 at tp 2: rank 1 holds 45 real rows
    whole.optim.adam.eps = 1e-2f;  // as test_vocab_padding: rare wte rows would amplify order noise
    const int rows = whole.micro_batch * whole.model.seq;
    for (int chunk : {5, 16}) {  // 5 leaves a last chunk of rows % 5; 16 = one sequence
      TrainOptions chunked = whole;
      chunked.logit_rows = chunk;
      const std::string what = std::string(k.name) + " chunk " + std::to_string(chunk);
      const auto want = test::run_layout(k.lay, whole), got = test::run_layout(k.lay, chunked);
      for (size_t r = 0; r < got.size(); ++r) {
        test::expect_close(got[r], want[r], whole.model, test::Tolerance{}, what + " rank " + std::to_string(r));
        // The last stage held rows·V_l logits, now chunk·V_l (fp32 here).
        const bool last = want[r].pp_rank == k.lay.pp - 1;
        const size_t Vl = static_cast<size_t>(padded_vocab(whole.model.vocab, k.lay.tp) / k.lay.tp);
        const size_t saved = last ? static_cast<size_t>(rows - chunk) * Vl * sizeof(float) : 0;
        EXPECT_EQ(want[r].mem[MemCategory::activations].peak - got[r].mem[MemCategory::activations].peak, saved)
            << what << " rank " << r;
        EXPECT_EQ(got[r].mem[MemCategory::activations].peak, activation_bytes(chunked, k.lay, want[r].pp_rank))
            << what << " rank " << r;
      }
    }
  }
}

// Chunk sizes of 0 and ≥ B·T are the whole head: the same ops, bit for bit.
TEST(ChunkedLogits, AChunkOfAllRowsIsTheWholeHeadBitForBit) {
  TrainOptions o = test::tiny_options(2, 2, 1);
  const ParallelLayout one{1, 1, 1};
  const auto whole = test::run_layout(one, o, 2);
  o.logit_rows = o.micro_batch * o.model.seq + 7;
  const auto big = test::run_layout(one, o, 2);
  EXPECT_EQ(big[0].losses, whole[0].losses);
  EXPECT_EQ(big[0].params, whole[0].params);
  EXPECT_EQ(big[0].mem[MemCategory::activations].peak, whole[0].mem[MemCategory::activations].peak);
}

}  // namespace
}  // namespace gcb::models
