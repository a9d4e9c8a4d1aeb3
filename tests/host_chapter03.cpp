// Chapter 03's plain arithmetic: the 3-D tensor view that makes TMA write core matrices.
#include <gtest/gtest.h>

#include <set>

#include "chapters/03_tma_mbarrier/core_matrix_view.hpp"
#include "common/ptx/descriptor.hpp"

namespace {

alignas(16) const unsigned char kAligned[16] = {};

TEST(Chapter03, ViewShapeAndStrides) {
  const auto spec = ch03::core_matrix_view(4096, 7168, 128, 128);
  EXPECT_EQ(spec.dims, (std::array<uint64_t, 3>{16, 4096, 7168 / 16}));
  EXPECT_EQ(spec.strides, (std::array<uint64_t, 2>{7168, 16}));
  EXPECT_EQ(spec.box, (std::array<uint32_t, 3>{16, 128, 8}));
  EXPECT_EQ(gemm::tensor_map_error(spec, kAligned), "");
  // One box is one 128 x 128 fp8 tile: the byte count the mbarrier is told to expect.
  EXPECT_EQ(uint64_t(spec.box[0]) * spec.box[1] * spec.box[2], 128u * 128u);
}

TEST(Chapter03, TmaBoxLandsWhereTheDescriptorReads) {
  for (uint32_t rows : {64u, 128u, 256u}) {
    const auto spec = ch03::core_matrix_view(1000, 512, rows, 128);
    std::set<uint64_t> seen;
    for (uint32_t row = 0; row < rows; ++row)
      for (uint32_t k = 0; k < 128; ++k) {
        const uint64_t tma = ch03::box_offset<3>(spec, {k % 16, row, k / 16});
        const uint32_t wgmma = ptx::no_swizzle_k_major_offset(
            int(row), int(k), ch03::leading_byte_offset(rows), ch03::kStrideByteOffset);
        ASSERT_EQ(tma, wgmma) << "rows " << rows << " row " << row << " k " << k;
        seen.insert(tma);
      }
    EXPECT_EQ(seen.size(), size_t(rows) * 128);  // a bijection onto the tile
  }
}

TEST(Chapter03, CoreMatrixIs128ContiguousBytes) {
  const auto spec = ch03::core_matrix_view(128, 128, 128, 128);
  // Rows 8..15, k 16..31: the core matrix (1, 1). Its 128 bytes are one contiguous run.
  std::set<uint64_t> bytes;
  for (uint32_t row = 8; row < 16; ++row)
    for (uint32_t k = 16; k < 32; ++k)
      bytes.insert(ch03::box_offset<3>(spec, {k % 16, row, k / 16}));
  EXPECT_EQ(*bytes.rbegin() - *bytes.begin(), 127u);
}

TEST(Chapter03, TensorMapConstraintsAreNamed) {
  auto spec = ch03::core_matrix_view(128, 256, 128, 128);
  EXPECT_NE(gemm::tensor_map_error(spec, kAligned + 1).find("16-byte aligned"), std::string::npos);
  auto big_box = spec;
  big_box.box[1] = 512;
  EXPECT_NE(gemm::tensor_map_error(big_box, kAligned).find("box dimension 1"), std::string::npos);
  auto odd_stride = spec;
  odd_stride.strides[0] = 200;
  EXPECT_NE(gemm::tensor_map_error(odd_stride, kAligned).find("stride 1"), std::string::npos);
  gemm::TensorMapSpec<2> wide;
  wide.dims = {256, 128};
  wide.strides = {256};
  wide.box = {256, 64};
  wide.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  EXPECT_NE(gemm::tensor_map_error(wide, kAligned).find("at most 128 bytes"), std::string::npos);
}

}  // namespace
