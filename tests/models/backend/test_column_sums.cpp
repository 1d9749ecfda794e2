// The CUDA column sums' row ranges (kernels/train/train_kernels.hpp column_sum_splits): every row in
// exactly one range, no empty range, ranges of at least kColumnSumMinRows rows when there are
// several, and the grid near kColumnSumBlocks blocks wherever the rows allow it. CPU-only index
// math; the kernels themselves are checked against the CPU oracle by test_cuda_backend.
#include <gtest/gtest.h>

#include "kernels/train/train_kernels.hpp"

namespace gcb::kernels::train {
namespace {

TEST(ColumnSumSplits, EveryRowInOneNonEmptyRangeAndTheGridNearItsTarget) {
  for (int rows : {0, 1, 127, 128, 150, 255, 256, 1000, 2048, 8191, 8192, 65536, 1 << 20})
    for (int cols : {1, 31, 32, 33, 72, 768, 2304, 3072, 50304}) {
      SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(cols));
      const int splits = column_sum_splits(rows, cols), per = column_sum_rows_per_split(rows, splits);
      const int col_blocks = (cols + 31) / 32;
      ASSERT_GE(splits, 1);
      EXPECT_GE(static_cast<long>(splits) * per, rows) << "rows left out";
      if (splits > 1) {
        EXPECT_LT(static_cast<long>(splits - 1) * per, rows) << "an empty last range";
        EXPECT_GE(per, kColumnSumMinRows);
      }
      EXPECT_EQ(column_sum_partials(rows, cols), static_cast<size_t>(splits) * static_cast<size_t>(cols));
      const long blocks = static_cast<long>(splits) * col_blocks;
      EXPECT_LT(blocks, kColumnSumBlocks + col_blocks) << "more blocks than the target needs";
      // Short of the target only where more ranges would be shorter than the minimum.
      if (blocks < kColumnSumBlocks) {
        EXPECT_EQ(splits, std::max(1, rows / kColumnSumMinRows));
      }
    }
}

TEST(ColumnSumSplits, Gpt2ShapesFillAHopper) {
  // B·T = 8192 rows (micro-batch 8, T 1024): C = 768 was 24 blocks in one pass; now 22 ranges.
  EXPECT_EQ(column_sum_splits(8192, 768), 22);
  EXPECT_EQ(column_sum_splits(8192, 768) * 24, 528);
  EXPECT_EQ(column_sum_splits(8192, 3072), 6);   // the MLP's first bias: 96 blocks of columns
  EXPECT_EQ(column_sum_splits(8192, 2304), 8);   // the fused qkv bias: 72
  EXPECT_EQ(column_sum_splits(100, 768), 1);     // too few rows: the one-pass order
  EXPECT_EQ(column_sum_splits(8192, 50304), 1);  // 1572 blocks of columns already
}

}  // namespace
}  // namespace gcb::kernels::train
