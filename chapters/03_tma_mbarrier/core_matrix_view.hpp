// Chapter 03's one piece of host arithmetic: how to ask TMA for the non-swizzled core-matrix
// layout. Plain C++ (tested on the host by tests/host_chapter03.cpp).
//
// The tensor core wants each 8-row x 16-byte core matrix stored as 128 contiguous bytes. A 2-D
// box of a row-major matrix lands in shared memory row after row, BLOCK_K bytes each: the 16-byte
// pieces of one core matrix would sit BLOCK_K bytes apart. So we describe the same global bytes as
// a 3-D tensor whose innermost dimension is only 16 bytes wide:
//
//   dim 0: k % 16        16 elements, contiguous
//   dim 1: row           stride K bytes (the matrix's row pitch)
//   dim 2: k / 16        stride 16 bytes
//
// A box {16, box_rows, box_k / 16} then lands as [k / 16][row][k % 16]: for each 16-byte column
// of K, all rows' 16 bytes back to back. Eight consecutive rows of one column form a core matrix
// (128 contiguous bytes); the next core matrix down is 128 bytes on (SBO), the next one along K is
// box_rows * 16 bytes on (LBO). The price: TMA moves the tile in 16-byte pieces.
#pragma once

#include <array>
#include <cstdint>

#include "common/tensor_map.hpp"

namespace ch03 {

inline gemm::TensorMapSpec<3> core_matrix_view(uint64_t rows, uint64_t k, uint32_t box_rows,
                                               uint32_t box_k) {
  gemm::TensorMapSpec<3> spec;
  spec.type = CU_TENSOR_MAP_DATA_TYPE_UINT8;  // fp8 moved as bytes
  spec.element_bytes = 1;
  spec.dims = {16, rows, k / 16};
  spec.strides = {k, 16};
  spec.box = {16, box_rows, box_k / 16};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_NONE;
  return spec;
}

// Where TMA writes box element `coord` (innermost first) in shared memory, in bytes from the
// destination, when there is no swizzle: the box is stored densely, innermost dimension fastest.
// The host tests hold it against ptx::no_swizzle_k_major_offset.
template <int Rank>
uint64_t box_offset(const gemm::TensorMapSpec<Rank>& spec,
                    const std::array<uint32_t, Rank>& coord) {
  uint64_t offset = 0;
  for (int i = Rank - 1; i >= 0; --i) offset = offset * spec.box[i] + coord[i];
  return offset * spec.element_bytes;
}

// The descriptor offsets that read that layout back.
constexpr uint32_t leading_byte_offset(uint32_t box_rows) {
  return box_rows * 16;
}
constexpr uint32_t kStrideByteOffset = 128;

}  // namespace ch03
