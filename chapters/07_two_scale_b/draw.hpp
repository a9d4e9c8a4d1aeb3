// Chapter 07's picture, drawn from scale_blocks.hpp's num_former_iters (the kernel's choice of
// scale per accumulator group): the first tiles of a row of tiles 144 and 160 columns wide over
// B's 128-column scale blocks, each 8-column group coloured by the scale block it takes. Host only.
#pragma once

#include <cstdio>
#include <string>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "common/svg.hpp"

namespace ch07 {

inline void draw_scale_blocks(const std::string& path) {
  constexpr int kColumns = 1280;  // 10 scale blocks: 8 tiles of 144 (one period, 1152) or 160
  const double px = 0.9, x0 = 70, h = 20;  // pixels per column
  gemm::Svg s;
  s.text(20, 18, 13,
         "Chapter 07: tiles that straddle two B scale blocks (colour: the scale block)");
  s.text(20, 36, 10,
         "top: B's scale blocks, 128 columns each; below: tiles of BLOCK_N columns, one cell per "
         "8-column accumulator group; from ch07::num_former_iters");
  const int columns = kColumns;
  double y = 56;
  s.text(x0 - 6, y + h - 6, 9, "sB", "end");
  for (int j = 0; j * kScaleBlockN < columns; ++j)
    s.cell(x0 + j * kScaleBlockN * px, y, kScaleBlockN * px, h, j, "block " + std::to_string(j));
  for (int block_n : {144, 160}) {
    y += h + 24;
    s.text(x0 - 6, y + h - 6, 9, std::to_string(block_n), "end");
    for (int i = 0; (i + 1) * block_n <= columns; ++i) {
      const int64_t n0 = int64_t(i) * block_n;
      const int former = num_former_iters(n0, block_n), first = int(n0 / kScaleBlockN);
      for (int g = 0; g < block_n / kColumnGroup; ++g) {
        const int block = g < former ? first : first + 1;
        const double x = x0 + (n0 + g * kColumnGroup) * px;
        s.cell(x, y, kColumnGroup * px, h, block, "");
      }
      char outline[160];  // the tile's edge
      std::snprintf(outline, sizeof outline,
                    "<rect x='%g' y='%g' width='%g' height='%g' fill='none' stroke='#000' "
                    "stroke-width='1.5'/>\n",
                    x0 + n0 * px, y, block_n * px, h);
      s.body += outline;
      char label[64];
      std::snprintf(label, sizeof label, "tile %d: %d + %d", i, former,
                    block_n / kColumnGroup - former);
      s.text(x0 + (n0 + block_n / 2.0) * px, y + h + 11, 8, label, "middle");
    }
  }
  s.text(20, y + h + 34, 10,
         "tile i: num_former_iters groups take block n0 / 128, the rest the next block; a group "
         "never straddles (tiles start on multiples of 8)");
  s.save(path, x0 + columns * px + 30, y + h + 46, 8);
}

}  // namespace ch07
