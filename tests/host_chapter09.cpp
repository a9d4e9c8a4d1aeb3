// Chapter 09's plain arithmetic: the tile orders of the persistent grid (row-major and grouped
// along M), checked to visit every tile exactly once on every shape the benchmark runs and on
// ragged and tiny grids; the window statistics against a brute force; and the numbers the README
// quotes (computed, not measured).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "chapters/09_persistent_scheduler/draw.hpp"
#include "chapters/09_persistent_scheduler/scheduler.hpp"
#include "tests/read_text.hpp"

namespace {

constexpr int kBlockM = 128;

struct Grid {
  int tiles_m, tiles_n;
};

Grid grid_of(const gemm::Shape& s, int block_n, int block_m = kBlockM) {
  return {int((s.m + block_m - 1) / block_m), int((s.n + block_n - 1) / block_n)};
}

// Ragged and tiny grids: 1 x 1, one row, one column, tiles_m below every group size > 1, primes.
const Grid kOddGrids[] = {{1, 1},   {1, 2},   {2, 1},   {1, 7},   {7, 1},   {2, 3},   {3, 5},
                          {5, 3},   {13, 17}, {17, 13}, {31, 37}, {37, 31}, {16, 45}, {17, 45},
                          {33, 45}, {32, 45}, {1, 256}, {256, 1}, {61, 2},  {2, 61},  {97, 89}};

// Asserts that order(i) for i in [0, tiles) is a permutation of the tile grid.
template <typename Order>
void expect_permutation(const Order& order, Grid g, const std::string& what) {
  const int tiles = g.tiles_m * g.tiles_n;
  std::vector<char> seen(size_t(tiles), 0);
  for (int i = 0; i < tiles; ++i) {
    const ch09::TileCoord t = order(i);
    ASSERT_GE(t.m_block, 0) << what << " index " << i;
    ASSERT_LT(t.m_block, g.tiles_m) << what << " index " << i;
    ASSERT_GE(t.n_block, 0) << what << " index " << i;
    ASSERT_LT(t.n_block, g.tiles_n) << what << " index " << i;
    char& s = seen[size_t(t.m_block) * g.tiles_n + t.n_block];
    ASSERT_EQ(s, 0) << what << " index " << i << " revisits (" << t.m_block << ", " << t.n_block
                    << ")";
    s = 1;
  }
}

void check_grid(Grid g, const std::string& what) {
  const int tiles_m = g.tiles_m, tiles_n = g.tiles_n;
  expect_permutation([&](int i) { return ch09::row_major_at(i, tiles_m, tiles_n); }, g,
                     what + " row-major");
  for (int group = 1; group <= 16; ++group) {
    const std::string w = what + " group " + std::to_string(group);
    expect_permutation([&](int i) { return ch09::tile_at(i, tiles_m, tiles_n, group); }, g, w);
    for (int i = 0; i < tiles_m * tiles_n; ++i)
      ASSERT_EQ(ch09::index_of(ch09::tile_at(i, tiles_m, tiles_n, group), tiles_m, tiles_n, group),
                i)
          << w;
  }
}

TEST(Chapter09, EveryTileOnceOnTheBenchmarkShapes) {
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    for (int block_n : {128, 144, 160})
      check_grid(grid_of(s, block_n), s.str() + " block_n " + std::to_string(block_n));
    check_grid(grid_of(s, 128, 256), s.str() + " 256 x 128");
  }
}

TEST(Chapter09, EveryTileOnceOnRaggedAndTinyGrids) {
  for (Grid g : kOddGrids)
    check_grid(g, std::to_string(g.tiles_m) + " x " + std::to_string(g.tiles_n));
  // A group larger than tiles_m is tiles_m, however large.
  for (Grid g : kOddGrids)
    for (int group : {g.tiles_m, g.tiles_m + 1, 1000, 1 << 30})
      for (int i = 0; i < g.tiles_m * g.tiles_n; ++i)
        ASSERT_TRUE(ch09::tile_at(i, g.tiles_m, g.tiles_n, group) ==
                    ch09::tile_at(i, g.tiles_m, g.tiles_n, g.tiles_m))
            << g.tiles_m << " x " << g.tiles_n << " group " << group;
}

TEST(Chapter09, TheOrdersAreWhatTheHeaderSays) {
  for (Grid g : kOddGrids) {
    const int tiles = g.tiles_m * g.tiles_n;
    for (int i = 0; i < tiles; ++i) {
      const ch09::TileCoord rm = ch09::row_major_at(i, g.tiles_m, g.tiles_n);
      // Row-major: N fastest, chapters 06-08's blockIdx.x = n block, blockIdx.y = m block.
      EXPECT_EQ(rm.m_block * g.tiles_n + rm.n_block, i);
      // group = 1 is row-major; group >= tiles_m is column-major (M fastest everywhere).
      EXPECT_TRUE(ch09::tile_at(i, g.tiles_m, g.tiles_n, 1) == rm);
      const ch09::TileCoord cm = ch09::tile_at(i, g.tiles_m, g.tiles_n, g.tiles_m);
      EXPECT_EQ(cm.n_block * g.tiles_m + cm.m_block, i);
      // One row of tiles: every group size gives row-major.
      if (g.tiles_m == 1) {
        for (int group = 1; group <= 16; ++group)
          EXPECT_TRUE(ch09::tile_at(i, 1, g.tiles_n, group) == rm);
      }
    }
    // Group structure: group k holds m-blocks [k G, min((k + 1) G, tiles_m)) at consecutive
    // indices; inside it M runs fastest.
    for (int group = 1; group <= 16; ++group)
      for (int i = 0; i < tiles; ++i) {
        const ch09::TileCoord t = ch09::tile_at(i, g.tiles_m, g.tiles_n, group);
        const int gsize = group < g.tiles_m ? group : g.tiles_m;
        EXPECT_EQ(t.m_block / gsize, i / (gsize * g.tiles_n));
        const int first_m = t.m_block / gsize * gsize;
        const int rows = g.tiles_m - first_m < gsize ? g.tiles_m - first_m : gsize;
        const int in_group = i - first_m * g.tiles_n;
        EXPECT_EQ(t.m_block - first_m, in_group % rows);
        EXPECT_EQ(t.n_block, in_group / rows);
      }
  }
  // The header's drawing: 10 x 6 tiles, group 4.
  const int expected[10][6] = {{0, 4, 8, 12, 16, 20},    {1, 5, 9, 13, 17, 21},
                               {2, 6, 10, 14, 18, 22},   {3, 7, 11, 15, 19, 23},
                               {24, 28, 32, 36, 40, 44}, {25, 29, 33, 37, 41, 45},
                               {26, 30, 34, 38, 42, 46}, {27, 31, 35, 39, 43, 47},
                               {48, 50, 52, 54, 56, 58}, {49, 51, 53, 55, 57, 59}};
  for (int m = 0; m < 10; ++m)
    for (int n = 0; n < 6; ++n) {
      EXPECT_EQ(ch09::index_of({m, n}, 10, 6, 4), expected[m][n]);
      EXPECT_TRUE(ch09::tile_at(expected[m][n], 10, 6, 4) == (ch09::TileCoord{m, n}));
    }
}

TEST(Chapter09, UsableAtCompileTime) {
  static_assert(ch09::tile_at(0, 32, 45, 16) == ch09::TileCoord{0, 0});
  static_assert(ch09::tile_at(15, 32, 45, 16) == ch09::TileCoord{15, 0});
  static_assert(ch09::tile_at(16, 32, 45, 16) == ch09::TileCoord{0, 1});
  static_assert(ch09::tile_at(16 * 45, 32, 45, 16) == ch09::TileCoord{16, 0});
  static_assert(ch09::tile_at(1439, 32, 45, 16) == ch09::TileCoord{31, 44});
  static_assert(ch09::row_major_at(46, 32, 45) == ch09::TileCoord{1, 1});
  static_assert(ch09::index_of({31, 44}, 32, 45, 16) == 1439);
  static_assert(ch09::persistent_grid(1440, 132) == 131 && ch09::persistent_grid(56, 132) == 56);
  static_assert(ch09::persistent_grid(896, 132) == 128 && ch09::persistent_grid(1584, 132) == 132);
  static_assert(ch09::persistent_grid(4096, 132) == 132);  // a last round of 4 tiles: no trim
}

TEST(Chapter09, PersistentGridCoversEveryIndexOnce) {
  for (int tiles : {1, 2, 56, 131, 132, 133, 264, 1440, 1792, 4928})
    for (int sms : {1, 7, 132}) {
      const int grid = ch09::persistent_grid(tiles, sms);
      // Never more CTAs than SMs or tiles; as few rounds as a CTA per SM would take; every SM
      // where the last round of a CTA per SM is less than half full, else the fewest CTAs that
      // take that many rounds.
      const int rounds = (tiles + sms - 1) / sms, last = tiles - (rounds - 1) * sms;
      EXPECT_LE(grid, tiles < sms ? tiles : sms);
      EXPECT_EQ((tiles + grid - 1) / grid, rounds) << "tiles " << tiles << " sms " << sms;
      if (tiles > sms && 2 * last < sms)
        EXPECT_EQ(grid, sms) << "tiles " << tiles << " sms " << sms;
      else
        EXPECT_LT((grid - 1) * rounds, tiles) << "tiles " << tiles << " sms " << sms;
      std::vector<int> visits(size_t(tiles), 0);
      int total = 0;
      for (int cta = 0; cta < grid; ++cta) {
        int count = 0;
        for (int index = cta; index < tiles; index += grid) ++visits[size_t(index)], ++count;
        EXPECT_EQ(ch09::tiles_of_cta(cta, grid, tiles), count)
            << "tiles " << tiles << " grid " << grid << " cta " << cta;
        EXPECT_GE(count, 1);  // no CTA of the persistent grid is idle
        total += count;
      }
      EXPECT_EQ(total, tiles);
      for (int v : visits) EXPECT_EQ(v, 1);
    }
}

// The window statistics the slow way: a set per window.
template <typename Order>
ch09::WindowStats brute_force(const Order& order, Grid g, int block_m, int block_n, int window) {
  ch09::WindowStats s;
  const int tiles = g.tiles_m * g.tiles_n, w = window < tiles ? window : tiles;
  s.window = w;
  s.windows = tiles - w + 1;
  s.waves = (tiles + w - 1) / w;
  double sum_m = 0, sum_n = 0, sum_b = 0;
  auto footprint = [&](int first, int last) {
    std::set<int> ms, ns;
    for (int i = first; i < last; ++i) ms.insert(order(i).m_block), ns.insert(order(i).n_block);
    return std::pair<int, int>(int(ms.size()), int(ns.size()));
  };
  auto bytes = [&](std::pair<int, int> d) {
    return (int64_t(d.first) * block_m + int64_t(d.second) * block_n) * 128;
  };
  for (int first = 0; first + w <= tiles; ++first) {
    const auto d = footprint(first, first + w);
    s.max_m = std::max(s.max_m, d.first);
    s.max_n = std::max(s.max_n, d.second);
    s.max_bytes = std::max(s.max_bytes, bytes(d));
    sum_m += d.first, sum_n += d.second, sum_b += double(bytes(d));
  }
  s.mean_m = sum_m / double(s.windows);
  s.mean_n = sum_n / double(s.windows);
  s.mean_bytes = sum_b / double(s.windows);
  for (int first = 0; first < tiles; first += w)
    s.wave_bytes += bytes(footprint(first, std::min(first + w, tiles)));
  return s;
}

void expect_same(const ch09::WindowStats& a, const ch09::WindowStats& b, const std::string& what) {
  EXPECT_EQ(a.window, b.window) << what;
  EXPECT_EQ(a.windows, b.windows) << what;
  EXPECT_EQ(a.max_m, b.max_m) << what;
  EXPECT_EQ(a.max_n, b.max_n) << what;
  EXPECT_EQ(a.max_bytes, b.max_bytes) << what;
  EXPECT_NEAR(a.mean_m, b.mean_m, 1e-9) << what;
  EXPECT_NEAR(a.mean_n, b.mean_n, 1e-9) << what;
  EXPECT_NEAR(a.mean_bytes, b.mean_bytes, 1e-6 * b.mean_bytes) << what;
  EXPECT_EQ(a.waves, b.waves) << what;
  EXPECT_EQ(a.wave_bytes, b.wave_bytes) << what;
}

TEST(Chapter09, WindowStatsAgainstBruteForce) {
  const Grid grids[] = {{1, 1}, {3, 5}, {13, 17}, {32, 45}, {32, 15}, {7, 1}, {1, 40}};
  for (Grid g : grids)
    for (int window : {1, 5, 20, 132, 10000})
      for (int group : {1, 2, 3, 8, 16}) {
        const std::string what = std::to_string(g.tiles_m) + " x " + std::to_string(g.tiles_n) +
                                 " window " + std::to_string(window) + " group " +
                                 std::to_string(group);
        expect_same(
            ch09::grouped_stats(g.tiles_m, g.tiles_n, group, 128, 160, window),
            brute_force([&](int i) { return ch09::tile_at(i, g.tiles_m, g.tiles_n, group); }, g,
                        128, 160, window),
            what);
        expect_same(ch09::row_major_stats(g.tiles_m, g.tiles_n, 128, 144, window),
                    brute_force([&](int i) { return ch09::row_major_at(i, g.tiles_m, g.tiles_n); },
                                g, 128, 144, window),
                    what + " row-major");
      }
}

TEST(Chapter09, AWindowInsideOneGroup) {
  // W consecutive indices [s, s + W) inside a group of r rows: min(r, W) m-blocks, and the columns
  // s / r .. (s + W - 1) / r (s counted from the group's start): ceil(W / r) or one more.
  for (Grid g : {Grid{32, 45}, Grid{31, 37}, Grid{13, 17}})
    for (int group : {1, 4, 8, 11, 16})
      for (int window : {1, 7, 132}) {
        const int tiles = g.tiles_m * g.tiles_n;
        for (int first = 0; first + window <= tiles; ++first) {
          const ch09::TileCoord a = ch09::tile_at(first, g.tiles_m, g.tiles_n, group);
          const ch09::TileCoord b = ch09::tile_at(first + window - 1, g.tiles_m, g.tiles_n, group);
          if (a.m_block / group != b.m_block / group) continue;  // straddles two groups
          const int first_m = a.m_block / group * group;
          const int rows = std::min(group, g.tiles_m - first_m);
          const int s = first - first_m * g.tiles_n;
          std::set<int> ms, ns;
          for (int i = first; i < first + window; ++i) {
            const ch09::TileCoord t = ch09::tile_at(i, g.tiles_m, g.tiles_n, group);
            ms.insert(t.m_block), ns.insert(t.n_block);
          }
          ASSERT_EQ(int(ms.size()), std::min(rows, window));
          ASSERT_EQ(int(ns.size()), (s + window - 1) / rows - s / rows + 1);
          ASSERT_LE(int(ns.size()), (window + rows - 1) / rows + 1);
        }
      }
}

// The numbers at 4096 x 7168 (K = 16384), 128 x 160 tiles: 32 x 45, 11 waves of 132 (NOTES.md,
// "The DRAM model against Nsight Compute (2026-11-23)").
TEST(Chapter09, GroupedTouchesFewerTilesAt4096x7168) {
  const ch09::WindowStats rm = ch09::row_major_stats(32, 45, 128, 160);
  EXPECT_EQ(rm.window, 132);
  EXPECT_EQ(rm.windows, 1440 - 132 + 1);
  EXPECT_EQ(rm.waves, 11);
  EXPECT_EQ(rm.max_m, 4);   // 132 consecutive tiles: 2.9 rows of 45, so 3 or 4 rows...
  EXPECT_EQ(rm.max_n, 45);  // ...and every column: all of B per wave
  EXPECT_NEAR(rm.mean_m, 3.908327, 1e-6);
  EXPECT_EQ(rm.mean_n, 45.0);
  EXPECT_EQ(rm.max_bytes, (4 * 128 + 45 * 160) * 128);  // 964 KB per K block
  EXPECT_NEAR(rm.mean_bytes / 1024, 962.533, 1e-3);
  EXPECT_EQ(rm.wave_bytes, 10825728);

  EXPECT_EQ(ch09::pick_group(32, 45, 128, 160), 16);
  const ch09::WindowStats g16 = ch09::grouped_stats(32, 45, 16, 128, 160);
  EXPECT_EQ(g16.max_m, 32);  // a window across the boundary of the two groups: 16 + 16 rows
  EXPECT_EQ(g16.max_n, 10);  // inside a group: 132 / 16 = 8.25 columns, so 9 or 10
  EXPECT_NEAR(g16.mean_m, 17.417876, 1e-6);
  EXPECT_NEAR(g16.mean_n, 9.185638, 1e-6);
  EXPECT_EQ(g16.max_bytes, 729088);  // 712 KB
  EXPECT_NEAR(g16.mean_bytes / 1024, 462.399, 1e-3);
  EXPECT_EQ(g16.wave_bytes, 5152768);

  // Fewer bytes per window than row-major: half, on the mean and over the waves.
  EXPECT_LT(g16.mean_bytes, 0.49 * rm.mean_bytes);
  EXPECT_LT(g16.max_bytes, rm.max_bytes);
  EXPECT_LT(g16.wave_bytes, rm.wave_bytes / 2);
  EXPECT_LT(g16.mean_n, rm.mean_n / 4);
  EXPECT_GT(g16.mean_m, rm.mean_m);  // the price: more A tiles, which are smaller

  // Group 8: fewer tiles in the worst window, more on average.
  const ch09::WindowStats g8 = ch09::grouped_stats(32, 45, 8, 128, 160);
  EXPECT_EQ(g8.max_m, 16);
  EXPECT_EQ(g8.max_n, 18);
  EXPECT_EQ(g8.max_bytes, 630784);
  EXPECT_LT(g8.max_bytes, g16.max_bytes);
  EXPECT_GT(g8.mean_bytes, g16.mean_bytes);

  // The DRAM model (every wave reads its distinct tiles once, nothing survives between waves):
  // wave_bytes * 128 K blocks. Row-major 1.386 GB, grouped 0.660 GB. For the configurations that
  // ncu measured in chapters 05-07 (row-major): 128 x 256 tiles 0.902 GB (ncu: 0.92), 128 x 128
  // 1.739 GB (ncu: 1.75), 128 x 160 1.386 GB (ncu: 1.59).
  EXPECT_EQ(ch09::row_major_stats(32, 28, 128, 256).wave_bytes, 7045120);
  EXPECT_EQ(ch09::row_major_stats(32, 56, 128, 128).wave_bytes, 13582336);
}

TEST(Chapter09, PickGroupOverTheBenchmarkShapes) {
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    // The kernel's tile (ch07::choose_tile).
    const ch07::TileChoice t = ch07::choose_tile(s);
    const Grid g = grid_of(s, t.block_n, t.block_m);
    const int group = ch09::pick_group(g.tiles_m, g.tiles_n, t.block_m, t.block_n);
    EXPECT_GE(group, 1);
    EXPECT_LE(group, std::min(g.tiles_m, ch09::kMaxGroup));
    // M = 64 and 128 are one row of tiles: nothing to group.
    if (g.tiles_m == 1) {
      EXPECT_EQ(group, 1) << s.str();
    }
    // The cap of 16 does not bind on these shapes: the best over every group size is the same.
    EXPECT_EQ(ch09::pick_group(g.tiles_m, g.tiles_n, t.block_m, t.block_n, 132, g.tiles_m), group)
        << s.str();
    const ch09::WindowStats chosen =
        ch09::grouped_stats(g.tiles_m, g.tiles_n, group, t.block_m, t.block_n);
    for (int other = 1; other <= std::min(g.tiles_m, 16); ++other)
      EXPECT_LE(chosen.mean_bytes,
                ch09::grouped_stats(g.tiles_m, g.tiles_n, other, t.block_m, t.block_n).mean_bytes)
          << s.str() << " group " << group << " vs " << other;
  }
  // M = 4096: 4096 x 2112 (128 x 144 tiles) keeps row-major (15 columns: a window is already
  // 10 x 15 tiles); the others, in 256 x 128 tiles (16 rows of them), take 8.
  const std::pair<gemm::Shape, int> expected[] = {{{4096, 2112, 7168}, 1}, {{4096, 24576, 1536}, 8},
                                                  {{4096, 32768, 512}, 8}, {{4096, 7168, 16384}, 8},
                                                  {{4096, 4096, 7168}, 8}, {{4096, 7168, 2048}, 8}};
  for (const auto& [s, group] : expected) {
    const ch07::TileChoice t = ch07::choose_tile(s);
    const Grid g = grid_of(s, t.block_n, t.block_m);
    EXPECT_EQ(ch09::pick_group(g.tiles_m, g.tiles_n, t.block_m, t.block_n), group) << s.str();
  }
  // No more tiles than SMs: one window, every order the same, group 1.
  EXPECT_EQ(ch09::pick_group(11, 12, 128, 128), 1);
  EXPECT_EQ(ch09::pick_group(1, 1, 128, 128), 1);
}

// 4096 x 7168 in the kernel's tile there, 256 x 128 (ch07::choose_tile): 16 x 56 tiles, 7 waves.
// Group 8 holds a window to 16 rows x at most 18 columns of tiles; the DRAM model (wave_bytes)
// reads 0.56 of row-major's bytes, 0.51 GB over the 128 K blocks against 0.66 GB for group 16 at
// 128 x 160 above.
TEST(Chapter09, GroupedAt4096x7168WithTheTallTile) {
  const ch09::WindowStats rm = ch09::row_major_stats(16, 56, 256, 128);
  EXPECT_EQ(rm.waves, 7);
  EXPECT_EQ(rm.max_n, 56);  // all of B in every window
  EXPECT_EQ(rm.wave_bytes, 7143424);
  EXPECT_EQ(ch09::pick_group(16, 56, 256, 128), 8);
  const ch09::WindowStats g8 = ch09::grouped_stats(16, 56, 8, 256, 128);
  EXPECT_EQ(g8.max_m, 16);
  EXPECT_EQ(g8.max_n, 18);
  EXPECT_NEAR(g8.mean_bytes / 1024, 575.456, 1e-3);
  EXPECT_EQ(g8.wave_bytes, 3981312);
  EXPECT_LT(g8.wave_bytes, rm.wave_bytes * 0.56);
  EXPECT_LT(g8.wave_bytes, ch09::grouped_stats(32, 45, 16, 128, 160).wave_bytes);
}

// The kernel's launch asks cached_group: the same answers as pick_group, asked twice, from threads.
TEST(Chapter09, CachedGroupIsPickGroup) {
  const int grids[][3] = {{32, 45, 160}, {32, 205, 160}, {32, 15, 144}, {1, 56, 128}, {7, 3, 128}};
  for (int round = 0; round < 2; ++round)
    for (const auto& g : grids)
      EXPECT_EQ(ch09::cached_group(g[0], g[1], kBlockM, g[2], 132),
                ch09::pick_group(g[0], g[1], kBlockM, g[2], 132))
          << g[0] << " x " << g[1] << " round " << round;
  // Another SM count is another window, remembered apart.
  EXPECT_EQ(ch09::cached_group(32, 45, kBlockM, 160, 114),
            ch09::pick_group(32, 45, kBlockM, 160, 114));
  std::vector<std::thread> threads;
  std::vector<int> got(8);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back(
        [&got, i] { got[i] = ch09::cached_group(40 + i % 2, 45, kBlockM, 160, 132); });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(got[i], ch09::pick_group(40 + i % 2, 45, kBlockM, 160, 132)) << i;
}

// CH09_GROUP: unset or empty keeps the chosen group; a positive integer replaces it; anything
// else is refused with a sentence naming the caller and the variable.
TEST(Chapter09, GroupFromTheEnvironment) {
  unsetenv("CH09_GROUP");
  EXPECT_EQ(ch09::group_from_environment(16, "chapter 09"), 16);
  setenv("CH09_GROUP", "", 1);
  EXPECT_EQ(ch09::group_from_environment(16, "chapter 09"), 16);
  setenv("CH09_GROUP", "1", 1);
  EXPECT_EQ(ch09::group_from_environment(16, "chapter 09"), 1);
  setenv("CH09_GROUP", "33", 1);
  EXPECT_EQ(ch09::group_from_environment(16, "chapter 10"), 33);
  for (const char* bad : {"0", "-3", "abc", "4x", "99999999999", " 4", "+4", "4 "}) {
    setenv("CH09_GROUP", bad, 1);
    try {
      ch09::group_from_environment(16, "chapter 10");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const gemm::UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("chapter 10: CH09_GROUP must be a positive integer"),
                std::string::npos)
          << e.what();
    }
  }
  unsetenv("CH09_GROUP");
}

TEST(Chapter09, DrawsThePicture) {
  const std::string path = testing::TempDir() + "/schedule_test.svg";
  ch09::draw_schedule(path);
  const std::string text = gemm::testing::read_text(path);
  EXPECT_NE(text.find("</svg>"), std::string::npos);
  EXPECT_NE(text.find("group = 16"), std::string::npos);
  EXPECT_NE(text.find(">10</text>"), std::string::npos);  // the last wave's label
  // A tiny grid draws too.
  ch09::draw_schedule(path, 300, 200, 128, 128, 4, 2);
}

}  // namespace
