// Where chapter 01 puts each element of A and B in shared memory, and the two numbers (LBO, SBO)
// that tell the tensor core the same thing. Plain integer arithmetic: the kernel, the host tests
// and the pictures all call these functions, so they cannot disagree. The core-matrix arithmetic
// itself is ptx::no_swizzle_k_major_offset and ptx::no_swizzle_mn_major_offset
// (common/ptx/descriptor.hpp), which chapters 02 and 03 use too.
//
// The unit of every non-swizzled wgmma operand is the core matrix: 8 rows of 16 bytes, stored
// contiguously (128 bytes). For bf16 a 16-byte row holds 8 elements. PTX ISA 9.7.15.5.1.2,
// "Shared Memory Matrix Layout":
// https://docs.nvidia.com/cuda/parallel-thread-execution/#asynchronous-warpgroup-level-matrix-shared-memory-layout
//
//   K-major  (A always here; B with imm-trans-b = 0): a 16-byte row holds 8 consecutive k of one
//            m (or n); the 8 rows of a core matrix are 8 consecutive m (or n).
//   MN-major (B with imm-trans-b = 1): a 16-byte row holds 8 consecutive n of one k; the 8 rows
//            of a core matrix are 8 consecutive k.
//
// In both cases the descriptor gives the distance between core matrices with two numbers:
//   LBO, leading dimension byte offset: from one core matrix to the next along K;
//   SBO, stride dimension byte offset:  from one core matrix to the next along M (or N).
// That holds for the no-swizzle ("interleave") mode in both major-nesses; CUTLASS's canonical
// GMMA layouts (cute/atom/mma_traits_sm90_gmma.hpp) read the same. Swizzled layouts change the
// roles.
//
// Chapter 01 stores the two core matrices that share 8 rows next to each other (K first), so
//   LBO = 128: the k = 8..15 half of a group of rows starts right after the k = 0..7 half;
//   SBO = 256: the next 8 rows (m or n) start after those two core matrices.
// The same two numbers serve A, B K-major and B N-major.
#pragma once

#include <cstdint>

#include "common/host_device.hpp"
#include "common/ptx/base.cuh"        // kWarpgroupSize
#include "common/ptx/descriptor.hpp"  // the no-swizzle core-matrix offsets

namespace ch01 {

using ptx::kCoreMatrixBytes;  // 8 rows x 16 bytes

// The instruction's shape: D (64 x 8, fp32) = A (64 x 16, bf16) * B (16 x 8, bf16).
inline constexpr int kM = 64;
inline constexpr int kN = 8;
inline constexpr int kK = 16;
inline constexpr int kNumThreads = ptx::kWarpgroupSize;  // one warpgroup is the whole block
inline constexpr int kAccumulatorsPerThread = kM * kN / kNumThreads;  // 4

inline constexpr uint32_t kElementBytes = 2;  // bf16

inline constexpr uint32_t kLeadingByteOffset = kCoreMatrixBytes;     // LBO = 128: next 8 of K
inline constexpr uint32_t kStrideByteOffset = 2 * kCoreMatrixBytes;  // SBO = 256: next 8 of M/N

// A: 64 * 16 * 2 = 2048 bytes, 16 core matrices. B: 16 * 8 * 2 = 256 bytes, 2 core matrices.
inline constexpr uint32_t kABytes = kM * kK * kElementBytes;
inline constexpr uint32_t kBBytes = kK * kN * kElementBytes;

// How B arrives in global memory, and so how it sits in shared memory.
enum class BLayout {
  KMajor,  // N x K row-major ("B^T", DeepGEMM's layout): 16 k of one n contiguous; imm-trans-b = 0
  NMajor,  // K x N row-major: 8 n of one k contiguous; imm-trans-b = 1
};

// Element (m, k) of A, bytes from the start of A's shared-memory tile: K-major, so m picks the row
// of a core matrix and k the 2-byte column inside its 16-byte row.
GEMM_HOST_DEVICE constexpr uint32_t a_offset(int m, int k) {
  return ptx::no_swizzle_k_major_offset(m, k * kElementBytes, kLeadingByteOffset,
                                        kStrideByteOffset);
}

// Element (k, n) of B, bytes from the start of B's shared-memory tile. K-major: n picks the row of
// a core matrix, k the 2-byte column. N-major: k picks the row, n the 2-byte column; LBO and SBO
// keep their meaning (along K, along N).
GEMM_HOST_DEVICE constexpr uint32_t b_offset(int k, int n, BLayout layout) {
  return layout == BLayout::KMajor
             ? ptx::no_swizzle_k_major_offset(n, k * kElementBytes, kLeadingByteOffset,
                                              kStrideByteOffset)
             : ptx::no_swizzle_mn_major_offset(n * kElementBytes, k, kLeadingByteOffset,
                                               kStrideByteOffset);
}

// Index of element (k, n) of B in the global array of the given layout.
GEMM_HOST_DEVICE constexpr int b_global_index(int k, int n, BLayout layout) {
  return layout == BLayout::KMajor ? n * kK + k : k * kN + n;
}

// The instruction's imm-trans-b for a layout.
GEMM_HOST_DEVICE constexpr int trans_b(BLayout layout) {
  return layout == BLayout::NMajor;
}

}  // namespace ch01
