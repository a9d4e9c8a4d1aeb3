// The arithmetic of wgmma's operands, shared by the kernels and the host tests: the shared-memory
// matrix descriptor, the no-swizzle core-matrix layout it describes, and the accumulator fragment
// map. Plain integer code, no PTX.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "common/ptx/base.cuh"  // kWarpSize

namespace ptx {

// How the rows of a shared-memory operand are laid out (descriptor bits 62-63).
enum class Swizzle : uint32_t { None = 0, B128 = 1, B64 = 2, B32 = 3 };

// The 64-bit shared memory matrix descriptor of wgmma (PTX ISA 9.7.15.5.1.2.2, "Matrix Descriptor
// Format"; https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout-matrix-descriptor):
//   bits  0-13  start address        >> 4  (shared-window byte address; 16-byte granules)
//   bits 16-29  leading byte offset  >> 4  (LBO)
//   bits 32-45  stride byte offset   >> 4  (SBO)
//   bits 49-51  base offset                (for swizzled tiles not aligned to the pattern; 0 here)
//   bits 62-63  swizzle mode               (Swizzle above)
// Without swizzle, LBO is the distance between core matrices adjacent along K and SBO between core
// matrices adjacent along M (or N): see the layout below.
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

// The same descriptor with its start address moved on by `units` of 16 bytes. The address is the
// descriptor's low 14 bits, in 16-byte units, and a shared-memory address stays below 256 KB, so
// the sum never carries out of them: only the low 32-bit half changes (one 32-bit addition, where
// building the descriptor again costs a mask, a shift and moves; chapter 06's NOTES.md,
// "2. The cycle accounting of 2026-11-23"). For start + 16 * units < 2^18,
// advance(encode({start, ...}), units) == encode({start + 16 * units, ...})
// (tests/host_chapter01.cpp).
GEMM_HOST_DEVICE constexpr uint64_t advance(uint64_t desc, uint32_t units) {
  return (desc & ~uint64_t(0xFFFFFFFFu)) | uint32_t(uint32_t(desc) + units);
}

// The no-swizzle ("interleave") layout, the one place it is written: an operand is a grid of core
// matrices, each 8 rows of 16 bytes stored as 128 contiguous bytes. The descriptor finds core
// matrix (i, j) at i * SBO + j * LBO from its start address, i counting along M (or N) and j along
// K; inside it, row r starts at r * 16 (PTX ISA 9.7.15.5.1.2, "Shared Memory Matrix Layout").
inline constexpr uint32_t kCoreMatrixRows = 8;
inline constexpr uint32_t kCoreMatrixRowBytes = 16;
inline constexpr uint32_t kCoreMatrixBytes = kCoreMatrixRows * kCoreMatrixRowBytes;  // 128

// K-major operand (A; B with imm-trans-b = 0): a 16-byte row holds consecutive k of one m (or n).
// Byte k_byte of row mn (k_byte = k * element size; k itself for fp8) lies in core matrix
// (mn / 8, k_byte / 16), in its row mn % 8, at byte k_byte % 16.
GEMM_HOST_DEVICE constexpr uint32_t no_swizzle_k_major_offset(int mn, int k_byte, uint32_t lbo,
                                                              uint32_t sbo) {
  return uint32_t(mn) / kCoreMatrixRows * sbo + uint32_t(k_byte) / kCoreMatrixRowBytes * lbo +
         uint32_t(mn) % kCoreMatrixRows * kCoreMatrixRowBytes +
         uint32_t(k_byte) % kCoreMatrixRowBytes;
}

// MN-major operand (B with imm-trans-b = 1; 16-bit types only): a 16-byte row holds consecutive n
// of one k. Byte mn_byte (n * element size) of column k lies in core matrix
// (mn_byte / 16, k / 8), in its row k % 8, at byte mn_byte % 16. LBO still steps along K and SBO
// along N (chapter 01 checks this on the GPU).
GEMM_HOST_DEVICE constexpr uint32_t no_swizzle_mn_major_offset(int mn_byte, int k, uint32_t lbo,
                                                               uint32_t sbo) {
  return uint32_t(mn_byte) / kCoreMatrixRowBytes * sbo + uint32_t(k) / kCoreMatrixRows * lbo +
         uint32_t(k) % kCoreMatrixRows * kCoreMatrixRowBytes +
         uint32_t(mn_byte) % kCoreMatrixRowBytes;
}

// Where a thread's accumulator lives. For wgmma m64nN with fp32 accumulators, thread t of the
// warpgroup (warp w = t / 32, lane l = t % 32) holds N / 2 values; value r sits at
//   row = 16 w + l / 4 + 8 * ((r / 2) % 2)
//   col = 8 * (r / 4) + 2 * (l % 4) + r % 2
// (PTX ISA 9.7.15.5.1.1, "Register Fragments", figure "WGMMA .m64nNk16 register fragment layout
// for accumulator matrix D"). Each warp owns 16 rows; each quad of lanes owns one row pair.
struct RowCol {
  int row, col;
};
GEMM_HOST_DEVICE constexpr RowCol accumulator_position(int thread, int reg) {
  const int warp = thread / kWarpSize, lane = thread % kWarpSize;
  return {16 * warp + lane / 4 + 8 * ((reg / 2) % 2), 8 * (reg / 4) + 2 * (lane % 4) + reg % 2};
}

}  // namespace ptx
