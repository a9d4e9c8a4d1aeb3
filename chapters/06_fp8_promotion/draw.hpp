// Chapter 06's picture, drawn from promotion.hpp's subtiles and subtile_row (the kernel's
// TileConfig and row arithmetic): which warpgroup computes which rows of the 256 x 128 and the
// 128 x 128 tile, into which half of final_acc, and the order of one K block for one warpgroup.
// Host only.
#pragma once

#include <cstdio>
#include <string>

#include "chapters/06_fp8_promotion/promotion.hpp"
#include "common/svg.hpp"

namespace ch06 {

inline void draw_subtiles(const std::string& path) {
  constexpr int kAccumulators = 64;  // m64n128k32: 64 fp32 per thread
  const double row_h = 0.75, col_w = 2.0, x0 = 30, y0 = 70, gap = 190;
  gemm::Svg s;
  s.text(20, 18, 13, "Chapter 06: one acc, two sub-tiles per warpgroup (colour: the warpgroup)");
  s.text(20, 36, 10,
         "each band: 64 rows x 128 columns, one m64n128k32 sequence into acc, promoted into its "
         "own final_acc half; from ch06::subtiles, subtile_row");
  for (int t = 0; t < 2; ++t) {
    const int block_m = t == 0 ? 256 : 128;
    const double x = x0 + t * (128 * col_w + gap);
    s.text(x, y0 - 10, 11,
           t == 0 ? "BLOCK_M = 256 (M > 128): 4 bands" : "BLOCK_M = 128 (M &lt;= 128): 2 bands");
    for (int w = 0; w < 2; ++w)
      for (int sub = 0; sub < subtiles(block_m); ++sub) {
        const int row = subtile_row(w, sub);
        char label[96];
        std::snprintf(label, sizeof label, "wg %d, sub-tile %d: rows %d-%d", w, sub, row, row + 63);
        s.cell(x, y0 + row * row_h, 128 * col_w, 64 * row_h, w, label);
        char acc[64];
        std::snprintf(acc, sizeof acc, "-> final_acc[%d..%d]", sub * kAccumulators,
                      sub * kAccumulators + kAccumulators - 1);
        s.text(x + 128 * col_w + 6, y0 + (row + 36) * row_h, 9, acc);
      }
  }
  // One K block of warpgroup w at 256 rows, left to right.
  const double y1 = y0 + 256 * row_h + 40, box_h = 22;
  s.text(20, y1 - 8, 11, "one K block of one warpgroup (256 rows), in order:");
  const char* steps[] = {"wait full[s]", "load scales",           "wgmma sub 0 -> acc",
                         "wait",         "promote -> final[0..]", "wgmma sub 1 -> acc",
                         "wait",         "arrive empty[s]",       "promote -> final[64..]"};
  const int colour[] = {7, 5, 2, 7, 4, 2, 7, 6, 4};
  double x = 20;
  for (int i = 0; i < 9; ++i) {
    const double w = 8.0 * std::string(steps[i]).size() + 12;
    s.cell(x, y1, w, box_h, colour[i], steps[i]);
    x += w + 4;
  }
  s.text(20, y1 + box_h + 18, 10,
         "green: the tensor core works; orange: the CUDA cores promote, while only the other "
         "warpgroup's wgmmas can keep the tensor core busy");
  s.save(path, x + 20 > 2 * (128 * col_w + gap) ? x + 20 : 2 * (128 * col_w + gap), y1 + box_h + 34,
         9);
}

}  // namespace ch06
