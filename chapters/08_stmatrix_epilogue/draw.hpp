// Chapter 08's picture, drawn from the layout functions the kernel uses (epilogue_layout.hpp):
// where one warp's stmatrix.x4 puts its four 8 x 8 matrices in the first panel of the swizzled
// output tile, and where the same store would go in a plain row-major tile. Host only.
#pragma once

#include <cstdio>
#include <string>

#include "chapters/08_stmatrix_epilogue/epilogue_layout.hpp"
#include "common/svg.hpp"

namespace ch08 {

// Three grids of 16 rows (warp 0's rows: two 1024-byte swizzle atoms) x 8 columns of 16 bytes:
//   1. the tile as D sees it: row x logical chunk (8 columns of D);
//   2. the swizzled panel in shared memory: row x 16-byte position within the 128-byte row, i.e.
//      bank group (banks 4p..4p+3);
//   3. plain row-major with BLOCK_N = 128 (256-byte rows): row x bank group.
// Each cell written by the store of groups j = 0, 1 (warp 0 of warpgroup 0) is labelled with the
// lane that supplies its address and coloured by matrix (0..3).
inline void draw_stmatrix(const std::string& path) {
  constexpr int kRows = 16, kBlockM = 128, kBlockN = 128, kJ = 0;
  constexpr uint32_t kSpan = swizzle_span_for(kBlockN);  // 128, as the kernel's at BLOCK_N = 128
  constexpr uint32_t kBankRowBytes = 32 * 4;             // 32 banks of 4 bytes
  const double w = 40, h = 18, gap = 50, x0 = 60, y0 = 112;
  const double grid_w = 8 * w;
  gemm::Svg s;
  s.text(20, 18, 13,
         "stmatrix.x4: one warp's store of accumulator groups 0 and 1 (16 rows x 16 columns)");
  s.text(20, 36, 10,
         "cells: the 16-byte rows of the four 8x8 matrices; label: the lane that supplies the "
         "row's address; colour: the matrix");
  s.text(20, 50, 10,
         "matrix 0: rows 0-7, columns 0-7; 1: rows 8-15, columns 0-7; 2: rows 0-7, columns 8-15; "
         "3: rows 8-15, columns 8-15");
  s.text(20, 64, 10,
         "cN: D columns 8N..8N+7; bN: banks 4N..4N+3 (bank = byte address / 4 mod 32); from "
         "ch08::stmatrix_row, stmatrix_col, epilogue_offset, unswizzled_offset");
  const char* titles[3] = {"D tile: logical 16-byte chunk", "swizzled panel (this chapter)",
                           "row-major, 256-byte rows"};
  auto empty = [&](double x, double y) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "<rect x='%g' y='%g' width='%g' height='%g' fill='white'/>\n", x,
                  y, w, h);
    s.body += buf;
  };
  for (int g = 0; g < 3; ++g) {
    const double gx = x0 + g * (grid_w + gap);
    s.text(gx, y0 - 26, 11, titles[g]);
    for (int p = 0; p < 8; ++p)
      s.text(gx + p * w + w / 2, y0 - 6, 9, (g == 0 ? "c" : "b") + std::to_string(p), "middle");
    for (int row = 0; row < kRows; ++row) {
      if (g == 0) s.text(gx - 6, y0 + row * h + h - 5, 9, "row " + std::to_string(row), "end");
      for (int p = 0; p < 8; ++p) empty(gx + p * w, y0 + row * h);
    }
  }
  for (int lane = 0; lane < 32; ++lane) {
    const int row = stmatrix_row(0, 0, lane), col = stmatrix_col(kJ, lane), matrix = lane / 8;
    const std::string label = "L" + std::to_string(lane);
    const int logical = col / kChunkColumns;
    const int swizzled = int(epilogue_offset(row, col, kBlockM, kSpan) % kBankRowBytes) / 16;
    const int plain = int(unswizzled_offset(row, col, kBlockN) % kBankRowBytes) / 16;
    const double y = y0 + row * h;
    s.cell(x0 + logical * w, y, w, h, matrix, label);
    s.cell(x0 + (grid_w + gap) + swizzled * w, y, w, h, matrix, label);
    // Row-major: rows 256 bytes apart, so every row of a matrix starts in the same bank group; the
    // cells of one column are the rows that conflict.
    s.cell(x0 + 2 * (grid_w + gap) + plain * w, y, w, h, matrix, label);
  }
  const double yb = y0 + kRows * h + 22;
  s.text(20, yb, 10,
         "swizzled: the 8 rows of each matrix sit in 8 different bank groups -> all 32 banks, one "
         "pass per matrix (conflict-free)");
  s.text(20, yb + 16, 10,
         "row-major: the 8 rows of each matrix share one bank group -> 8-way bank conflict");
  s.save(path, x0 + 3 * grid_w + 2 * gap + 20, yb + 30, 9);
}

}  // namespace ch08
