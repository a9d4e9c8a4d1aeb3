// Chapter 09's picture, drawn from the orders the kernel will use (scheduler.hpp): the output tiles
// of one shape, coloured by the wave that computes them, in row-major order (chapters 06-08) and
// in the grouped order (this chapter), side by side. Host only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "common/svg.hpp"

namespace ch09 {

// One grid of the picture: the wave of every tile (m_block-major), the title above it, two lines
// of figures under it; thick lines every `group_rows` rows (0: none), and outlines around blocks
// of outline_rows x outline_cols tiles (chapter 10's pairs; 1 x 1: none).
struct OrderPanel {
  std::string title;
  std::vector<int> wave;
  int group_rows = 0;
  int outline_rows = 1, outline_cols = 1;
  std::string line1, line2;
};

// Grids of tiles_m x tiles_n cells side by side, each cell coloured and labelled by its wave; the
// heading lines above, a legend of the waves (legend[j] for wave j) below. Host only.
inline void draw_panels(const std::string& path, const std::vector<std::string>& heading,
                        int tiles_m, int tiles_n, const std::vector<OrderPanel>& panels,
                        const std::vector<std::string>& legend) {
  // ColorBrewer Set3: twelve light colours that stay apart; wave j takes colour j % 12.
  const char* palette[12] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                             "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
  const int w = 16, h = 14, gap = 70, x0 = 56, y0 = 120;
  const int grid_w = tiles_n * w, grid_h = tiles_m * h;
  const int num_panels = int(panels.size());
  const double width = x0 + num_panels * grid_w + (num_panels - 1) * gap + 30;
  gemm::Svg s;
  char line[320];
  auto fill_rect = [&](double x, double y, double rw, double rh, int wave) {
    std::snprintf(line, sizeof line,
                  "<rect x='%g' y='%g' width='%g' height='%g' style='fill:%s;stroke:none'/>\n", x,
                  y, rw, rh, palette[wave % 12]);
    s.body += line;
  };
  auto segment = [&](double x1, double y1, double x2, double y2, const char* colour,
                     double stroke_width) {
    std::snprintf(line, sizeof line,
                  "<line x1='%g' y1='%g' x2='%g' y2='%g' stroke='%s' stroke-width='%g'/>\n", x1, y1,
                  x2, y2, colour, stroke_width);
    s.body += line;
  };
  auto outline = [&](double x, double y, double rw, double rh, double stroke_width) {
    std::snprintf(line, sizeof line,
                  "<rect x='%g' y='%g' width='%g' height='%g' style='fill:none;stroke:#222;"
                  "stroke-width:%g'/>\n",
                  x, y, rw, rh, stroke_width);
    s.body += line;
  };

  for (size_t i = 0; i < heading.size(); ++i)
    s.text(20, 20 + 14 * double(i) + (i > 0 ? 6 : 0), i == 0 ? 14 : 10, heading[i]);

  for (int panel = 0; panel < num_panels; ++panel) {
    const OrderPanel& p = panels[size_t(panel)];
    const int gx = x0 + panel * (grid_w + gap);
    s.text(gx, y0 - 30, 12, p.title);
    for (int nb = 0; nb < tiles_n; nb += 5)
      s.text(gx + nb * w + w / 2, y0 - 6, 8, "n" + std::to_string(nb), "middle");
    for (int mb = 0; mb < tiles_m; mb += 4)
      s.text(gx - 4, y0 + mb * h + h / 2 + 3, 8, "m" + std::to_string(mb), "end");
    // Fills: one rectangle per run of one wave along a row (keeps the file small); then the grid
    // lines; then one label per cell.
    for (int mb = 0; mb < tiles_m; ++mb)
      for (int nb = 0; nb < tiles_n;) {
        const int wv = p.wave[size_t(mb) * tiles_n + nb];
        int end = nb + 1;
        while (end < tiles_n && p.wave[size_t(mb) * tiles_n + end] == wv) ++end;
        fill_rect(gx + nb * w, y0 + mb * h, (end - nb) * w, h, wv);
        nb = end;
      }
    for (int nb = 1; nb < tiles_n; ++nb)
      segment(gx + nb * w, y0, gx + nb * w, y0 + grid_h, "#999", 0.4);
    for (int mb = 1; mb < tiles_m; ++mb)
      segment(gx, y0 + mb * h, gx + grid_w, y0 + mb * h, "#999", 0.4);
    if (p.outline_rows > 1 || p.outline_cols > 1)
      for (int mb = 0; mb < tiles_m; mb += p.outline_rows)
        for (int nb = 0; nb < tiles_n; nb += p.outline_cols)
          outline(gx + nb * w + 1, y0 + mb * h + 1, p.outline_cols * w - 2, p.outline_rows * h - 2,
                  0.9);
    s.body += "<g font-size='8' text-anchor='middle'>\n";
    for (int mb = 0; mb < tiles_m; ++mb)
      for (int nb = 0; nb < tiles_n; ++nb) {
        std::snprintf(line, sizeof line, "<text x='%d' y='%d'>%d</text>", gx + nb * w + w / 2,
                      y0 + mb * h + h / 2 + 3, p.wave[size_t(mb) * tiles_n + nb]);
        s.body += line;
        if (nb + 1 == tiles_n) s.body += "\n";
      }
    s.body += "</g>\n";
    outline(gx, y0, grid_w, grid_h, 1.2);
    if (p.group_rows > 0)  // group boundaries
      for (int mb = p.group_rows; mb < tiles_m; mb += p.group_rows)
        segment(gx - 8, y0 + mb * h, gx + grid_w + 8, y0 + mb * h, "#222", 2.5);
    s.text(gx, y0 + grid_h + 18, 10, p.line1);
    s.text(gx, y0 + grid_h + 32, 10, p.line2);
  }

  // Legend: one swatch per wave, as many to a line as fit.
  const int waves = int(legend.size());
  const double ly = y0 + grid_h + 52, item = 118;
  const int per_line = int((width - 90) / item) > 1 ? int((width - 90) / item) : 1;
  s.text(20, ly + 10, 10, "waves:");
  for (int wv = 0; wv < waves; ++wv) {
    const double lx = 70 + (wv % per_line) * item, y = ly + (wv / per_line) * 18;
    fill_rect(lx, y, 14, 12, wv);
    s.text(lx + 18, y + 10, 9, legend[size_t(wv)]);
  }
  s.save(path, width, ly + ceil_div(waves, per_line) * 18 + 12, 8);
}

// The tile grid (tiles_m rows x tiles_n columns) twice: row-major on the left, grouped on the
// right. Cell (m_block, n_block) is coloured by its wave, index / num_sms (the j-th tile of every
// CTA of a persistent grid of num_sms CTAs), and labelled with the wave number; thick lines mark
// the groups. Under each grid: the distinct m-blocks and n-blocks of wave 0 and the means over all
// windows of num_sms consecutive tiles. group = 0 takes pick_group's choice.
inline void draw_schedule(const std::string& path, int64_t m = 4096, int64_t n = 7168,
                          int block_m = 128, int block_n = 160, int num_sms = kH100Sms,
                          int group = 0) {
  const int tiles_m = int((m + block_m - 1) / block_m), tiles_n = int((n + block_n - 1) / block_n);
  if (group <= 0) group = pick_group(tiles_m, tiles_n, block_m, block_n, num_sms);
  const int tiles = tiles_m * tiles_n, waves = ceil_div(tiles, num_sms);
  char line[320];
  std::vector<std::string> heading;
  std::snprintf(line, sizeof line,
                "Tile order of a persistent grid: %lld x %lld with %d x %d tiles (%d x %d tiles), "
                "%d CTAs",
                (long long)m, (long long)n, block_m, block_n, tiles_m, tiles_n, num_sms);
  heading.push_back(line);
  std::snprintf(line, sizeof line,
                "cell (m_block, n_block): the wave that computes it, index / %d (the j-th tile of "
                "every CTA is wave j); %d waves",
                num_sms, waves);
  heading.push_back(line);
  heading.push_back(
      "the CTAs of one wave share A tiles along a row and B tiles along a column through L2: "
      "fewer distinct rows and columns per wave, fewer bytes from DRAM");
  heading.push_back(
      "from ch09::row_major_at, tile_at, row_major_stats, grouped_stats (host arithmetic, "
      "not measured)");

  const WindowStats stats[2] = {row_major_stats(tiles_m, tiles_n, block_m, block_n, num_sms),
                                grouped_stats(tiles_m, tiles_n, group, block_m, block_n, num_sms)};
  std::vector<OrderPanel> panels(2);
  for (int panel = 0; panel < 2; ++panel) {
    OrderPanel& p = panels[size_t(panel)];
    if (panel == 0) {
      p.title = "row-major, N fastest (chapters 06-08)";
    } else {
      std::snprintf(line, sizeof line, "grouped along M, group = %d, M fastest in a group", group);
      p.title = line;
      p.group_rows = group;
    }
    // wave[m][n], and wave 0's distinct rows and columns.
    p.wave.assign(size_t(tiles), 0);
    std::vector<char> seen_m(size_t(tiles_m), 0), seen_n(size_t(tiles_n), 0);
    int wave0_m = 0, wave0_n = 0;
    for (int index = 0; index < tiles; ++index) {
      const TileCoord t = panel == 0 ? row_major_at(index, tiles_m, tiles_n)
                                     : tile_at(index, tiles_m, tiles_n, group);
      p.wave[size_t(t.m_block) * tiles_n + t.n_block] = index / num_sms;
      if (index < stats[panel].window) {
        wave0_m += !seen_m[t.m_block];
        wave0_n += !seen_n[t.n_block];
        seen_m[t.m_block] = seen_n[t.n_block] = 1;
      }
    }
    const WindowStats& st = stats[panel];
    std::snprintf(
        line, sizeof line, "wave 0: %d m-blocks x %d n-blocks, %.0f KB of A and B per K block",
        wave0_m, wave0_n,
        double((int64_t(wave0_m) * block_m + int64_t(wave0_n) * block_n) * gemm::kScaleBlock) /
            1024);
    p.line1 = line;
    std::snprintf(line, sizeof line,
                  "any %d consecutive tiles: mean %.1f m x %.1f n blocks, %.0f KB per K block",
                  st.window, st.mean_m, st.mean_n, st.mean_bytes / 1024);
    p.line2 = line;
  }
  std::vector<std::string> legend;
  for (int wv = 0; wv < waves; ++wv) {
    const int first = wv * num_sms, last = first + num_sms < tiles ? first + num_sms : tiles;
    std::snprintf(line, sizeof line, "%d: [%d, %d)", wv, first, last);
    legend.push_back(line);
  }
  draw_panels(path, heading, tiles_m, tiles_n, panels, legend);
}

}  // namespace ch09
