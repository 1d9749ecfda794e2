// The analytic theory (models/theory/theory.hpp) on its own, without running anything: FLOPs per token
// against published values, ZeRO's per-stage model-state bytes in fp32 and mixed precision, the
// bubble, and one entry point that covers any layout. The engine tests check that measurements
// equal these formulas; here they are checked against independent arithmetic.
#include <gtest/gtest.h>

#include "models/theory/theory.hpp"

namespace gcb::models {
namespace {

TEST(Theory, FlopsPerTokenBothConventions) {
  const GptConfig c = named_config("gpt2-124m");
  const double N = 124'439'808.0, lct = 12.0 * 768 * 1024;
  EXPECT_DOUBLE_EQ(model_flops_per_token(c, FlopsConvention::causal), 6 * N + 6 * lct);
  EXPECT_DOUBLE_EQ(model_flops_per_token(c, FlopsConvention::palm), 6 * N + 12 * lct);
  // llm.c prints 803.5M with the padded vocabulary 50304 (N = 124,475,904); unpadded 803.2M.
  EXPECT_NEAR(model_flops_per_token(c, FlopsConvention::causal) / 1e6, 803.2, 0.1);
  EXPECT_NEAR(model_flops_per_token(c, FlopsConvention::palm) / 1e6, 859.9, 0.1);
}

TEST(Theory, HardwareFlopsWithRecompute) {
  const GptConfig c = named_config("tiny");
  const double lct = 2.0 * 32 * 16;
  const double mf = model_flops_per_token(c, FlopsConvention::causal);
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(c, FlopsConvention::causal, Recompute::none), mf);
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(c, FlopsConvention::causal, Recompute::selective), mf + 2 * lct);
  EXPECT_DOUBLE_EQ(
      hardware_flops_per_token(c, FlopsConvention::palm, Recompute::full),
      model_flops_per_token(c, FlopsConvention::palm) + 2.0 * 2 * static_cast<double>(layer_param_count(c)) + 4 * lct);
}

TEST(Theory, ZeroStateBytesAreThePapersRowsInMixedPrecision) {
  // ZeRO paper Fig. 1 (Ψ = 7.5B, N_d = 64, K = 12): 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per device.
  const size_t psi = 7'500'000'000, n = 64;
  const PrecisionPolicy mixed = precision_policy(Precision::bf16);
  const double gb = 1e9;
  EXPECT_NEAR(static_cast<double>(zero_state_bytes(ZeroStage::none, psi, n, mixed).total()) / gb, 120.0, 0.05);
  EXPECT_NEAR(static_cast<double>(zero_state_bytes(ZeroStage::one, psi, n, mixed).total()) / gb, 31.4, 0.05);
  EXPECT_NEAR(static_cast<double>(zero_state_bytes(ZeroStage::two, psi, n, mixed).total()) / gb, 16.6, 0.05);
  EXPECT_NEAR(static_cast<double>(zero_state_bytes(ZeroStage::three, psi, n, mixed).total()) / gb, 1.875, 0.005);
  // Row by row: 2Ψ + 2Ψ + 12Ψ/N_d at stage 1, the 12 being master 4 + m 4 + v 4.
  const StateBytes one = zero_state_bytes(ZeroStage::one, 640, 64, mixed);
  EXPECT_EQ(one.params, 2u * 640);
  EXPECT_EQ(one.grads, 2u * 640);
  EXPECT_EQ(one.master, 4u * 10);
  EXPECT_EQ(one.adam_m, 4u * 10);
  EXPECT_EQ(one.adam_v, 4u * 10);
  // fp32: the parameters are the master copy (K = 8): 16 bytes per parameter at stage 0.
  const StateBytes fp32 = zero_state_bytes(ZeroStage::none, 640, 64, precision_policy(Precision::fp32));
  EXPECT_EQ(fp32.total(), 16u * 640);
  EXPECT_EQ(fp32.master, 0u);
}

TEST(Theory, BubbleIsPMinusOneOverMPlusPMinusOne) {
  EXPECT_DOUBLE_EQ(bubble_fraction(1, 8), 0.0);
  EXPECT_DOUBLE_EQ(bubble_fraction(2, 4), 1.0 / 5.0);
  EXPECT_DOUBLE_EQ(bubble_fraction(8, 8), 7.0 / 15.0);
}

TEST(Theory, InterleavedBubbleShrinksWithModelChunks) {
  EXPECT_DOUBLE_EQ(interleaved_bubble_fraction(1, 8, 2), 0.0);
  EXPECT_DOUBLE_EQ(interleaved_bubble_fraction(4, 8, 1), bubble_fraction(4, 8));
  // Narayanan et al. 2021 §2.2.2: bubble / ideal = (p − 1)/(v·m).
  const double f = interleaved_bubble_fraction(8, 16, 2);
  EXPECT_DOUBLE_EQ(f / (1 - f), 7.0 / 32.0);
}

TEST(Theory, NarayananEquationThree) {
  // GPT 1.7B of their Table 1: l 24, h 2304, s 2048, V 51200, B 512.
  GptConfig c{"gpt-1.7b", 24, 2304, 24, 51200, 2048};
  const double B = 512, s = 2048, l = 24, h = 2304, V = 51200;
  const double full = narayanan_flops_per_iteration(c, 512, true);
  EXPECT_DOUBLE_EQ(full, 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h)));
  EXPECT_NEAR(full / 1e16, 1.5467, 0.0001);
  // Without recomputation one forward of the layers (24Bslh² + 4Bs²hl) less; the logits stay.
  const double none = narayanan_flops_per_iteration(c, 512, false);
  EXPECT_NEAR(full - none, 24 * B * s * l * h * h + 4 * B * s * s * h * l, 1e-6 * full);
}

TEST(Theory, MaterializedAttentionIsKorthikantisFiveASquaredSB) {
  // Korthikanti et al. 2022 Table 2: 5·a·s²·b bytes per layer in 16-bit with dropout, a/t heads.
  TrainOptions o;
  o.model = GptConfig{"m", 2, 64, 8, 128, 32};
  o.micro_batch = 3;
  o.precision = Precision::bf16;
  EXPECT_EQ(materialized_attention_bytes(o, {1, 2, 1}, true), 5u * 4 * 32 * 32 * 3);
  EXPECT_EQ(materialized_attention_bytes(o, {1, 2, 1}, false), 2u * 4 * 32 * 32 * 3);
  o.precision = Precision::fp32;
  EXPECT_EQ(materialized_attention_bytes(o, {1, 1, 1}, true), 9u * 8 * 32 * 32 * 3);
}

// Full recomputation in blocks of K layers (Chen et al. 2016 §3–4): ⌈L/K⌉ block outputs y per
// micro-batch in flight and one working set of K layers X (its K − 1 inner outputs included), so
// ⌈L/K⌉·y·slots + K·X − y: O(L/K + K), against hand-computed bytes. tiny (C 32, 4 heads, T 16)
// in fp32 with B = 1: y = 4·16·32 = 2048, X = 4·(4·16·32 + 12·16·32) + 4·(4·16 + 16·4) = 33280.
TEST(Theory, BlockRecomputationKeepsBlockOutputsAndOneBlock) {
  TrainOptions o;
  ConfigOverrides ov;
  ov.layers = 12;
  o.model = apply_overrides(named_config("tiny"), ov);
  const ParallelLayout one{1, 1, 1};
  const size_t y = 2048, X = 33280;
  const size_t none = activation_bytes(o, one, 0);
  o.recompute = Recompute::full;
  const size_t rest = none - 12 * X;  // stage input and output gradient, scratch, head
  // K: 1 (plain full), 2, 3, 4, 5 (the last block of 2 layers), 12 (one block: every layer's tensors, as none).
  const std::pair<int, size_t> want[] = {{1, 11 * y + X},    {2, 5 * y + 2 * X}, {3, 3 * y + 3 * X},
                                         {4, 2 * y + 4 * X}, {5, 2 * y + 5 * X}, {12, 12 * X}};
  for (const auto& [k, layers] : want) {
    o.recompute_every = k;
    EXPECT_EQ(activation_bytes(o, one, 0), rest + layers) << "K = " << k;
  }
  // With micro-batches in flight the block outputs multiply, the working set does not: GPipe on 2
  // stages with m = 8 keeps 8 slots on each stage of 12 layers, 8·⌈12/K⌉·y + K·X − y, least at
  // K = 2 ≈ √(8·12·y/X) = 2.4.
  o.model.layers = 24;
  o.grad_accum = 8;
  o.schedule = PipeSchedule::gpipe;
  const ParallelLayout pp2{1, 1, 2};
  o.recompute_every = 1;
  const size_t k1 = activation_bytes(o, pp2, 0);
  const std::pair<int, size_t> saved[] = {{2, 48 * y - X}, {3, 64 * y - 2 * X}, {4, 72 * y - 3 * X}};
  size_t best = k1;
  int best_k = 1;
  for (const auto& [k, less] : saved) {
    o.recompute_every = k;
    const size_t bytes = activation_bytes(o, pp2, 0);
    EXPECT_EQ(bytes, k1 - less) << "K = " << k;
    if (bytes < best) {
      best = bytes;
      best_k = k;
    }
  }
  EXPECT_EQ(best_k, 2);
  // Still one more forward of every layer, whatever K.
  EXPECT_DOUBLE_EQ(hardware_flops_per_token(o.model, FlopsConvention::causal, Recompute::full),
                   model_flops_per_token(o.model, FlopsConvention::causal) +
                       2.0 * o.model.layers * static_cast<double>(layer_param_count(o.model)) +
                       2.0 * o.model.layers * o.model.hidden * o.model.seq);
}

TEST(Theory, OneEntryPointCoversAnyLayoutWithoutRunning) {
  // GPT-3 175B on 1024 GPUs, dp 8 × tp 8 × pp 16, ZeRO-1, bf16, SP, 1F1B, m = 16: what a planner
  // asks. Every stage has its states, activations and communication; the model states add up
  // to the whole model's.
  TrainOptions o;
  o.model = named_config("gpt3-175b");
  o.zero = ZeroStage::one;
  o.micro_batch = 1;
  o.grad_accum = 16;
  o.sp = true;
  o.schedule = PipeSchedule::one_f_one_b;
  o.precision = Precision::bf16;
  const ParallelLayout lay{8, 8, 16};
  const StepTheory th = step_theory(o, lay);
  ASSERT_EQ(th.stages.size(), 16u);
  EXPECT_EQ(th.tokens_per_step, 8 * 16 * 2048);
  EXPECT_DOUBLE_EQ(th.bubble, 15.0 / 31.0);
  double params = 0;
  for (const StageTheory& s : th.stages) {
    EXPECT_GT(s.activation_bytes, 0u);
    EXPECT_EQ(s.states.params, 2 * s.padded_params);  // bf16, not sharded at ZeRO-1
    EXPECT_GT(s.comm_bytes[static_cast<size_t>(CommKind::tp_all_gather)], 0);
    params += static_cast<double>(s.padded_params) * 8;  // × tp ranks
  }
  // Stages hold every layer once and the embedding twice (both ends): ≈ 175B + 0.6B.
  EXPECT_NEAR(params / 1e9, 175.6, 0.6);
}

}  // namespace
}  // namespace gcb::models
