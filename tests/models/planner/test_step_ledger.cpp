// The step ledger (step_ledger.hpp) against arithmetic written out: one rank's GEMM FLOPs and
// launches per step with and without full recomputation, the attention rows' compulsory bytes,
// the collectives' bytes against theory.hpp's comm_bytes for a 3D layout, the floor rule.
#include <gtest/gtest.h>

#include <string>

#include "models/model/config.hpp"
#include "models/planner/step_ledger.hpp"
#include "models/theory/theory.hpp"
#include "tests/models/engine/layout_runs.hpp"

namespace gcb::models::planner {
namespace {

const LedgerRow* find(const std::vector<LedgerRow>& rows, const std::string& family) {
  for (const LedgerRow& r : rows)
    if (r.family == family) return &r;
  return nullptr;
}

// tiny with 3 layers, B 2, m 2, fp32: per micro-batch the layers' GEMMs are 24·R·C² forward (qkv
// 6, proj 2, fc 8, fcproj 8) and twice that backward, the head's 2·R·V_p·C three times; 4 GEMM
// launches per layer forward, 8 backward, 1 + 2 for the head. Full recomputation adds each layer's
// forward once more.
TEST(StepLedger, GemmFlopsAndLaunchesAsWrittenOut) {
  TrainOptions o = test::tiny_options(3, 2, 2);
  const ParallelLayout one{1, 1, 1};
  const double R = 2.0 * o.model.seq, C = o.model.hidden, V = padded_vocab(o.model.vocab, 1), L = 3, m = 2;
  const auto rows = step_ledger(o, one, 0);
  const LedgerRow* g = find(rows, "gemm");
  ASSERT_NE(g, nullptr);
  EXPECT_DOUBLE_EQ(g->flops, m * 3 * (24 * L * R * C * C + 2 * R * V * C));
  EXPECT_DOUBLE_EQ(g->launches, m * (12 * L + 3));
  EXPECT_DOUBLE_EQ(g->bytes, m * 4 *
                                 (3 * L * (R * C + C * 3 * C + R * 3 * C)    // qkv: fwd, dX, dW
                                  + 3 * L * (R * C + C * C + R * C)          // proj
                                  + 3 * L * (R * C + C * 4 * C + R * 4 * C)  // fc
                                  + 3 * L * (R * 4 * C + 4 * C * C + R * C)  // fcproj
                                  + 3 * (R * C + V * C + R * V)));           // head
  o.recompute = Recompute::full;
  const LedgerRow* f = find(step_ledger(o, one, 0), "gemm");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->flops - g->flops, m * 24 * L * R * C * C);
  EXPECT_DOUBLE_EQ(f->launches - g->launches, m * 4 * L);
  // Attention: per layer and micro-batch one forward (q, k, v, o and the log-sum-exp) and one
  // backward (q, k, v, o, dO in, dQ, dK, dV out, the log-sum-exp).
  const auto r0 = step_ledger(test::tiny_options(3, 2, 2), one, 0);
  const LedgerRow* af = find(r0, "attention_forward");
  const LedgerRow* ab = find(r0, "attention_backward");
  ASSERT_TRUE(af && ab);
  const double qkvo = R * C, lse = 4.0 * R * o.model.heads;
  EXPECT_DOUBLE_EQ(af->launches, m * L);
  EXPECT_DOUBLE_EQ(af->bytes, m * L * (4 * 4 * qkvo + lse));
  EXPECT_DOUBLE_EQ(ab->bytes, m * L * (8 * 4 * qkvo + lse));
}

TEST(StepLedger, CollectivesAreTheTheorysBytesPerKind) {
  TrainOptions o = test::tiny_options(4, 2, 3);
  o.zero = ZeroStage::one;
  o.sp = true;
  const ParallelLayout lay{2, 2, 2};
  for (int stage : {0, 1}) {
    const auto theory = comm_bytes(o, lay, stage);
    const auto rows = step_ledger(o, lay, stage);
    size_t seen = 0;
    for (size_t k = 0; k < kCommKinds; ++k) {
      const LedgerRow* r = find(rows, "comm:" + std::string(comm_kind_name(static_cast<CommKind>(k))));
      if (theory[k] == 0) {
        EXPECT_EQ(r, nullptr) << k;
        continue;
      }
      ASSERT_NE(r, nullptr) << comm_kind_name(static_cast<CommKind>(k));
      EXPECT_DOUBLE_EQ(r->bytes, static_cast<double>(theory[k])) << comm_kind_name(static_cast<CommKind>(k));
      EXPECT_FALSE(r->device_memory);
      EXPECT_EQ(r->floor_seconds(1e12, 1e12), 0.0);
      ++seen;
    }
    EXPECT_GE(seen, 5u) << "stage " << stage;
  }
}

TEST(StepLedger, FloorIsTheSlowerOfComputeAndMemory) {
  const LedgerRow r{"gemm", 1, 2e12, 1e9, true};
  EXPECT_DOUBLE_EQ(r.floor_seconds(1e12, 1e12), 2.0);  // compute-bound
  EXPECT_DOUBLE_EQ(r.floor_seconds(1e15, 1e8), 10.0);  // memory-bound
  EXPECT_DOUBLE_EQ(r.floor_seconds(1e12, 0), 2.0);     // no bandwidth: the compute term alone
  EXPECT_TRUE(r.floor_known(1e12, 0));
  const LedgerRow ew{"residual_add", 4, 0, 1e6, true};
  EXPECT_FALSE(ew.floor_known(1e12, 0));  // no FLOPs, no bandwidth: unknown, not 0
  EXPECT_TRUE(ew.floor_known(1e12, 1e12));
}

}  // namespace
}  // namespace gcb::models::planner
