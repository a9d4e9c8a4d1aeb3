// Chapter 04's host-checkable arithmetic, the 128-byte swizzle: plain C++, tested by
// tests/host_chapter04.cpp.
//
// With CU_TENSOR_MAP_SWIZZLE_128B, TMA writes each 128-byte row of a box with its eight 16-byte
// chunks permuted: chunk c of row r goes to chunk position c ^ (r % 8), as in
//
//   row % 8   position of chunk 0 1 2 3 4 5 6 7
//      0                        0 1 2 3 4 5 6 7
//      1                        1 0 3 2 5 4 7 6
//      2                        2 3 0 1 6 7 4 5
//      3                        3 2 1 0 7 6 5 4
//      4                        4 5 6 7 0 1 2 3
//      5                        5 4 7 6 1 0 3 2
//      6                        6 7 4 5 2 3 0 1
//      7                        7 6 5 4 3 2 1 0
//
// the PTX ISA's 128-byte swizzle table (XOR is its own inverse, so the same table also gives the
// chunk found at each position). Seen as a shared-memory address, bits [4, 7) (the chunk) are
// XORed with bits [7, 10) (the row within a 1024-byte group of eight rows). wgmma's descriptor in
// 128B mode undoes exactly the same XOR on the addresses it computes, which is why both sides agree
// and why the tile must start on a 1024-byte boundary: the XOR reads absolute address bits, so a
// tile that starts mid-pattern would be unswizzled with the wrong row index.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "common/tensor_map.hpp"

namespace ch04 {

constexpr uint32_t kSwizzleBytes = 128;       // one swizzled row
constexpr uint32_t kSwizzleAtomBytes = 1024;  // eight rows: the period of the pattern

// The hardware's rule on a shared-memory byte address (Swizzle<3, 4, 3> in CuTe's terms).
GEMM_HOST_DEVICE constexpr uint32_t swizzle_128b(uint32_t address) {
  return address ^ (((address >> 7) & 7u) << 4);
}

// Where TMA puts byte `byte` (0..127) of row `row` of a box whose inner dimension is 128 bytes,
// relative to a 1024-byte aligned tile start: the definition in rows and chunks.
GEMM_HOST_DEVICE constexpr uint32_t swizzled_offset(uint32_t row, uint32_t byte) {
  const uint32_t chunk = byte / 16;
  return row * kSwizzleBytes + ((chunk ^ (row % 8)) * 16) + byte % 16;
}

// The descriptor for a K-major 128B-swizzled operand: rows of 128 bytes, eight-row groups 1024
// bytes apart (SBO). LBO is unused in this mode (K never leaves the 128-byte row).
constexpr uint32_t kStrideByteOffset = 8 * kSwizzleBytes;

// A rows x K fp8 matrix as TMA sees it: 2-D, K innermost; one box = box_rows full 128-byte rows,
// written with the 128-byte swizzle above.
inline gemm::TensorMapSpec<2> swizzled_view(uint64_t rows, uint64_t k, uint32_t box_rows) {
  gemm::TensorMapSpec<2> spec;
  spec.dims = {k, rows};
  spec.strides = {k};
  spec.box = {kSwizzleBytes, box_rows};
  spec.swizzle = CU_TENSOR_MAP_SWIZZLE_128B;
  return spec;
}

}  // namespace ch04
