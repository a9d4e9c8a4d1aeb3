// Chapter 02's layout arithmetic, no GPU: the non-swizzled core-matrix tile its threads write,
// as the kernel's comment writes it, is the one common/ptx/descriptor.hpp computes.
#include <gtest/gtest.h>

#include <vector>

#include "common/ptx/descriptor.hpp"

namespace {

TEST(Chapter02Layout, KernelFormulaIsTheNoSwizzleOffset) {
  // byte(row, k) = ((row / 8) * (BLOCK_K / 16) + k / 16) * 128 + (row % 8) * 16 + k % 16, with
  // BLOCK_K = 128: LBO = 128 (next 16 k), SBO = 1024 (next 8 rows).
  const int kBlockK = 128, kRows = 128;
  std::vector<int> hits(kRows * kBlockK, 0);
  for (int row = 0; row < kRows; ++row)
    for (int k = 0; k < kBlockK; ++k) {
      const uint32_t formula =
          uint32_t(((row / 8) * (kBlockK / 16) + k / 16) * 128 + (row % 8) * 16 + k % 16);
      const uint32_t offset = ptx::no_swizzle_k_major_offset(row, k, 128, 1024);
      ASSERT_EQ(offset, formula) << "row " << row << " k " << k;
      ++hits[offset];
    }
  for (int i = 0; i < kRows * kBlockK; ++i) EXPECT_EQ(hits[i], 1) << "byte " << i;
}

}  // namespace
