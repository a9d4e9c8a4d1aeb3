// Chapter 12's picture, drawn from the functions the kernel uses (config.hpp): for the shape's
// configuration, which K blocks each CTA of a cluster loads (k_slice), and which columns of the
// tile each CTA adds up and stores (reducing_rank), with the partial sums every other CTA sends it.
// Host only.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>

#include "chapters/12_split_k/config.hpp"
#include "common/svg.hpp"

namespace ch12 {

inline void draw_split(const std::string& path, const gemm::Shape& s = {64, 2112, 7168}) {
  const Config c = choose_config(s);
  const int split = c.split, block_n = c.variant.block_n;
  const int num_k_blocks = int(s.k / gemm::kScaleBlock);
  gemm::Svg svg;
  const double x0 = 150, cell = 26, row = 30;
  char line[400];
  std::snprintf(line, sizeof line,
                "Chapter 12 at %s: tiles of %d x %d, a cluster of %d CTAs per tile (%d tiles, %d "
                "CTAs)",
                s.str().c_str(), c.variant.block_m, block_n, split, c.tiles_m * c.tiles_n, c.grid);
  svg.text(10, 22, 15, line);
  svg.text(10, 42, 12,
           "from ch12::choose_config, k_slice and reducing_rank (host arithmetic, not measured)");
  // 1. The K blocks: which CTA of the cluster loads and multiplies each.
  double y = 70;
  svg.text(10, y + 4, 13, "1. K blocks of the tile, by the CTA that runs them (k_slice):");
  y += 14;
  for (int kb = 0; kb < num_k_blocks; ++kb) {
    int owner = 0;
    for (int r = 0; r < split; ++r)
      if (kb >= k_slice(num_k_blocks, split, r).begin && kb < k_slice(num_k_blocks, split, r).end)
        owner = r;
    svg.cell(x0 + kb * 14, y, 14, 22, owner, kb % 4 == 0 ? std::to_string(kb) : "");
  }
  for (int r = 0; r < split; ++r) {
    const KSlice k = k_slice(num_k_blocks, split, r);
    std::snprintf(line, sizeof line, "rank %d: blocks %d-%d", r, k.begin, k.end - 1);
    svg.text(x0 + r * 160, y + 40, 11, line);
  }
  // 2. The columns: each rank receives the same 16 bytes of every other CTA's partial sums for its
  // groups, and adds them to its own.
  y += 75;
  svg.text(10, y, 13,
           "2. 8-column groups of the tile, by the CTA that adds them (reducing_rank) and stores "
           "them:");
  y += 12;
  const int groups = block_n / 8;
  for (int r = 0; r < split; ++r) {
    std::snprintf(line, sizeof line, "partials of rank %d", r);
    svg.text(10, y + r * row + 17, 11, line);
    for (int g = 0; g < groups; ++g)
      svg.cell(x0 + g * cell, y + r * row, cell, row - 6, reducing_rank(g, block_n, split),
               std::to_string(g * 8));
  }
  y += split * row + 6;
  svg.text(10, y + 17, 11, "D, stored by");
  for (int g = 0; g < groups; ++g)
    svg.cell(x0 + g * cell, y, cell, row - 6, reducing_rank(g, block_n, split),
             "r" + std::to_string(reducing_rank(g, block_n, split)));
  y += row + 14;
  const int per = groups_per_rank(block_n, split);
  std::snprintf(
      line, sizeof line,
      "rank r adds groups [%d r, %d r + %d) of all %d CTAs' sums, in rank order (%d bytes "
      "sent by each other CTA into its shared memory)",
      per, per, per, split, c.variant.block_m * block_n * 4 / split);
  svg.text(10, y, 11, line);
  svg.save(path, x0 + std::max(groups * cell, num_k_blocks * 14.0) + 20, y + 20, 9);
}

}  // namespace ch12
