// The multi-tensor AdamW's host side (kernels/train/multi_tensor_plan.hpp, adamw_math.hpp): the
// chunk table checked exhaustively over small lists and limits, and the CPU walk of that table
// against the CPU oracle's AdamW, bitwise, in fp32 and mixed precision.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/error.hpp"
#include "kernels/train/adamw_math.hpp"
#include "kernels/train/multi_tensor_plan.hpp"
#include "models/backend/cpu/cpu_backend.hpp"

namespace gcb::kernels::train {
namespace {

// Every invariant of a table for `sizes` under `lim`; the failure message says which.
void expect_valid(const std::vector<size_t>& sizes, const MultiTensorLimits& lim,
                  const std::vector<MultiTensorLaunch>& plan) {
  std::vector<std::vector<int>> covered(sizes.size());
  for (size_t t = 0; t < sizes.size(); ++t) covered[t].assign(sizes[t], 0);
  size_t prev_tensor = 0, prev_end = 0;
  for (const MultiTensorLaunch& l : plan) {
    ASSERT_FALSE(l.blocks.empty()) << "a launch without blocks";
    ASSERT_LE(l.tensors.size(), lim.max_tensors);
    ASSERT_LE(l.blocks.size(), lim.max_blocks);
    std::vector<int> slot_used(l.tensors.size(), 0);
    for (const ChunkEntry& b : l.blocks) {
      ASSERT_LT(b.slot, l.tensors.size());
      const size_t t = l.tensors[b.slot];
      ASSERT_LT(t, sizes.size());
      ASSERT_GT(b.length, 0u) << "an empty block";
      ASSERT_LE(b.length, lim.chunk);
      ASSERT_EQ(b.offset % lim.chunk, 0u);
      ASSERT_LE(b.offset + b.length, sizes[t]) << "a block crosses the end of tensor " << t;
      // A block is a whole chunk, or the tensor's last, partial one.
      ASSERT_TRUE(b.length == lim.chunk || b.offset + b.length == sizes[t]);
      // Tensors in list order, chunks in element order: what a single pass over the list gives.
      ASSERT_TRUE(t > prev_tensor || (t == prev_tensor && b.offset == prev_end) || (prev_end == 0 && t == 0))
          << "block out of order";
      prev_tensor = t;
      prev_end = b.offset + b.length;
      ++slot_used[b.slot];
      for (size_t i = b.offset; i < b.offset + b.length; ++i) ++covered[t][i];
    }
    for (size_t s = 0; s < slot_used.size(); ++s) EXPECT_GT(slot_used[s], 0) << "slot without a block";
    for (size_t s = 1; s < l.tensors.size(); ++s) EXPECT_LT(l.tensors[s - 1], l.tensors[s]);
  }
  for (size_t t = 0; t < sizes.size(); ++t)
    for (size_t i = 0; i < sizes[t]; ++i) ASSERT_EQ(covered[t][i], 1) << "tensor " << t << " element " << i;
}

TEST(MultiTensorPlan, EveryElementOnceNoBlockAcrossTensorsLimitsHonouredForAllSmallLists) {
  // Every list of up to 4 tensors of 0..5 elements, under every limit of 1..3 (tensors, blocks,
  // chunk): the table covers each element exactly once and keeps every invariant.
  size_t plans = 0;
  for (size_t len = 0; len <= 4; ++len) {
    size_t lists = 1;
    for (size_t k = 0; k < len; ++k) lists *= 6;
    for (size_t code = 0; code < lists; ++code) {
      std::vector<size_t> sizes;
      for (size_t k = 0, c = code; k < len; ++k, c /= 6) sizes.push_back(c % 6);
      for (size_t mt = 1; mt <= 3; ++mt)
        for (size_t mb = 1; mb <= 3; ++mb)
          for (size_t ch = 1; ch <= 3; ++ch) {
            const MultiTensorLimits lim{mt, mb, ch};
            const auto plan = plan_multi_tensor(sizes, lim);
            ASSERT_NO_FATAL_FAILURE(expect_valid(sizes, lim, plan));
            ++plans;
          }
    }
  }
  EXPECT_EQ(plans, 27u * (1 + 6 + 36 + 216 + 1296));
}

TEST(MultiTensorPlan, SkipsEmptyTensorsAndStartsANewLaunchOnlyWhenALimitIsReached) {
  const MultiTensorLimits lim{2, 3, 4};
  // 0, 9 (3 chunks), 0, 4 (1 chunk), 5 (2 chunks): [9: 3 blocks] fills the blocks; then [4, 5: 3 blocks].
  const auto plan = plan_multi_tensor({0, 9, 0, 4, 5}, lim);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].tensors, (std::vector<size_t>{1}));
  EXPECT_EQ(plan[0].blocks.size(), 3u);
  EXPECT_EQ(plan[0].blocks[2].length, 1u);  // 9 = 4 + 4 + 1
  EXPECT_EQ(plan[1].tensors, (std::vector<size_t>{3, 4}));
  EXPECT_EQ(plan[1].blocks.size(), 3u);
  // A tensor split between launches gets a slot in each.
  const auto split = plan_multi_tensor({10}, {2, 2, 3});
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[1].tensors, (std::vector<size_t>{0}));
  EXPECT_EQ(split[1].blocks[0].offset, 6u);
  EXPECT_EQ(split[1].blocks[1].length, 1u);
  // Nothing to update: no launch at all.
  EXPECT_TRUE(plan_multi_tensor({}).empty());
  EXPECT_TRUE(plan_multi_tensor({0, 0}).empty());
  EXPECT_THROW(plan_multi_tensor({1}, {0, 1, 1}), Fault);
}

TEST(MultiTensorPlan, DefaultLimitsAreApexsAndAModelListTakesSeveralLaunches) {
  const MultiTensorLimits lim{};
  EXPECT_EQ(lim.max_tensors, 30u);
  EXPECT_EQ(lim.max_blocks, 320u);
  EXPECT_EQ(lim.chunk, 65536u);
  // GPT-2 124M's 12 layer units of 7,087,872 parameters (109 chunks each) and the 38,597,376-element
  // embedding unit (589 chunks): 589 + 12·109 = 1897 blocks, so ⌈1897 / 320⌉ = 6 launches.
  std::vector<size_t> sizes(12, 7087872);
  sizes.insert(sizes.begin(), 38597376);
  const auto plan = plan_multi_tensor(sizes, lim);
  size_t blocks = 0;
  for (const auto& l : plan) blocks += l.blocks.size();
  EXPECT_EQ(blocks, 1897u);
  EXPECT_EQ(plan.size(), 6u);
  ASSERT_NO_FATAL_FAILURE(expect_valid(sizes, lim, plan));
}

// The table walk equals the CPU oracle's adamw on each tensor, bit for bit, over three steps.
TEST(MultiTensorAdamW, TableWalkEqualsTheCpuOracleBitwise) {
  using models::View;
  const std::vector<size_t> sizes{13, 0, 64, 1, 200, 7, 0, 33};
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (DType t : {DType::f32, DType::bf16}) {
    const bool mixed = t == DType::bf16;
    struct Copy {
      std::vector<uint16_t> p16, g16;
      std::vector<float> p, g, m, v, master;
    };
    std::vector<Copy> oracle(sizes.size());
    for (size_t i = 0; i < sizes.size(); ++i) {
      Copy& c = oracle[i];
      const size_t n = sizes[i];
      for (size_t e = 0; e < n; ++e) {
        c.p.push_back(0.02f * d(rng));
        c.g.push_back(1e-3f * d(rng));
        c.m.push_back(1e-4f * d(rng));
        c.v.push_back(1e-8f * std::abs(d(rng)));
        c.p16.push_back(float_to_bf16(c.p.back()));
        c.g16.push_back(float_to_bf16(c.g.back()));
        c.master.push_back(bf16_to_float(c.p16.back()));
      }
    }
    std::vector<Copy> walked = oracle;
    models::CpuBackend cpu;
    models::AdamWArgs a;
    a.lr = 1e-3f;
    a.weight_decay = 0.1f;
    std::vector<AdamWTensor> list;
    for (Copy& c : walked) {
      void* p = mixed ? static_cast<void*>(c.p16.data()) : c.p.data();
      const void* g = mixed ? static_cast<const void*>(c.g16.data()) : c.g.data();
      list.push_back({p, g, c.m.data(), c.v.data(), mixed ? c.master.data() : nullptr, c.p.size()});
    }
    const auto plan = plan_multi_tensor(sizes, {3, 4, 16});  // several launches, tensors split
    ASSERT_GT(plan.size(), 2u);
    for (int step = 1; step <= 3; ++step) {
      a.step = step;
      for (Copy& c : oracle) {
        if (c.p.empty()) continue;  // nothing to update (and no master storage to name)
        const View p = mixed ? View{c.p16.data(), t} : View{c.p.data(), t};
        const View g = mixed ? View{c.g16.data(), t} : View{c.g.data(), t};
        cpu.adamw(p, g, c.m.data(), c.v.data(), mixed ? c.master.data() : nullptr, c.p.size(), a);
      }
      adamw_multi_tensor_host(t, list, plan, adamw_step(a.lr, a.beta1, a.beta2, a.eps, a.weight_decay, step));
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_EQ(walked[i].m, oracle[i].m) << dtype_name(t) << " tensor " << i;
      EXPECT_EQ(walked[i].v, oracle[i].v) << dtype_name(t) << " tensor " << i;
      EXPECT_EQ(walked[i].p, oracle[i].p) << dtype_name(t) << " tensor " << i;
      EXPECT_EQ(walked[i].p16, oracle[i].p16) << dtype_name(t) << " tensor " << i;
      EXPECT_EQ(walked[i].master, oracle[i].master) << dtype_name(t) << " tensor " << i;
    }
    // The step changed the weights (the comparison is not of untouched inputs).
    EXPECT_NE(walked[0].m[0], 0.0f);
  }
}

}  // namespace
}  // namespace gcb::kernels::train
