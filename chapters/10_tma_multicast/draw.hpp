// Chapter 10's picture, drawn from the functions the kernel and its launch use (cluster.hpp,
// ch07's choose_tile, ch09's scheduler.hpp): the tiles of one shape coloured by the wave that computes them, in
// chapter 09's order (one CTA per tile at a time) and in chapter 10's (clusters of two CTAs
// walking pairs of tiles that share a multicast operand, each pair outlined). Host only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/09_persistent_scheduler/draw.hpp"
#include "chapters/10_tma_multicast/cluster.hpp"

namespace ch10 {

inline void draw_clusters(const std::string& path, const gemm::Shape& s = {4096, 7168, 16384},
                          int num_sms = ch09::kH100Sms) {
  const ch07::TileChoice v = ch07::choose_tile(s, num_sms);  // the kernel's plan, as in kernel.cu
  const int tiles_m = int((s.m + v.block_m - 1) / v.block_m);
  const int tiles_n = int((s.n + v.block_n - 1) / v.block_n);
  const Clusters c = plan_clusters(s, v.block_m, v.block_n,
                                   multicast_for(tiles_m, tiles_n, v.block_m, v.block_n, num_sms),
                                   num_sms, "draw");
  const int tiles = c.tiles_m * c.tiles_n;
  const int group09 = ch09::pick_group(c.tiles_m, c.tiles_n, v.block_m, v.block_n, num_sms);
  const int clusters = c.grid / c.cluster_size;
  char line[400];
  std::vector<std::string> heading;
  std::snprintf(line, sizeof line,
                "Clusters of two CTAs at %lld x %lld: %d x %d tiles of %d x %d, multicast %s, %d "
                "CTAs",
                (long long)s.m, (long long)s.n, c.tiles_m, c.tiles_n, v.block_m, v.block_n,
                name(c.multicast), c.grid);
  heading.push_back(line);
  heading.push_back(
      "cell (m_block, n_block): the wave that computes it; outlined: the two tiles of one "
      "cluster, which share the multicast operand's tile");
  std::snprintf(line, sizeof line,
                "left: chapter 09, tile index / %d; right: chapter 10, pair index / %d clusters "
                "(both tiles of a pair in the same wave)",
                num_sms, clusters);
  heading.push_back(line);
  heading.push_back(
      "from ch07::choose_tile, ch10::multicast_for, cta_tile and ch09::tile_at, pick_group (host "
      "arithmetic, not "
      "measured)");

  std::vector<ch09::OrderPanel> panels(2);
  // Chapter 09: one CTA per tile, grouped along M.
  ch09::OrderPanel& left = panels[0];
  std::snprintf(line, sizeof line, "chapter 09: tiles grouped along M, group = %d", group09);
  left.title = line;
  left.group_rows = group09;
  left.wave.assign(size_t(tiles), 0);
  for (int index = 0; index < tiles; ++index) {
    const ch09::TileCoord t = ch09::tile_at(index, c.tiles_m, c.tiles_n, group09);
    left.wave[size_t(t.m_block) * c.tiles_n + t.n_block] = index / num_sms;
  }
  std::snprintf(line, sizeof line, "L2 to SMs per K block and wave: %.2f MB",
                wave_l2_bytes(num_sms, v.block_m, v.block_n, Multicast::None) / 1e6);
  left.line1 = line;
  // Chapter 10: pairs, grouped along M over the grid of pairs.
  ch09::OrderPanel& right = panels[1];
  std::snprintf(line, sizeof line, "chapter 10: pairs (%d x %d) grouped along M, group = %d",
                c.pairs_m, c.pairs_n, c.group);
  right.title = line;
  right.group_rows = c.group * (c.multicast == Multicast::B ? 2 : 1);
  right.outline_rows = c.multicast == Multicast::B ? 2 : 1;
  right.outline_cols = c.multicast == Multicast::A ? 2 : 1;
  right.wave.assign(size_t(tiles), 0);
  const int pairs = c.pairs_m * c.pairs_n;
  for (int pair = 0; pair < pairs; ++pair)
    for (int rank = 0; rank < c.cluster_size; ++rank) {
      const TileCoord t = cta_tile(pair, rank, c.pairs_m, c.pairs_n, c.group, c.multicast);
      right.wave[size_t(t.m_block) * c.tiles_n + t.n_block] = pair / clusters;
    }
  std::snprintf(line, sizeof line, "L2 to SMs per K block and wave: %.2f MB (multicast on %s)",
                wave_l2_bytes(c.grid, v.block_m, v.block_n, c.multicast) / 1e6, name(c.multicast));
  right.line1 = line;

  int waves = 0;
  for (const auto& p : panels)
    for (int w : p.wave) waves = w + 1 > waves ? w + 1 : waves;
  std::vector<std::string> legend;
  for (int wv = 0; wv < waves; ++wv) legend.push_back(std::to_string(wv));
  ch09::draw_panels(path, heading, c.tiles_m, c.tiles_n, panels, legend);
}

}  // namespace ch10
