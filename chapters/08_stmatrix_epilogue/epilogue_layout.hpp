// Chapter 08's host-checkable arithmetic: where the bf16 output tile sits in shared memory before
// its TMA store, and which shared address each lane hands to stmatrix. Plain C++
// (tests/host_chapter08.cpp); the kernel and the picture (draw.hpp) call the same functions.
//
// The tile. BLOCK_M x BLOCK_N bf16, stored for a TMA store with a swizzle of span 128, 64 or 32
// bytes. A swizzled box row is at most the span (cuda.h, cuTensorMapEncodeTiled: "the bounding box
// inner dimension ... must be less than or equal to the swizzle size"), so the tile is cut into
// column panels of span / 2 columns:
//
//   panel p = columns [p span / 2, (p + 1) span / 2): BLOCK_M rows x span bytes, at byte
//   p * BLOCK_M * span, and inside it (row, 16-byte chunk) swizzled with that span (swizzle below)
//
// For span 128 that is chapter 04's swizzle (ch04::swizzled_offset) applied to each panel, so every
// panel must start on a 1024-byte boundary, like chapter 04's tiles (BLOCK_M * 128 is a multiple of
// 1024 for BLOCK_M a multiple of 8). Each panel goes out with one TMA store per 64-row block, box
// {span / 2, 64} (d_store_view).
//
// The span is DeepGEMM's choice: the widest of 128, 64, 32 bytes that divides a tile row
// (swizzle_span_for), so that every box is exactly one span wide. The 128-byte swizzle at every
// width would leave a partial last panel where BLOCK_N % 64 != 0 (112 = 64 + 48, 144 = 128 + 16,
// 160 = 128 + 32), stored with a box narrower than the span; the driver documentation does not say
// at which row pitch TMA reads such a box (the span, or the box's own width), and a span per
// BLOCK_N leaves no such box.
//
// The stores. A math warpgroup holds 64 rows x BLOCK_N fp32 accumulators in wgmma's fragment
// (ptx::accumulator_position); BLOCK_M = 128 is two warpgroups, warpgroup wg owning rows
// [64 wg, 64 wg + 64) and its warp w rows [16 w, 16 w + 16) of those. The epilogue converts pairs
// to bf16x2 and writes them with stmatrix.sync.aligned.m8n8.x4.shared.b16 (PTX ISA, "stmatrix"):
// four 8 x 8 b16 matrices per instruction; lane l supplies the shared address of row l % 8 of
// matrix l / 8 (16 bytes, 16-byte aligned), and register i of lane l holds row l / 4, columns
// 2 (l % 4) and 2 (l % 4) + 1 of matrix i. That register layout is exactly the accumulator fragment
// of one 8-row x 8-column block, so each thread stores its own accumulators without a shuffle.
// One x4 store covers column groups j and j + 1 (j even, 8 columns each) of the warp's 16 rows:
//
//   matrix 0: rows 0-7,  group j      register 0 = bf16x2(acc[4j],     acc[4j + 1])
//   matrix 1: rows 8-15, group j      register 1 = bf16x2(acc[4j + 2], acc[4j + 3])
//   matrix 2: rows 0-7,  group j + 1  register 2 = bf16x2(acc[4j + 4], acc[4j + 5])
//   matrix 3: rows 8-15, group j + 1  register 3 = bf16x2(acc[4j + 6], acc[4j + 7])
//
// so a warp stores its 16 x BLOCK_N block in BLOCK_N / 16 instructions. Each matrix row is one
// 16-byte chunk; the swizzle puts the 8 rows of a matrix (same chunk, 8 consecutive rows) in 8
// different groups of 4 banks, so each matrix is written in one conflict-free pass. Row-major
// without swizzle, all 8 would share a bank group at BLOCK_N = 128 (8-way conflict).
#pragma once

#include <cstdint>

#include "chapters/04_swizzle_128b/swizzle.hpp"
#include "common/host_device.hpp"
#include "common/problem.hpp"
#include "common/tensor_map.hpp"

namespace ch08 {

inline constexpr int kBf16Bytes = 2;
inline constexpr int kChunkColumns = 16 / kBf16Bytes;  // 8 bf16 in a 16-byte chunk / matrix row
inline constexpr int kWarpgroupRows = 64;              // rows of one m64 wgmma accumulator
inline constexpr int kWarpRows = 16;                   // of which one warp holds 16

// --- The shared-memory tile (panels of one swizzle span) ----------------------------------------
//
// CU_TENSOR_MAP_SWIZZLE_64B and _32B permute 16-byte chunks within 64- and 32-byte spans (cuda.h,
// CUtensorMapSwizzle): on the address, bits [4, 4 + log2(span / 16)) are XORed with the bits of
// the same width from bit 7 up (CuTe's Swizzle<1,4,3>, <2,4,3>, <3,4,3>), repeating every 8 spans.
GEMM_HOST_DEVICE constexpr uint32_t swizzle(uint32_t address, uint32_t span) {
  return address ^ (((address >> 7) & (span / 16 - 1)) << 4);
}

// DeepGEMM's choice: the widest span that divides a tile row, so that no panel is partial.
// 128 for BLOCK_N = 64, 128, 192, 256; 64 for 32, 96, 160; 32 for 16, 48, 80, 112, 144.
GEMM_HOST_DEVICE constexpr uint32_t swizzle_span_for(int block_n) {
  const uint32_t row = uint32_t(block_n) * kBf16Bytes;
  return row % 128 == 0 ? 128 : row % 64 == 0 ? 64 : 32;
}

// Byte offset, from the (1024-byte aligned) tile start, of element (row, col) of the tile: panels
// of span / 2 columns, each BLOCK_M rows x span bytes, swizzled with that span. For col a multiple
// of 8 that is the 16-byte chunk that starts there (one stmatrix row).
GEMM_HOST_DEVICE constexpr uint32_t epilogue_offset(int row, int col, int block_m, uint32_t span) {
  const int columns = int(span) / kBf16Bytes;
  const uint32_t panel = uint32_t(col / columns), byte = uint32_t(col % columns) * kBf16Bytes;
  return panel * uint32_t(block_m) * span + swizzle(uint32_t(row) * span + byte, span);
}

// --- The stmatrix.x4 stores ---------------------------------------------------------------------

// The tile row whose 16 bytes lane `lane` of warp `warp` (0..3 within its math warpgroup) of math
// warpgroup `warpgroup` addresses: row l % 8 of matrix l / 8, matrices 1 and 3 being rows 8-15.
GEMM_HOST_DEVICE constexpr int stmatrix_row(int warpgroup, int warp, int lane) {
  return warpgroup * kWarpgroupRows + warp * kWarpRows + lane % 8 + 8 * ((lane / 8) % 2);
}
// The first tile column of that row for the store of groups j, j + 1: matrices 2 and 3 are j + 1.
GEMM_HOST_DEVICE constexpr int stmatrix_col(int j, int lane) {
  return kChunkColumns * (j + lane / 16);
}
// The shared address lane `lane` passes to the store of groups j, j + 1, from the tile start.
GEMM_HOST_DEVICE constexpr uint32_t stmatrix_address_offset(int warpgroup, int warp, int lane,
                                                            int j, int block_m, uint32_t span) {
  return epilogue_offset(stmatrix_row(warpgroup, warp, lane), stmatrix_col(j, lane), block_m, span);
}
// Which accumulator goes into half `half` (0: low 16 bits, 1: high) of register `reg` (0..3) of
// the store of groups j, j + 1: acc[4j + 2 reg + half].
GEMM_HOST_DEVICE constexpr int stmatrix_accumulator(int j, int reg, int half) {
  return 4 * j + 2 * reg + half;
}

// --- Two layouts to compare against, for the README ---------------------------------------------
//
// No kernel uses these. The chapter's README needs them: unswizzled_offset draws the picture's
// row-major grid (draw.hpp) and is the README's "Store the tile plain" exercise; both are the
// README's bank-conflict comparison, which tests/host_chapter08.cpp (BankConflicts) checks.

// Row-major with each row padded by 16 bytes: the classic fix for bank conflicts. The row pitch
// 2 BLOCK_N + 16 is an odd number of 16-byte chunks when BLOCK_N % 16 == 0, so 8 consecutive rows
// start in 8 different bank groups. Conflict-free too, but a TMA box is dense in shared memory: a
// padded tile cannot be one TMA store (it would go out row by row, or through the threads).
GEMM_HOST_DEVICE constexpr uint32_t padded_offset(int row, int col, int block_n) {
  return uint32_t(row) * (uint32_t(block_n) * kBf16Bytes + 16) + uint32_t(col) * kBf16Bytes;
}
// Plain row-major, what a TMA store without swizzle reads: the counterexample (bank conflicts).
GEMM_HOST_DEVICE constexpr uint32_t unswizzled_offset(int row, int col, int block_n) {
  return uint32_t(row) * uint32_t(block_n) * kBf16Bytes + uint32_t(col) * kBf16Bytes;
}

// --- The TMA store ------------------------------------------------------------------------------

// D as the TMA store sees it: bf16, N innermost; one box = one panel (span / 2 columns) of one
// warpgroup's 64 rows, written with the swizzle of that span.
inline gemm::TensorMapSpec<2> d_store_view(const gemm::Shape& s, uint32_t span) {
  gemm::TensorMapSpec<2> spec;
  spec.type = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  spec.element_bytes = 2;
  spec.dims = {uint64_t(s.n), uint64_t(s.m)};
  spec.strides = {uint64_t(s.n) * 2};
  spec.box = {span / 2, 64};
  spec.swizzle = span == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                 : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                              : CU_TENSOR_MAP_SWIZZLE_32B;
  return spec;
}

}  // namespace ch08
