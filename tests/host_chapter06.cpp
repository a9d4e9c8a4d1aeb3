// Chapter 06's host arithmetic: which A scale each accumulator register takes (from the same
// fragment map as chapter 01), and the TMA view of scale A.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "chapters/06_fp8_promotion/draw.hpp"
#include "chapters/06_fp8_promotion/promotion.hpp"
#include "common/ptx/base.cuh"
#include "tests/read_text.hpp"

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

// The accumulator's reuse: at 128 and 256 rows, the two warpgroups' sub-tiles cover every row of
// the tile exactly once, in 64-row bands, and a warpgroup's sub-tiles are 128 rows apart (the
// kernel's `warpgroup * 64 + sub * 128`, its descriptors' `sub * 128 * kSwizzleBytes`).
TEST(Chapter06, SubtilesCoverTheTileOnce) {
  for (int block_m : {128, 256}) {
    std::vector<int> seen(block_m, 0);
    for (int w = 0; w < 2; ++w)
      for (int sub = 0; sub < ch06::subtiles(block_m); ++sub) {
        const int row = ch06::subtile_row(w, sub);
        EXPECT_EQ(row, w * 64 + sub * 128);
        EXPECT_EQ(row % 64, 0);
        for (int r = row; r < row + 64; ++r) {
          ASSERT_LT(r, block_m);
          ++seen[r];
        }
      }
    for (int r = 0; r < block_m; ++r) EXPECT_EQ(seen[r], 1) << "row " << r << " of " << block_m;
  }
  const std::string path = testing::TempDir() + "/subtiles_test.svg";
  ch06::draw_subtiles(path);
  const std::string text = gemm::testing::read_text(path);
  EXPECT_NE(text.find("wg 1, sub-tile 1: rows 192-255"), std::string::npos);
  EXPECT_NE(text.find("-> final_acc[64..127]"), std::string::npos);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
}

}  // namespace

// The unrolled walk gives every K block the ring position of the plain loop, in order, and leaves
// the ring where the plain loop does: for rings that unroll (1 to 4 stages) and one that does not,
// from every starting position a persistent kernel can carry in, over ranges that end before,
// at and after whole rounds.
template <int kNumStages>
void check_walk() {
  for (uint32_t start = 0; start < 2 * kNumStages; ++start)
    for (int begin = 0; begin < 3; ++begin)
      for (int end = begin; end < begin + 4 * kNumStages + 3; ++end) {
        ch05::PipelineState plain{start % kNumStages, start / kNumStages % 2};
        ch05::PipelineState walked = plain;
        std::vector<std::array<uint32_t, 3>> want, got;
        for (int kb = begin; kb < end; ++kb, plain.advance(kNumStages))
          want.push_back({uint32_t(kb), plain.stage, plain.phase});
        ch06::for_each_k_block<kNumStages>(begin, end, walked,
                                           [&](int kb, uint32_t stage, uint32_t phase) {
                                             got.push_back({uint32_t(kb), stage, phase});
                                           });
        ASSERT_EQ(got, want) << kNumStages << " stages, start " << start << ", [" << begin << ", "
                             << end << ")";
        ASSERT_EQ(walked.stage, plain.stage);
        ASSERT_EQ(walked.phase, plain.phase);
      }
}

TEST(Chapter06, UnrolledKLoopWalksTheRingLikeThePlainLoop) {
  check_walk<1>();
  check_walk<2>();
  check_walk<3>();
  check_walk<4>();
  check_walk<ch06::kMaxUnrolledStages + 3>();
}
