// Chapter 06's host arithmetic: which A scale each accumulator register takes (from the same
// fragment map as chapter 01), and the TMA view of scale A.
#include <gtest/gtest.h>

#include "chapters/06_fp8_promotion/promotion.hpp"
#include "common/ptx/base.cuh"

namespace {

TEST(Chapter06, RowHalfPicksTheRowOfEveryAccumulator) {
  // m64n128: 64 registers per thread. Register r lies in row_lo (row_half 0) or row_lo + 8.
  for (int t = 0; t < ptx::kWarpgroupSize; ++t) {
    const int row_lo = ptx::accumulator_position(t, 0).row;
    EXPECT_EQ(ptx::accumulator_position(t, 2).row, row_lo + 8) << "thread " << t;
    for (int r = 0; r < 64; ++r)
      EXPECT_EQ(ptx::accumulator_position(t, r).row, row_lo + 8 * ch06::row_half(r))
          << "thread " << t << " register " << r;
  }
}

TEST(Chapter06, EveryRowOfTheWarpgroupHasItsScaleReadByFourThreads) {
  int readers[64] = {};
  for (int t = 0; t < ptx::kWarpgroupSize; ++t) {
    ++readers[ptx::accumulator_position(t, 0).row];
    ++readers[ptx::accumulator_position(t, 2).row];
  }
  for (int row = 0; row < 64; ++row) EXPECT_EQ(readers[row], 4) << "row " << row;
}

TEST(Chapter06, ScaleAViewIsMContiguousWithPaddedRows) {
  const gemm::Shape s{257, 136, 1024};
  const auto spec = ch06::scale_a_view(s, 128);
  EXPECT_EQ(spec.dims[0], 257u);
  EXPECT_EQ(spec.dims[1], 8u);
  EXPECT_EQ(spec.strides[0], 260u * 4);  // sa_ld = 260 floats: a multiple of 16 bytes
  EXPECT_EQ(spec.box[0], 128u);
  EXPECT_EQ(spec.box[1], 1u);
  EXPECT_EQ(gemm::tensor_map_error(spec, reinterpret_cast<const void*>(0x10000)), "");
}

}  // namespace
