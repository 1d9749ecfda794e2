// The CPU attention references (kernels/attention/attention_ref.cpp): the FP32 tiled algorithm
// of the GPU kernels equals the naive FP64 oracle, forward and backward, causal or not, with
// sequences that are not multiples of the tile; the FP64 backward equals finite differences;
// FLOP counts are exact.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/attention/attention_ref.hpp"
#include "kernels/attention/cudnn_sdpa.hpp"
#include "kernels/attention/flash_tiling.hpp"

namespace gcb::kernels::attn {
namespace {

std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }

struct Case {
  int batch, heads, seq, head_dim;
  bool causal;
  Tiles fwd, bwd;
};

class TiledVsNaive : public ::testing::TestWithParam<Case> {};

// FP32 against FP64 on N(0,1) inputs with s ≤ 300, d ≤ 128: each dot product sums ≤ 128 products
// of magnitude ~1 and each softmax row ≤ 300 terms, so the FP32 rounding error stays far below
// 1e-4 (≈ 2^-23 · sqrt(terms) · magnitudes); 2e-4 absolute leaves room without hiding a wrong
// mask or a missing rescale (those give errors of order 0.1-1).
constexpr double kFwdTol = 2e-4;
// Gradients sum over up to s rows with magnitudes up to ~10: 1e-3 absolute.
constexpr double kBwdTol = 1e-3;

TEST_P(TiledVsNaive, ForwardAndBackwardMatchFp64) {
  const Case c = GetParam();
  const AttnShape a{c.batch, c.heads, c.seq, c.head_dim, c.causal};
  const size_t n = a.elements();
  const auto q = random_normal(n, 1), k = random_normal(n, 2), v = random_normal(n, 3), d_o = random_normal(n, 4);
  const auto qd = widen(q), kd = widen(k), vd = widen(v), dod = widen(d_o);

  std::vector<double> o_ref(n), lse_ref(a.rows());
  naive_forward(a, qd.data(), kd.data(), vd.data(), o_ref.data(), lse_ref.data());
  std::vector<float> o(n), lse(a.rows());
  tiled_forward(a, c.fwd, q.data(), k.data(), v.data(), o.data(), lse.data());
  const ErrorStats eo = compare(o_ref.data(), o.data(), n), el = compare(lse_ref.data(), lse.data(), a.rows());
  EXPECT_EQ(eo.non_finite, 0u);
  EXPECT_LT(eo.max_abs, kFwdTol) << "O differs first at " << eo.worst;
  EXPECT_LT(el.max_abs, kFwdTol) << "LSE differs at row " << el.worst;

  std::vector<double> dq_ref(n), dk_ref(n), dv_ref(n);
  naive_backward(a, qd.data(), kd.data(), vd.data(), dod.data(), dq_ref.data(), dk_ref.data(), dv_ref.data());
  std::vector<float> dq(n, NAN), dk(n, NAN), dv(n, NAN);  // poisoned: unwritten elements fail
  tiled_backward(a, c.bwd, q.data(), k.data(), v.data(), o.data(), d_o.data(), lse.data(), dq.data(), dk.data(),
                 dv.data());
  for (const auto& [name, want, got] : {std::tuple{"dQ", &dq_ref, &dq}, {"dK", &dk_ref, &dk}, {"dV", &dv_ref, &dv}}) {
    const ErrorStats e = compare(want->data(), got->data(), n);
    EXPECT_EQ(e.non_finite, 0u) << name;
    EXPECT_LT(e.max_abs, kBwdTol) << name << " differs first at " << e.worst;
  }
}

std::string case_name(const ::testing::TestParamInfo<Case>& p) {
  const Case& c = p.param;
  return fmt::format("b{}h{}_s{}_d{}_fwd{}x{}s{}_bwd{}x{}_{}", c.batch, c.heads, c.seq, c.head_dim, c.fwd.rows,
                     c.fwd.cols, c.fwd.score_cols, c.bwd.rows, c.bwd.cols, c.causal ? "causal" : "full");
}

// The kernels' own tiles (flash_tiling.hpp) at both head dims, sequences that are not multiples
// of any block (100, 77, 200) or span several blocks with a ragged end (300), and exact multiples.
INSTANTIATE_TEST_SUITE_P(KernelTiles, TiledVsNaive,
                         ::testing::Values(Case{1, 2, 100, 64, false, forward_tiles(64), backward_tiles(64)},
                                           Case{1, 2, 100, 64, true, forward_tiles(64), backward_tiles(64)},
                                           Case{1, 1, 300, 64, true, forward_tiles(64), backward_tiles(64)},
                                           Case{2, 1, 77, 128, false, forward_tiles(128), backward_tiles(128)},
                                           Case{2, 1, 77, 128, true, forward_tiles(128), backward_tiles(128)},
                                           Case{1, 1, 200, 128, false, forward_tiles(128), backward_tiles(128)},
                                           Case{1, 1, 300, 128, true, forward_tiles(128), backward_tiles(128)},
                                           Case{1, 1, 256, 128, true, forward_tiles(128), backward_tiles(128)},
                                           Case{1, 1, 1, 64, false, forward_tiles(64), backward_tiles(64)}),  // one key
                         case_name);
// Other shapes: Br ≠ Bc, score blocks smaller than the key block, blocks of 64.
INSTANTIATE_TEST_SUITE_P(OtherTiles, TiledVsNaive,
                         ::testing::Values(Case{1, 1, 150, 64, true, {32, 16}, {32, 16}},
                                           Case{1, 1, 150, 64, true, {16, 64, 16}, {16, 32}},
                                           Case{1, 2, 100, 64, false, {64, 64}, {64, 64}},
                                           Case{1, 1, 128, 128, true, {64, 64}, {64, 64}}),
                         case_name);

// A wrong algorithm must fail the same check: dropping the causal mask changes O by far more
// than the tolerance (guards against a comparison that cannot fail).
TEST(TiledVsNaive, MaskMismatchIsDetected) {
  const AttnShape causal{1, 1, 70, 64, true}, full{1, 1, 70, 64, false};
  const size_t n = causal.elements();
  const auto q = random_normal(n, 1), k = random_normal(n, 2), v = random_normal(n, 3);
  const auto qd = widen(q), kd = widen(k), vd = widen(v);
  std::vector<double> o_ref(n), lse_ref(causal.rows());
  naive_forward(causal, qd.data(), kd.data(), vd.data(), o_ref.data(), lse_ref.data());
  std::vector<float> o(n), lse(causal.rows());
  tiled_forward(full, forward_tiles(64), q.data(), k.data(), v.data(), o.data(), lse.data());
  EXPECT_GT(compare(o_ref.data(), o.data(), n).max_abs, 0.1);
}

// Row 0 under the causal mask sees only key 0: O_0 = V_0 and lse_0 = scale·q_0·k_0, exactly.
TEST(NaiveForward, CausalFirstRowIsFirstValue) {
  const AttnShape a{1, 1, 5, 64, true};
  const auto q = widen(random_normal(a.elements(), 7)), k = widen(random_normal(a.elements(), 8)),
             v = widen(random_normal(a.elements(), 9));
  std::vector<double> o(a.elements()), lse(a.rows());
  naive_forward(a, q.data(), k.data(), v.data(), o.data(), lse.data());
  double dot = 0;
  for (int x = 0; x < 64; ++x) dot += q[static_cast<size_t>(x)] * k[static_cast<size_t>(x)];
  EXPECT_DOUBLE_EQ(lse[0], dot * a.scale());
  for (size_t x = 0; x < 64; ++x) EXPECT_DOUBLE_EQ(o[x], v[x]);
}

// The FP64 backward against central differences of L = Σ dO∘O on a tiny case: step 1e-6 gives
// truncation O(h²)≈1e-12 and rounding O(ε/h)≈1e-10 relative, so 1e-6 absolute is generous.
TEST(NaiveBackward, MatchesFiniteDifferences) {
  for (bool causal : {false, true}) {
    const AttnShape a{1, 1, 5, 4, causal};
    const size_t n = a.elements();
    auto q = widen(random_normal(n, 11)), k = widen(random_normal(n, 12)), v = widen(random_normal(n, 13));
    const auto d_o = widen(random_normal(n, 14));
    std::vector<double> dq(n), dk(n), dv(n);
    naive_backward(a, q.data(), k.data(), v.data(), d_o.data(), dq.data(), dk.data(), dv.data());
    const auto loss = [&] {
      std::vector<double> o(n), lse(a.rows());
      naive_forward(a, q.data(), k.data(), v.data(), o.data(), lse.data());
      double l = 0;
      for (size_t i = 0; i < n; ++i) l += d_o[i] * o[i];
      return l;
    };
    const double h = 1e-6;
    for (auto [x, grad] : {std::pair{&q, &dq}, {&k, &dk}, {&v, &dv}})
      for (size_t i = 0; i < n; ++i) {
        const double saved = (*x)[i];
        (*x)[i] = saved + h;
        const double up = loss();
        (*x)[i] = saved - h;
        const double down = loss();
        (*x)[i] = saved;
        EXPECT_NEAR((*grad)[i], (up - down) / (2 * h), 1e-6) << "causal " << causal << " element " << i;
      }
  }
}

TEST(AttentionFlops, FlashAttentionConventionAndExactCounts) {
  const AttnShape a{2, 16, 1024, 128, false};
  EXPECT_DOUBLE_EQ(fa_forward_flops(a), 4.0 * 2 * 16 * 1024.0 * 1024 * 128);  // 4·b·h·s²·d
  EXPECT_DOUBLE_EQ(fa_backward_flops(a), 2.5 * fa_forward_flops(a));
  EXPECT_DOUBLE_EQ(exact_forward_flops(a), fa_forward_flops(a));  // non-causal: both count s²
  const AttnShape c{2, 16, 1024, 128, true};
  EXPECT_DOUBLE_EQ(fa_forward_flops(c), fa_forward_flops(a) / 2);
  EXPECT_DOUBLE_EQ(exact_forward_flops(c), 2.0 * 2 * 16 * (1024.0 * 1025 / 2) * 256);
  EXPECT_DOUBLE_EQ(exact_backward_flops(c), 2.0 * 2 * 16 * (1024.0 * 1025 / 2) * 640);
  // s = 512 causal: exact exceeds the ÷2 convention by (s+1)/s, ≈ 0.2 % (FA2 benchmark_flash_attention.py).
  const AttnShape s512{1, 1, 512, 64, true};
  EXPECT_NEAR(exact_forward_flops(s512) / fa_forward_flops(s512), 513.0 / 512.0, 1e-15);
}

TEST(AttentionBytes, UnfusedScoresDominateAtLongSequences) {
  const AttnShape a{1, 16, 16384, 128, false};
  EXPECT_DOUBLE_EQ(unfused_score_bytes(a, 2), 16.0 * 16384 * 16384 * 2);  // 8 GiB of scores
  EXPECT_DOUBLE_EQ(fused_forward_bytes(a, 2), 4.0 * 16 * 16384 * 128 * 2 + 4.0 * 16 * 16384);
  EXPECT_GT(unfused_forward_bytes(a, 2) / fused_forward_bytes(a, 2), 100.0);
}

}  // namespace
}  // namespace gcb::kernels::attn

namespace gcb::kernels::attn {
namespace {

// The per-row FP64 reference (used to check sampled rows of large shapes) equals the full one.
TEST(ReferenceRow, EqualsNaiveForwardAndBackward) {
  for (bool causal : {false, true}) {
    const AttnShape a{2, 2, 37, 64, causal};
    const size_t n = a.elements();
    const auto q = random_normal(n, 21), k = random_normal(n, 22), v = random_normal(n, 23), d_o = random_normal(n, 24);
    const auto qd = widen(q), kd = widen(k), vd = widen(v), dod = widen(d_o);
    std::vector<double> o(n), lse(a.rows()), dq(n), dk(n), dv(n);
    naive_forward(a, qd.data(), kd.data(), vd.data(), o.data(), lse.data());
    naive_backward(a, qd.data(), kd.data(), vd.data(), dod.data(), dq.data(), dk.data(), dv.data());
    for (size_t head : {size_t{0}, size_t{3}})
      for (int row : {0, 17, 36}) {
        std::vector<double> ro(64), rdq(64);
        double rl = 0;
        reference_row(a, q.data(), k.data(), v.data(), d_o.data(), head, row, ro.data(), &rl, rdq.data());
        const size_t base = (head * 37 + static_cast<size_t>(row)) * 64;
        // Same FP64 arithmetic in a different order: 1e-12 absolute.
        EXPECT_NEAR(rl, lse[head * 37 + static_cast<size_t>(row)], 1e-12);
        for (size_t e = 0; e < 64; ++e) {
          EXPECT_NEAR(ro[e], o[base + e], 1e-12);
          EXPECT_NEAR(rdq[e], dq[base + e], 1e-12);
        }
      }
  }
}

}  // namespace
}  // namespace gcb::kernels::attn

namespace gcb::kernels::attn {
namespace {

// The cuDNN path refuses what it does not implement before touching a GPU, with a reason
// (WAIVED upstream): non-16-bit types, forward and backward ("built without cuDNN" in builds
// without it, cudnn_sdpa_none.cpp).
TEST(CudnnSdpa, UnsupportedTypesSayWhyWithoutAGpu) {
  const auto says_why = [](const std::string& why) {
    return why.find("fp16 and bf16") != std::string::npos || why.find("without cuDNN") != std::string::npos;
  };
  const CudnnSdpaForward fwd(DType::f32, AttnShape{1, 1, 128, 64, false}, nullptr);
  EXPECT_TRUE(says_why(fwd.unsupported())) << fwd.unsupported();
  EXPECT_EQ(fwd.workspace_bytes(), 0u);
  const CudnnSdpaBackward bwd(DType::f32, AttnShape{1, 1, 128, 64, true}, nullptr);
  EXPECT_TRUE(says_why(bwd.unsupported())) << bwd.unsupported();
  EXPECT_EQ(bwd.workspace_bytes(), 0u);
}

// Building a plan never throws: without a device (or without cuDNN) the reason is in
// unsupported(); with one, a plan or cuDNN's reason. Causal forward is Route B now.
TEST(CudnnSdpa, BuildingNeverThrows) {
  for (const bool causal : {false, true}) {
    const AttnShape a{1, 2, 128, 64, causal};
    EXPECT_NO_THROW({
      const CudnnSdpaForward fwd(DType::bf16, a, nullptr);
      EXPECT_EQ(fwd.unsupported().empty(), !fwd.route().empty()) << fwd.unsupported();
      const CudnnSdpaBackward bwd(DType::f16, a, nullptr);
      EXPECT_EQ(bwd.unsupported().empty(), !bwd.route().empty()) << bwd.unsupported();
    });
  }
}

}  // namespace
}  // namespace gcb::kernels::attn
