// The arithmetic of wgmma's operands, shared by the kernels and the host tests: the shared-memory
// matrix descriptor and the accumulator fragment map. Plain integer code, no PTX.
#pragma once

#include <cstdint>

#include "common/problem.hpp"  // GEMM_HOST_DEVICE

namespace ptx {

// How the rows of a shared-memory operand are laid out (descriptor bits 62-63).
enum class Swizzle : uint32_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// The 64-bit shared memory matrix descriptor of wgmma (PTX ISA 9.7.15.5.1, "Matrix Descriptor
// Format";
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
//   bits  0-13  start address        >> 4  (shared-window byte address; 16-byte granules)
//   bits 16-29  leading byte offset  >> 4  (LBO)
//   bits 32-45  stride byte offset   >> 4  (SBO)
//   bits 49-51  base offset                (for swizzled tiles not aligned to the pattern; 0 here)
//   bits 62-63  swizzle mode               (Swizzle above)
// For a K-major operand without swizzle the unit is the core matrix: 8 rows x 16 bytes stored
// contiguously (128 bytes). LBO is the distance between core matrices adjacent along K, SBO the
// distance between core matrices adjacent along M (or N).
struct MatrixDescriptor {
  uint32_t start_address = 0;  // bytes, shared window
  uint32_t leading_byte_offset = 0;
  uint32_t stride_byte_offset = 0;
  uint32_t base_offset = 0;
  Swizzle swizzle = Swizzle::None;
};

GEMM_HOST_DEVICE constexpr uint64_t encode(const MatrixDescriptor& d) {
  return (uint64_t((d.start_address & 0x3FFFF) >> 4) << 0) |
         (uint64_t((d.leading_byte_offset & 0x3FFFF) >> 4) << 16) |
         (uint64_t((d.stride_byte_offset & 0x3FFFF) >> 4) << 32) |
         (uint64_t(d.base_offset & 0x7) << 49) | (uint64_t(d.swizzle) << 62);
}

// Where a descriptor without swizzle says element (row, k) of a K-major operand sits, in bytes from
// its start address: core matrix (row / 8, k / 16) at (row / 8) * SBO + (k / 16) * LBO, and inside
// it row % 8 selects a 16-byte row and k % 16 the byte (one fp8 element per byte).
GEMM_HOST_DEVICE constexpr uint32_t no_swizzle_k_major_offset(int row, int k, uint32_t lbo,
                                                              uint32_t sbo) {
  return uint32_t(row / 8) * sbo + uint32_t(k / 16) * lbo + uint32_t(row % 8) * 16 + k % 16;
}

// Where a thread's accumulator lives. For wgmma m64nN with fp32 accumulators, thread t of the
// warpgroup (warp w = t / 32, lane l) holds N / 2 values; value r sits at
//   row = 16 w + l / 4 + 8 * ((r / 2) % 2)
//   col = 8 * (r / 4) + 2 * (l % 4) + r % 2
// (PTX ISA 9.7.15.5.2, "Register Fragments", figure "WGMMA .m64nNk16 register fragment layout
// for accumulator matrix D"). Each warp owns 16 rows; each quad of lanes owns one row pair.
struct RowCol {
  int row, col;
};
GEMM_HOST_DEVICE constexpr RowCol accumulator_position(int thread, int reg) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((reg / 2) % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

}  // namespace ptx
