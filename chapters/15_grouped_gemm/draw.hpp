// Chapter 15's picture, drawn from the scheduler the kernel runs (scheduler.hpp): how the tiles of
// D map to groups in each layout, and which CTA computes each work. Host only.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "chapters/15_grouped_gemm/scheduler.hpp"
#include "common/svg.hpp"

namespace ch15 {

// One panel: D's rows (in 64-row boxes) by its column tiles, each work drawn where its rows lie,
// coloured by group, labelled with the CTA that takes it and its place in that CTA's walk. Paired
// (p.paired), `ctas` CTAs are ctas / 2 clusters: a work is labelled with its cluster, the CTA's
// rank (a or b) and its step, and `*` where the pair shares B.
inline double draw_layout(gemm::Svg& svg, double y, const SchedulerParams& p,
                          const std::vector<int>& m_indices, const std::vector<int>& masked_m,
                          int ctas, const std::string& title, const std::string& note) {
  const double x0 = 150, box_w = 64, box_h = 15;
  svg.text(10, y, 13, title);
  svg.text(10, y + 16, 11, note);
  y += 28;
  const int64_t d_rows = p.layout == Layout::Contiguous ? p.m : p.groups * p.m;
  const int boxes = int((d_rows + 63) / 64);
  // Labels of the rows: group boundaries.
  for (int b = 0; b < boxes; ++b) {
    char label[64];
    const int64_t row = int64_t(b) * 64;
    if (p.layout == Layout::Contiguous) {
      std::snprintf(label, sizeof label, "row %lld: %s", (long long)row,
                    m_indices[row] < 0 ? "pad" : ("g" + std::to_string(m_indices[row])).c_str());
    } else {
      const int g = int(row / p.m);
      std::snprintf(label, sizeof label, "g%d row %lld%s", g, (long long)(row - g * p.m),
                    row - g * p.m >= masked_m[g] ? " (past)" : "");
    }
    svg.text(10, y + b * box_h + 11, 10, label);
    for (int n = 0; n < p.tiles_n; ++n)
      svg.cell(x0 + n * box_w, y + b * box_h, box_w, box_h, 6, "");
  }
  const int walkers = p.paired ? ctas / 2 * 2 : ctas;
  for (int cta = 0; cta < walkers; ++cta) {
    const int cluster = p.paired ? cta / 2 : cta, stride = p.paired ? ctas / 2 : ctas;
    GroupedScheduler s(p, m_indices.data(), masked_m.data(), cluster, stride, cta % 2);
    int order = 0;
    for (Work w; s.next(w); ++order) {
      const int subtile_rows = p.block_m == 256 ? 128 : p.block_m;
      const int first = w.sub_begin * subtile_rows, last = w.sub_end * subtile_rows;
      for (int r = first; r < last && r < p.block_m; r += 64) {
        if (r >= w.rows) break;  // no box past the work's rows is stored
        const int b = int((w.row0 + r) / 64);
        char label[32];
        if (p.paired)
          std::snprintf(label, sizeof label, "k%d%c.%d%s", cluster, cta % 2 ? 'b' : 'a', order,
                        w.shared ? "*" : "");
        else
          std::snprintf(label, sizeof label, "%s c%d.%d", w.group < 0 ? "0s" : "", cta, order);
        svg.cell(x0 + w.n_block * box_w, y + b * box_h, box_w, box_h, w.group < 0 ? 7 : w.group % 6,
                 label);
      }
    }
  }
  return y + boxes * box_h + 26;
}

inline void draw_schedule(const std::string& path) {
  gemm::Svg svg;
  svg.text(10, 22, 15, "Chapter 15: tiles of D by group, and the CTA (cN) and step (.k) of each");
  svg.text(10, 40, 11,
           "from ch15::GroupedScheduler, the kernel's own walk (host arithmetic, not measured); "
           "brown: not stored");
  // Contiguous: groups of 300, 90, 0, 420 rows, each padded to 128; 256 x 128 tiles, N = 512.
  const std::vector<int64_t> rows = {300, 90, 0, 420};
  std::vector<int> idx;
  for (int g = 0; g < int(rows.size()); ++g) {
    const int64_t padded = (rows[g] + kAlignment - 1) / kAlignment * kAlignment;
    for (int64_t r = 0; r < padded; ++r) idx.push_back(r < rows[g] ? g : -1);
  }
  SchedulerParams c;
  c.layout = Layout::Contiguous;
  c.groups = int(rows.size());
  c.m = int64_t(idx.size());
  c.block_m = 256;
  c.block_n = 128;
  c.tiles_m = int((c.m + 255) / 256);
  c.tiles_n = 4;
  c.order_group = 2;
  double y = draw_layout(svg, 66, c, idx, {}, 5,
                         "contiguous: 300, 90, 0, 420 rows, padded to 128; 256 x 128 tiles; 5 CTAs",
                         "rows 256-511 hold groups 0 and 1: two works, one per 128-row half");
  // Masked: 4 groups of max_m 256 with 150, 0, 40 and 256 rows; 128 x 128 tiles.
  const std::vector<int> counts = {150, 0, 40, 256};
  SchedulerParams m;
  m.layout = Layout::Masked;
  m.groups = int(counts.size());
  m.m = 256;
  m.block_m = 128;
  m.block_n = 128;
  m.tiles_m = 2;
  m.tiles_n = 4;
  y = draw_layout(svg, y, m, {}, counts, 5,
                  "masked: max_m 256, masked_m = 150, 0, 40, 256; 128 x 128 tiles; 5 CTAs",
                  "group by group, M fastest inside a group; an empty group has no tile");
  // Masked in pairs: max_m 384 with 300, 0, 130 and 256 rows; 128 x 192 tiles, 3 columns.
  const std::vector<int> paired_counts = {300, 0, 130, 256};
  SchedulerParams q = m;
  q.groups = int(paired_counts.size());
  q.m = 384;
  q.block_n = 192;
  q.tiles_m = 3;
  q.tiles_n = 3;
  q.paired = true;
  y = draw_layout(svg, y, q, {}, paired_counts, 6,
                  "masked in pairs: max_m 384, masked_m = 300, 0, 130, 256; 128 x 192 tiles; 3 "
                  "clusters of 2 (kNa, kNb)",
                  "*: the pair's two m-blocks share B; group 0's third m-blocks pair across two "
                  "columns, the last one with a phantom");
  svg.save(path, 720, y, 9);
}

}  // namespace ch15
