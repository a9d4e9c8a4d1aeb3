// Chapter 09's host-checkable arithmetic: the order in which a persistent grid walks the output
// tiles, and how many distinct A and B tiles the CTAs running at the same time touch. Plain C++
// (tests/host_chapter09.cpp); the kernel will call tile_at, the picture (draw.hpp) and the tests
// call everything.
//
// The persistent grid. One CTA per SM, never more CTAs than tiles (persistent_grid); CTA c computes
// the tiles with linear index c, c + grid, c + 2 grid, ... < tiles. At any moment the ~grid CTAs
// work on about grid consecutive indices: "wave" j is [j * grid, (j + 1) * grid). Which A and B
// tiles a wave shares in L2 is decided by the map from index to (m_block, n_block).
//
// Row-major (chapters 06-08's order, N fastest): index = m_block * tiles_n + n_block. At
// 4096 x 7168 with 128 x 160 tiles (32 x 45), a wave of 132 covers 3 or 4 rows of tiles and all
// 45 columns: all of B goes through L2 in every wave.
//
// Grouped along M (this chapter): the m-blocks are cut into groups of `group` rows of tiles; the
// tiles of a group are consecutive indices; inside a group the m-block runs fastest and the
// n-block slowest:
//
//   group = 4, tiles_m = 10 (the last group is ragged: 2 rows), tiles_n = 6:
//
//              n: 0   1   2   3   4   5
//   m 0          0   4   8  12  16  20      group 0: indices [0, 24)
//   m 1          1   5   9  13  17  21
//   m 2          2   6  10  14  18  22
//   m 3          3   7  11  15  19  23
//   m 4         24  28  32  36  40  44      group 1: indices [24, 48)
//   ...
//   m 8         48  50  52  54  56  58      group 2: rows 8, 9 only, indices [48, 60)
//   m 9         49  51  53  55  57  59
//
// A window of W consecutive indices inside one group touches `group` m-blocks and
// ceil(W / group) or one more n-blocks, instead of about W / tiles_n + 1 m-blocks and all tiles_n
// n-blocks. Per 128-deep K block the window's distinct tiles are
//   distinct_m * BLOCK_M * 128 + distinct_n * BLOCK_N * 128 bytes (fp8),
// smallest near group = sqrt(W * BLOCK_N / BLOCK_M), about 13 for W = 132 and BLOCK_N = 160; the
// ragged last group and the windows that straddle two groups move the best value, so pick_group
// tries every group size up to kMaxGroup and keeps the smallest mean footprint.
//
// Why M fastest inside the group, not N: with N fastest inside a group of whole rows the order is
// row-major again, whatever the group size. With M fastest, group = 1 is row-major (chapters
// 06-08's order, so the group size is a knob that starts from the old order), and group >= tiles_m
// is column-major (M fastest over the whole grid). DeepGEMM's scheduler offers both directions
// (groups along N when it multicasts A); chapter 10's multicast will choose between them.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/check.hpp"
#include "common/host_device.hpp"
#include "common/problem.hpp"  // gemm::kH100Sms, gemm::kScaleBlock

namespace ch09 {

using gemm::kH100Sms;                 // the default W of the windows: CTAs running at once
inline constexpr int kMaxGroup = 16;  // largest group pick_group tries (DeepGEMM's is 16)

struct TileCoord {
  int m_block, n_block;
};

GEMM_HOST_DEVICE constexpr bool operator==(TileCoord a, TileCoord b) {
  return a.m_block == b.m_block && a.n_block == b.n_block;
}

GEMM_HOST_DEVICE constexpr int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

// --- The persistent grid -------------------------------------------------------------------------

// One CTA per SM and never more CTAs than tiles; and, where the last round is at least half full,
// no more CTAs than the rounds need. With the tiles dealt out round-robin, num_sms CTAs take
// ceil(tiles / num_sms) rounds, and the fewest CTAs that take no more rounds is
// ceil(tiles / rounds): 896 tiles on 132 SMs take 7 rounds either way, and 128 CTAs work through
// all 7 where 132 would leave 28 idle in the last. Measured (README, "The grid"): 0.8 - 3.2%
// faster where the last round was 67 - 88% full, but 2.4% slower where it held 4 tiles of 132
// (4096 tiles: the last round then runs nearly alone, and fast), so a last round less than half
// full keeps every SM. (DeepGEMM 8dfa329 chose the fewest SMs for the same waves everywhere.)
GEMM_HOST_DEVICE constexpr int persistent_grid(int tiles, int num_sms) {
  if (tiles <= num_sms) return tiles;
  const int rounds = (tiles + num_sms - 1) / num_sms;
  const int last = tiles - (rounds - 1) * num_sms;  // the last round of num_sms CTAs
  if (2 * last < num_sms) return num_sms;
  return (tiles + rounds - 1) / rounds;
}

// How many tiles CTA `cta` of a grid of `grid` computes: the indices cta + j * grid < tiles.
GEMM_HOST_DEVICE constexpr int tiles_of_cta(int cta, int grid, int tiles) {
  return cta < tiles ? (tiles - cta + grid - 1) / grid : 0;
}

// --- The two orders ------------------------------------------------------------------------------
//
// Both map [0, tiles_m * tiles_n) one to one onto the tiles (tests/host_chapter09.cpp checks it
// for every shape the benchmark runs and for ragged and tiny grids). index < 2^31.

// Chapters 06-08: N fastest.
GEMM_HOST_DEVICE constexpr TileCoord row_major_at(int index, int tiles_m, int tiles_n) {
  (void)tiles_m;
  return {index / tiles_n, index % tiles_n};
}

// Grouped along M, M fastest inside a group. group >= 1; a group larger than tiles_m is tiles_m.
GEMM_HOST_DEVICE constexpr TileCoord tile_at(int index, int tiles_m, int tiles_n, int group) {
  if (group > tiles_m) group = tiles_m;
  const int tiles_per_group = group * tiles_n;
  const int g = index / tiles_per_group;
  const int first_m = g * group;
  // Every group but the last has `group` rows; the last has what is left.
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  const int i = index - g * tiles_per_group;
  return {first_m + i % rows, i / rows};
}

// The inverse of tile_at: the index of tile (m_block, n_block).
GEMM_HOST_DEVICE constexpr int index_of(TileCoord t, int tiles_m, int tiles_n, int group) {
  if (group > tiles_m) group = tiles_m;
  const int g = t.m_block / group;
  const int first_m = g * group;
  const int rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  return g * group * tiles_n + t.n_block * rows + (t.m_block - first_m);
}

// --- The L2 footprint of a window ----------------------------------------------------------------
//
// For the order `at` (index -> TileCoord), over every window of W = min(window, tiles) consecutive
// indices (tiles - W + 1 windows, one per start): the distinct m-blocks and n-blocks it touches,
// and its footprint per K block, (distinct_m * block_m + distinct_n * block_n) * 128 bytes: the
// A and B tiles that the CTAs of the window would share through L2 if they ran in step.
//
// wave_bytes sums the footprint over the aligned waves [j W, (j + 1) W) (the last one partial).
// Times k / 128 it is a model of the DRAM bytes read: every wave reads its distinct tiles from
// DRAM once, and nothing survives in L2 from one wave to the next. (A model, host arithmetic; the
// kernel's ncu numbers are what counts.)
struct WindowStats {
  int window = 0;                 // W
  int64_t windows = 0;            // sliding windows: tiles - W + 1
  int max_m = 0, max_n = 0;       // most distinct m-blocks, n-blocks in one window
  double mean_m = 0, mean_n = 0;  // their means over the sliding windows
  int64_t max_bytes = 0;          // largest footprint of one window, bytes per K block
  double mean_bytes = 0;          // mean footprint, bytes per K block
  int waves = 0;                  // aligned waves: ceil(tiles / W)
  int64_t wave_bytes = 0;         // sum of the waves' footprints, bytes per K block
};

template <typename Order>
WindowStats window_stats(const Order& at, int tiles_m, int tiles_n, int block_m, int block_n,
                         int window) {
  WindowStats s;
  const int tiles = tiles_m * tiles_n;
  if (tiles <= 0 || window <= 0) return s;
  const int w = window < tiles ? window : tiles;
  s.window = w;
  s.windows = tiles - w + 1;
  s.waves = ceil_div(tiles, w);
  std::vector<TileCoord> order(tiles);
  for (int i = 0; i < tiles; ++i) order[i] = at(i);
  auto bytes = [&](int dm, int dn) {
    return (int64_t(dm) * block_m + int64_t(dn) * block_n) * gemm::kScaleBlock;
  };

  // Sliding windows: counts of each m-block and n-block in the window, updated one index at a time.
  std::vector<int> count_m(tiles_m, 0), count_n(tiles_n, 0);
  int dm = 0, dn = 0;
  auto add = [&](TileCoord t, int d) {
    int& cm = count_m[t.m_block];
    int& cn = count_n[t.n_block];
    dm += (cm == 0 && d > 0) - (cm == 1 && d < 0);
    dn += (cn == 0 && d > 0) - (cn == 1 && d < 0);
    cm += d;
    cn += d;
  };
  double sum_m = 0, sum_n = 0, sum_bytes = 0;
  for (int i = 0; i < tiles; ++i) {
    add(order[i], +1);
    if (i >= w) add(order[i - w], -1);
    if (i < w - 1) continue;
    s.max_m = dm > s.max_m ? dm : s.max_m;
    s.max_n = dn > s.max_n ? dn : s.max_n;
    const int64_t b = bytes(dm, dn);
    s.max_bytes = b > s.max_bytes ? b : s.max_bytes;
    sum_m += dm;
    sum_n += dn;
    sum_bytes += double(b);
  }
  s.mean_m = sum_m / double(s.windows);
  s.mean_n = sum_n / double(s.windows);
  s.mean_bytes = sum_bytes / double(s.windows);

  // Aligned waves.
  for (int first = 0; first < tiles; first += w) {
    std::vector<char> seen_m(tiles_m, 0), seen_n(tiles_n, 0);
    int wm = 0, wn = 0;
    for (int i = first; i < tiles && i < first + w; ++i) {
      wm += !seen_m[order[i].m_block];
      wn += !seen_n[order[i].n_block];
      seen_m[order[i].m_block] = seen_n[order[i].n_block] = 1;
    }
    s.wave_bytes += bytes(wm, wn);
  }
  return s;
}

inline WindowStats row_major_stats(int tiles_m, int tiles_n, int block_m, int block_n,
                                   int window = kH100Sms) {
  return window_stats([&](int i) { return row_major_at(i, tiles_m, tiles_n); }, tiles_m, tiles_n,
                      block_m, block_n, window);
}

inline WindowStats grouped_stats(int tiles_m, int tiles_n, int group, int block_m, int block_n,
                                 int window = kH100Sms) {
  return window_stats([&](int i) { return tile_at(i, tiles_m, tiles_n, group); }, tiles_m, tiles_n,
                      block_m, block_n, window);
}

// --- Choosing the group size ---------------------------------------------------------------------
//
// The group in [1, min(tiles_m, max_group)] with the smallest mean footprint over the sliding
// windows of num_sms; among equal means the smallest group. It returns 1 (row-major) where the
// order cannot matter: one row of tiles (tiles_m = 1), or no more tiles than SMs (one window).
inline int pick_group(int tiles_m, int tiles_n, int block_m, int block_n, int num_sms = kH100Sms,
                      int max_group = kMaxGroup) {
  int best = 1;
  double best_bytes = grouped_stats(tiles_m, tiles_n, 1, block_m, block_n, num_sms).mean_bytes;
  for (int g = 2; g <= max_group && g <= tiles_m; ++g) {
    const double b = grouped_stats(tiles_m, tiles_n, g, block_m, block_n, num_sms).mean_bytes;
    if (b < best_bytes) best = g, best_bytes = b;
  }
  return best;
}

// pick_group, remembered: it walks every tile once per group size tried (0.2 ms at 32 x 45 tiles,
// 0.9 ms at 32 x 205, 20 ms at 16384 x 8 on the build machine), too slow to redo at every launch.
// Thread-safe; one entry per (tiles_m, tiles_n, block_m, block_n, num_sms) seen.
inline int cached_group(int tiles_m, int tiles_n, int block_m, int block_n, int num_sms) {
  static std::mutex mutex;
  static std::map<std::tuple<int, int, int, int, int>, int> known;
  const auto key = std::make_tuple(tiles_m, tiles_n, block_m, block_n, num_sms);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  const int group = pick_group(tiles_m, tiles_n, block_m, block_n, num_sms);
  const std::lock_guard<std::mutex> lock(mutex);
  known[key] = group;
  return group;
}

// The group a launch uses: CH09_GROUP from the environment when it is set and not empty (the
// knob for measuring one order against another on the same kernel: 1 is row-major), else
// `chosen`. Read at every launch, so a test may set it between runs. Anything but a positive
// integer is refused with a sentence naming `who` and the variable.
inline int group_from_environment(int chosen, const char* who) {
  const char* text = std::getenv("CH09_GROUP");
  if (text == nullptr || *text == '\0') return chosen;
  char* end = nullptr;
  const long group = std::strtol(text, &end, 10);
  // Digits only: strtol alone would also take a leading space or sign (" 4", "+4").
  if (*text < '0' || *text > '9' || *end != '\0' || group < 1 || group > (1L << 30))
    throw gemm::UnsupportedError(std::string(who) +
                                 ": CH09_GROUP must be a positive integer (got \"" + text + "\")");
  return int(group);
}

}  // namespace ch09
