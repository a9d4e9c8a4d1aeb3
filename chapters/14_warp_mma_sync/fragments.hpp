// Which lane of a warp holds which element of mma.sync's operands, what ldmatrix hands each lane,
// and where chapter 14 keeps its tiles in shared memory. Plain integer arithmetic: the kernel, the
// host tests (tests/host_chapter14.cpp) and the pictures (main.cu --draw) call the same functions.
//
// The maps are those of the PTX ISA 9.0 sections "Matrix Fragments for mma.m16n8k32" (8-bit A and
// B), "Matrix Fragments for mma.m16n8k16 with floating point type" and "Warp-level matrix load
// instruction: ldmatrix". In all of them a lane l is split into
//   g = l / 4 (groupID: the row of A and C, the column n of B) and
//   t = l % 4 (threadID_in_group: which few consecutive k, or which pair of columns of C).
#pragma once

#include <cstdint>

#include "common/host_device.hpp"

namespace ch14 {

struct RowCol {
  int row;
  int col;
};

inline constexpr int kLanes = 32;

// ---- mma.sync m16n8k32, e4m3 ----------------------------------------------------------------
// A is 16 x 32: 4 registers of 4 bytes, element i = 4 * register + byte (0..15).
// Registers 0 and 2 hold row g, registers 1 and 3 row g + 8; registers 0 and 1 hold k = 4t..4t+3,
// registers 2 and 3 the same 16 further along K.
GEMM_HOST_DEVICE constexpr RowCol a_e4m3(int lane, int i) {
  return {lane / 4 + 8 * ((i / 4) % 2), 4 * (lane % 4) + i % 4 + 16 * (i / 8)};
}
// B is 32 x 8 (row = k, col = n): 2 registers of 4 bytes, element i = 4 * register + byte (0..7).
GEMM_HOST_DEVICE constexpr RowCol b_e4m3(int lane, int i) {
  return {4 * (lane % 4) + i % 4 + 16 * (i / 4), lane / 4};
}

// ---- mma.sync m16n8k16, f16 ------------------------------------------------------------------
// A is 16 x 16: 4 registers of 2 halves, element i = 2 * register + half (0..7).
GEMM_HOST_DEVICE constexpr RowCol a_f16(int lane, int i) {
  return {lane / 4 + 8 * ((i / 2) % 2), 2 * (lane % 4) + i % 2 + 8 * (i / 4)};
}
// B is 16 x 8 (row = k, col = n): 2 registers of 2 halves, element i (0..3).
GEMM_HOST_DEVICE constexpr RowCol b_f16(int lane, int i) {
  return {2 * (lane % 4) + i % 2 + 8 * (i / 2), lane / 4};
}

// ---- the accumulator, both shapes -------------------------------------------------------------
// C and D are 16 x 8 fp32: element i (0..3); i and i + 1 are neighbours in a row.
GEMM_HOST_DEVICE constexpr RowCol c_f32(int lane, int i) {
  return {lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2};
}

// ---- ldmatrix ----------------------------------------------------------------------------------
// Element e (0, 1) of the register that one 8x8 matrix of b16 fills in `lane`: its (row, column)
// in the matrix as it sits in shared memory (8 rows of 16 bytes).
GEMM_HOST_DEVICE constexpr RowCol ldmatrix_b16(int lane, int e) {
  return {lane / 4, 2 * (lane % 4) + e};
}
// With .trans: the matrix arrives transposed.
GEMM_HOST_DEVICE constexpr RowCol ldmatrix_b16_trans(int lane, int e) {
  return {2 * (lane % 4) + e, lane / 4};
}
// The same register read as 4 fp8 bytes b (0..3): row lane / 4, bytes 4 (lane % 4) + b.
GEMM_HOST_DEVICE constexpr RowCol ldmatrix_bytes(int lane, int b) {
  return {lane / 4, 4 * (lane % 4) + b};
}

// ---- the kernel's tiles ------------------------------------------------------------------------
inline constexpr int BLOCK_M = 128;
inline constexpr int BLOCK_N = 128;
inline constexpr int BLOCK_K = 64;  // fp8 bytes per row of a stage
inline constexpr int kStages = 4;
inline constexpr int kWarpsM = 2, kWarpsN = 4;                  // 8 warps: 2 x 4
inline constexpr int WARP_M = BLOCK_M / kWarpsM;                // 64 rows: 4 tiles of m16
inline constexpr int WARP_N = BLOCK_N / kWarpsN;                // 32 columns: 4 tiles of n8
inline constexpr int kNumThreads = kWarpsM * kWarpsN * kLanes;  // 256

// A stage holds the A tile (BLOCK_M rows of BLOCK_K fp8) and the B tile (BLOCK_N rows), K-major:
// row r is 64 bytes, 4 chunks of 16. Unswizzled, the 8 rows one ldmatrix reads sit 64 bytes apart,
// so rows 0, 2, 4, 6 hit the same banks (a 4-way conflict). The chunk index is XORed with
// (row / 2) % 4: the 8 rows' 16-byte chunks then cover all 32 banks once.
GEMM_HOST_DEVICE constexpr uint32_t fp8_offset(int row, int kbyte) {
  return uint32_t(row) * BLOCK_K + ((uint32_t(kbyte / 16) ^ uint32_t((row / 2) % 4)) * 16) +
         uint32_t(kbyte % 16);
}
inline constexpr uint32_t kTileBytes = BLOCK_M * BLOCK_K;  // 8 KB (BLOCK_N = BLOCK_M)
inline constexpr uint32_t kStageBytes = 2 * kTileBytes;    // A then B

// The f16 variant's tiles: the landed stage converted, BLOCK_K halves (128 bytes) per row, 8
// chunks of 16 bytes XORed with row % 8 (the classic 128-byte swizzle).
GEMM_HOST_DEVICE constexpr uint32_t f16_offset(int row, int k) {
  return uint32_t(row) * (BLOCK_K * 2) + ((uint32_t(k / 8) ^ uint32_t(row % 8)) * 16) +
         uint32_t(k % 8) * 2;
}
inline constexpr uint32_t kF16TileBytes = BLOCK_M * BLOCK_K * 2;  // 16 KB

// Who copies what: chunk c (0 .. 1023) of a stage, 16 bytes, is thread c % 256's copy number
// c / 256. Chunks 0-511 are A's tile, 512-1023 B's; within a tile, row c / 4, k bytes 16 (c % 4).
// A warp's 32 consecutive chunks are 8 whole rows: 512 contiguous bytes of the stage.
struct StageChunk {
  int tile;  // 0: A, 1: B
  int row;
  int kbyte;
};
inline constexpr int kChunksPerTile = BLOCK_M * (BLOCK_K / 16);  // 512
GEMM_HOST_DEVICE constexpr StageChunk stage_chunk(int c) {
  return {c / kChunksPerTile, (c % kChunksPerTile) / (BLOCK_K / 16), 16 * (c % (BLOCK_K / 16))};
}

// Which row and k each lane points ldmatrix.x4 at, for one warp's operand of one MMA.
// A, e4m3 (a 16 x 32 tile at row0, K step kk of 32 bytes): matrix j = lane / 8 is rows
// 8 (j % 2) .. + 7, bytes 16 (j / 2) .. + 15, so register j is a_e4m3's register j.
GEMM_HOST_DEVICE constexpr RowCol a_e4m3_ldmatrix_row(int lane) {
  return {lane % 8 + 8 * ((lane / 8) % 2), 16 * (lane / 16)};
}
// B, e4m3 (two n8 tiles, 16 rows of B, 32 bytes of K): matrix j is rows 8 (j / 2) .. + 7, bytes
// 16 (j % 2) .. + 15: registers 0, 1 are the first n8 tile's b_e4m3 registers, 2, 3 the second's.
GEMM_HOST_DEVICE constexpr RowCol b_e4m3_ldmatrix_row(int lane) {
  return {lane % 8 + 8 * (lane / 16), 16 * ((lane / 8) % 2)};
}
// The f16 variant, one k16 step: the same two patterns in halves (8 halves per 16 bytes).
GEMM_HOST_DEVICE constexpr RowCol a_f16_ldmatrix_row(int lane) {
  return {lane % 8 + 8 * ((lane / 8) % 2), 8 * (lane / 16)};
}
GEMM_HOST_DEVICE constexpr RowCol b_f16_ldmatrix_row(int lane) {
  return {lane % 8 + 8 * (lane / 16), 8 * ((lane / 8) % 2)};
}

}  // namespace ch14
