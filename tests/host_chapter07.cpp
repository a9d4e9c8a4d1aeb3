// Chapter 07's plain arithmetic: which B scale each accumulator group of a tile takes, which
// BLOCK_N keep a tile within two scale blocks, the compile-time dispatch over num_former_iters,
// and the wave counts. Everything is checked against a column-by-column brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "chapters/07_two_scale_b/draw.hpp"
#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "common/ptx/descriptor.hpp"
#include "tests/read_text.hpp"

namespace {

// The scale block of every column of the tile [n0, n0 + block_n), as the problem defines it.
std::vector<int64_t> column_blocks(int64_t n0, int block_n) {
  std::vector<int64_t> blocks(block_n);
  for (int c = 0; c < block_n; ++c) blocks[c] = (n0 + c) / 128;
  return blocks;
}

int blocks_touched(int64_t n0, int block_n) {
  const std::vector<int64_t> b = column_blocks(n0, block_n);
  return int(std::set<int64_t>(b.begin(), b.end()).size());
}

// Enough tile positions to see every residue n0 % 128 at least twice, and then some.
int positions_to_try(int block_n) {
  return 2 * std::lcm(block_n, 128) / block_n + 7;
}

TEST(Chapter07, FormerItersMatchesAColumnByColumnAssignment) {
  for (int block_n : ch07::kOfferedBlockN) {
    for (int i = 0; i < positions_to_try(block_n); ++i) {
      const int64_t n0 = int64_t(i) * block_n;
      const std::vector<int64_t> blocks = column_blocks(n0, block_n);
      const int former = ch07::num_former_iters(n0, block_n);
      bool second = false;
      for (int g = 0; g < block_n / 8; ++g) {
        // A group of 8 columns never straddles two scale blocks...
        for (int c = 8 * g; c < 8 * g + 8; ++c)
          ASSERT_EQ(blocks[c], blocks[8 * g]) << "block_n " << block_n << " n0 " << n0;
        // ...the first num_former_iters groups lie in block n0 / 128, the rest in the next one.
        const int64_t expected = g < former ? n0 / 128 : n0 / 128 + 1;
        ASSERT_EQ(blocks[8 * g], expected)
            << "block_n " << block_n << " n0 " << n0 << " group " << g << " former " << former;
        second |= blocks[8 * g] != n0 / 128;
      }
      EXPECT_EQ(ch07::needs_second_scale(n0, block_n), second)
          << "block_n " << block_n << " n0 " << n0;
      EXPECT_EQ(former == block_n / 8, !second) << "block_n " << block_n << " n0 " << n0;
    }
  }
}

TEST(Chapter07, AccumulatorGroupsAreFragmentGroups) {
  // Group g = r / 4 of the fragment: accumulators 4g..4g+3 of every thread are in columns
  // [8g, 8g + 8), which is what lets num_former_iters count in groups.
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 160 / 2; ++r)
      ASSERT_EQ(ptx::accumulator_position(t, r).col / 8, r / 4) << "thread " << t << " reg " << r;
}

TEST(Chapter07, NoOfferedBlockNTouchesThreeBlocks) {
  for (int block_n : ch07::kOfferedBlockN) {
    EXPECT_EQ(block_n % 16, 0);
    int worst = 0;
    for (int i = 0; i < positions_to_try(block_n); ++i)
      worst = std::max(worst, blocks_touched(int64_t(i) * block_n, block_n));
    EXPECT_LE(worst, 2) << "block_n " << block_n;
    EXPECT_TRUE(ch07::touches_at_most_two_scale_blocks(block_n)) << block_n;
  }
  // The offered values include the ones the chapter is about.
  for (int block_n : {112, 128, 144, 160}) {
    bool offered = false;
    for (int o : ch07::kOfferedBlockN) offered |= o == block_n;
    EXPECT_TRUE(offered) << block_n;
  }
}

TEST(Chapter07, ClosedFormAgainstBruteForce) {
  std::vector<int> pass_above_128;
  for (int block_n = 8; block_n <= 256; block_n += 8) {
    int worst = 0;
    for (int i = 0; i < 200; ++i)
      worst = std::max(worst, blocks_touched(int64_t(i) * block_n, block_n));
    EXPECT_EQ(ch07::max_scale_blocks_touched(block_n), worst) << "block_n " << block_n;
    EXPECT_EQ(ch07::touches_at_most_two_scale_blocks(block_n), worst <= 2) << "block_n " << block_n;
    if (block_n > 128 && worst <= 2) pass_above_128.push_back(block_n);
  }
  EXPECT_EQ(pass_above_128, (std::vector<int>{136, 144, 160, 192, 256}));
  EXPECT_EQ(ch07::max_scale_blocks_touched(128), 1);
  EXPECT_EQ(ch07::max_scale_blocks_touched(112), 2);
  EXPECT_EQ(ch07::max_scale_blocks_touched(176), 3);  // [352, 528) covers blocks 2, 3, 4
  EXPECT_EQ(blocks_touched(352, 176), 3);
  EXPECT_EQ(ch07::max_scale_blocks_touched(248), 3);
}

TEST(Chapter07, FormerItersValuesAreExactlyTheOnesThatOccur) {
  for (int block_n = 16; block_n <= 256; block_n += 16) {
    std::set<int> seen;
    for (int i = 0; i < 1000; ++i)
      seen.insert(ch07::num_former_iters(int64_t(i) * block_n, block_n));
    const ch07::FormerIterValues set = ch07::num_former_iters_values(block_n);
    std::vector<int> enumerated(set.values, set.values + set.count);
    EXPECT_EQ(enumerated, std::vector<int>(seen.begin(), seen.end())) << "block_n " << block_n;
  }
  // Far out along N: n0 beyond 32 bits, the values repeat.
  for (int block_n : ch07::kOfferedBlockN)
    for (int64_t i = (int64_t(1) << 33) / block_n; i < (int64_t(1) << 33) / block_n + 64; ++i)
      EXPECT_TRUE(ch07::num_former_iters_values(block_n).contains(
          ch07::num_former_iters(i * block_n, block_n)));

  constexpr ch07::FormerIterValues k112 = ch07::num_former_iters_values(112);
  static_assert(k112.count == 7 && k112.values[0] == 2 && k112.values[6] == 14);
  constexpr ch07::FormerIterValues k144 = ch07::num_former_iters_values(144);
  static_assert(k144.count == 8 && k144.values[0] == 2 && k144.values[7] == 16);
  constexpr ch07::FormerIterValues k160 = ch07::num_former_iters_values(160);
  static_assert(k160.count == 4 && k160.values[0] == 4 && k160.values[3] == 16);
  static_assert(ch07::num_former_iters_values(128).count == 1 &&
                ch07::num_former_iters_values(128).values[0] == 16);
  static_assert(ch07::num_former_iters_values(64).count == 1 &&
                ch07::num_former_iters_values(64).values[0] == 8);
}

template <int kBlockN>
void check_dispatch() {
  const ch07::FormerIterValues set = ch07::num_former_iters_values(kBlockN);
  for (int v = 0; v <= 33; ++v) {
    int got = -1, calls = 0;
    const bool hit = ch07::dispatch_num_former_iters<kBlockN>(v, [&](auto c) {
      got = decltype(c)::value;
      ++calls;
    });
    EXPECT_EQ(hit, set.contains(v)) << "block_n " << kBlockN << " value " << v;
    EXPECT_EQ(calls, hit ? 1 : 0);
    if (hit) {
      EXPECT_EQ(got, v);
    }
  }
}

TEST(Chapter07, DispatchTurnsTheValueIntoACompileTimeOne) {
  check_dispatch<16>();
  check_dispatch<96>();
  check_dispatch<112>();
  check_dispatch<128>();
  check_dispatch<144>();
  check_dispatch<160>();
}

// dispatch_k_loop: both run-time choices reach the loop as compile-time ones, once, for every
// num_former_iters value of a two-block tile width and both values of the flag.
template <int kBlockN>
void check_k_loop_dispatch() {
  constexpr ch07::FormerIterValues set = ch07::num_former_iters_values(kBlockN);
  for (int i = 0; i < set.count; ++i) {
    for (bool all_live : {false, true}) {
      int got_former = -1, calls = 0;
      bool got_live = !all_live;
      ch07::dispatch_k_loop<kBlockN>(set.values[i], all_live, [&](auto former, auto all) {
        got_former = decltype(former)::value;
        got_live = decltype(all)::value;
        ++calls;
      });
      EXPECT_EQ(calls, 1) << "block_n " << kBlockN << " value " << set.values[i];
      EXPECT_EQ(got_former, set.values[i]);
      EXPECT_EQ(got_live, all_live);
    }
  }
}

TEST(Chapter07, KLoopDispatchPassesBothChoices) {
  check_k_loop_dispatch<96>();
  check_k_loop_dispatch<128>();
  check_k_loop_dispatch<144>();
}

TEST(Chapter07, SecondScalePastTheEndOfN) {
  // N = 1024 (8 scale blocks), BLOCK_N = 144: the last tile [1008, 1152) reaches into block 8,
  // which does not exist; its columns from 1024 on are padding.
  EXPECT_TRUE(ch07::needs_second_scale(1008, 144));
  EXPECT_FALSE(ch07::needs_second_scale(1008, 144, 1024));
  EXPECT_TRUE(ch07::needs_second_scale(1008, 144, 1040));
  EXPECT_EQ(ch07::num_former_iters(1008, 144), 2);
  // With N one past a multiple of 8 beyond the boundary, the second block exists and is needed.
  for (int block_n : ch07::kOfferedBlockN)
    for (int64_t n : {2112, 7168, 4096, 24576, 1000, 136})
      for (int64_t n0 = 0; n0 < n; n0 += block_n) {
        const int64_t second_block = n0 / 128 + 1;
        const bool real_columns_in_second =
            ch07::needs_second_scale(n0, block_n) && second_block * 128 < n;
        EXPECT_EQ(ch07::needs_second_scale(n0, block_n, n), real_columns_in_second);
        if (ch07::needs_second_scale(n0, block_n, n)) {
          EXPECT_LT(second_block, (n + 127) / 128);  // sB has that block row
        }
      }
}

TEST(Chapter07, WavesByHand) {
  const gemm::Shape s{4096, 7168, 16384};
  const ch07::WaveInfo w = ch07::waves(s, 128, 128);
  EXPECT_EQ(w.tiles, 32 * 56);  // 1792
  EXPECT_EQ(w.waves, 14);       // 1792 / 132 = 13.58
  EXPECT_DOUBLE_EQ(w.last_wave_occupancy, 76.0 / 132.0);
  EXPECT_DOUBLE_EQ(w.efficiency, 4096.0 * 7168.0 / (14.0 * 132 * 128 * 128));

  const ch07::WaveInfo w160 = ch07::waves(s, 128, 160);
  EXPECT_EQ(w160.tiles, 32 * 45);  // 7168 / 160 = 44.8 -> 45
  EXPECT_EQ(w160.waves, 11);       // 1440 / 132 = 10.9
  EXPECT_DOUBLE_EQ(w160.last_wave_occupancy, 120.0 / 132.0);
  EXPECT_DOUBLE_EQ(w160.efficiency, 4096.0 * 7168.0 / (11.0 * 132 * 128 * 160));
  EXPECT_GT(w160.efficiency, w.efficiency);

  // M = 64 with BLOCK_M = 128: half of every tile is padding.
  const ch07::WaveInfo small = ch07::waves({64, 2112, 7168}, 128, 16);
  EXPECT_EQ(small.tiles, 132);
  EXPECT_EQ(small.waves, 1);
  EXPECT_DOUBLE_EQ(small.last_wave_occupancy, 1.0);
  EXPECT_DOUBLE_EQ(small.efficiency, 0.5);

  // A full last wave.
  const ch07::WaveInfo full = ch07::waves({128 * 132, 128, 128}, 128, 128);
  EXPECT_EQ(full.waves, 1);
  EXPECT_DOUBLE_EQ(full.last_wave_occupancy, 1.0);
  EXPECT_DOUBLE_EQ(full.efficiency, 1.0);
}

TEST(Chapter07, BestBlockNOverDeepGemmShapes) {
  EXPECT_EQ(ch07::best_block_n({4096, 7168, 16384}, 128), 160);  // 11 waves instead of 14
  EXPECT_EQ(ch07::best_block_n({4096, 2112, 7168}, 128), 144);   // 4 waves instead of 5
  EXPECT_EQ(ch07::best_block_n({128, 2112, 7168}, 128), 16);     // 132 tiles: one per SM
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    const int best = ch07::best_block_n(s, 128);
    const ch07::WaveInfo w = ch07::waves(s, 128, best);
    for (int block_n : ch07::kOfferedBlockN) {
      const ch07::WaveInfo o = ch07::waves(s, 128, block_n);
      EXPECT_LE(w.waves, o.waves) << s.str() << " " << best << " vs " << block_n;
      if (o.waves == w.waves) {
        EXPECT_GE(w.efficiency, o.efficiency) << s.str();
      }
    }
  }
}

// The kernel's width at 128 rows: the highest efficiency among kBlockNChoices, the narrower on a
// tie (so 128 wherever every width makes one wave, as at M <= 128).
TEST(Chapter07, ChooseBlockNOverDeepGemmShapes) {
  EXPECT_EQ(ch07::choose_block_n({4096, 7168, 16384}), 160);  // 0.987 against 0.970 at 128
  EXPECT_EQ(ch07::choose_block_n({4096, 2112, 7168}), 144);   // 4 waves at 0.889
  EXPECT_EQ(ch07::choose_block_n({4096, 4096, 7168}), 128);   // 0.970: 160 is 7 waves at 0.887
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    const int chosen = ch07::choose_block_n(s);
    for (int block_n : ch07::kBlockNChoices) {
      EXPECT_GE(ch07::waves(s, 128, chosen).efficiency, ch07::waves(s, 128, block_n).efficiency)
          << s.str() << " " << chosen << " vs " << block_n;
      if (block_n < chosen) {
        EXPECT_GT(ch07::waves(s, 128, chosen).efficiency, ch07::waves(s, 128, block_n).efficiency)
            << s.str() << " " << chosen << " vs the narrower " << block_n;
      }
    }
    if (s.m <= 128) {
      EXPECT_EQ(chosen, 128) << s.str();
    }
  }
}

// The kernel's tile: 256 x 128 above M = 128 unless the 128-row width's efficiency is more than
// kTallTileMargin higher. On DeepGEMM's shapes: 256 x 128 at M = 4096 except 4096 x 2112 (272 tiles
// of 256 x 128 are 2.06 waves, efficiency 0.667; 480 of 128 x 144 fill 4 waves, 0.889), the
// 128-row tile at M <= 128.
TEST(Chapter07, ChooseTileOverDeepGemmShapes) {
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    const ch07::TileChoice t = ch07::choose_tile(s);
    if (s.m <= 128) {
      EXPECT_EQ(t.block_m, 128) << s.str();
      EXPECT_EQ(t.block_n, ch07::choose_block_n(s)) << s.str();
    } else if (s.n == 2112) {
      EXPECT_EQ(t.block_m, 128) << s.str();
      EXPECT_EQ(t.block_n, 144) << s.str();
    } else {
      EXPECT_EQ(t.block_m, 256) << s.str();
      EXPECT_EQ(t.block_n, 128) << s.str();
    }
    // The rule as stated, against the wave arithmetic.
    if (s.m > 128) {
      const double wide = ch07::waves(s, 128, ch07::choose_block_n(s)).efficiency;
      const double tall = ch07::waves(s, 256, 128).efficiency;
      EXPECT_EQ(t.block_m == 256, wide <= tall + ch07::kTallTileMargin) << s.str();
    }
  }
  int tall = 0;
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) tall += ch07::choose_tile(s).block_m == 256;
  EXPECT_EQ(tall, 5);
  // 4096 x 7168: 896 tiles of 256 x 128 in 7 waves (0.970) against 1440 of 128 x 160 in 11
  // (0.987): within the margin, so the tall tile.
  EXPECT_NEAR(ch07::waves({4096, 7168, 16384}, 256, 128).efficiency, 0.970, 5e-4);
  EXPECT_NEAR(ch07::waves({4096, 7168, 16384}, 128, 160).efficiency, 0.987, 5e-4);
}

// Other Hopper parts have fewer SMs (an H100 PCIe 114; the launch passes the device's count): the
// rule still returns a compiled tile on every shape, whatever the count.
TEST(Chapter07, ChooseTileForOtherSmCounts) {
  std::vector<gemm::Shape> shapes(std::begin(gemm::kDeepGemmShapes),
                                  std::end(gemm::kDeepGemmShapes));
  shapes.insert(shapes.end(),
                {{1, 8, 128}, {129, 2112, 1024}, {4097, 7176, 256}, {300, 1032, 1536}});
  for (int num_sms : {132, 114, 78, 66, 16, 2, 1})
    for (const gemm::Shape& s : shapes) {
      const ch07::TileChoice t = ch07::choose_tile(s, num_sms);
      const std::string what = s.str() + " on " + std::to_string(num_sms) + " SMs";
      EXPECT_TRUE(t.block_m == 128 || t.block_m == 256) << what;
      if (t.block_m == 256) {
        EXPECT_EQ(t.block_n, 128) << what;  // the only width the 256-row kernel has
        EXPECT_GT(s.m, 128) << what;
      } else {
        EXPECT_NE(
            std::find(std::begin(ch07::kBlockNChoices), std::end(ch07::kBlockNChoices), t.block_n),
            std::end(ch07::kBlockNChoices))
            << what;
      }
    }
}

TEST(Chapter07, ChooseTileAtTheEdges) {
  auto tile = [](int64_t m, int64_t n) {
    const ch07::TileChoice t = ch07::choose_tile({m, n, 1024});
    return std::pair<int, int>(t.block_m, t.block_n);
  };
  EXPECT_EQ(tile(1, 7168), std::make_pair(128, 128));
  EXPECT_EQ(tile(128, 7168), std::make_pair(128, 128));
  // One row past 128: 56 tiles of 256 x 128 fill 0.21 of one wave, 112 of 128 x 128 fill 0.43.
  EXPECT_EQ(tile(129, 7168), std::make_pair(128, 128));
  // At 2112 columns both are a fraction of one wave, 0.063 against 0.126: within the margin, so
  // the tall tile (the rule compares how full the waves are, not how long one tile takes).
  EXPECT_EQ(tile(129, 2112), std::make_pair(256, 128));
  // A ragged 17th row of 256-row tiles: 952 tiles, 8 waves (0.849), against 14 waves of 128 x 128
  // (0.970).
  EXPECT_EQ(tile(4097, 7168), std::make_pair(128, 128));
  EXPECT_EQ(tile(4097, 2112), std::make_pair(128, 144));
  EXPECT_EQ(tile(4096, 7168), std::make_pair(256, 128));
  // Fewer SMs move the waves, not the rule.
  const gemm::Shape s{4096, 7168, 1024};
  const double wide = ch07::waves(s, 128, ch07::choose_block_n(s, 114), 114).efficiency;
  const double tall = ch07::waves(s, 256, 128, 114).efficiency;
  EXPECT_EQ(ch07::choose_tile(s, 114).block_m == 256, wide <= tall + ch07::kTallTileMargin);
}

// The picture (--draw): the table above, drawn from num_former_iters.
TEST(Chapter07, DrawsTheStraddlingTiles) {
  const std::string path = testing::TempDir() + "/scale_blocks_test.svg";
  ch07::draw_scale_blocks(path);
  const std::string text = gemm::testing::read_text(path);
  for (const char* part : {"tile 1: 14 + 4", "tile 7: 2 + 16", "tile 2: 8 + 12", "</svg>"})
    EXPECT_NE(text.find(part), std::string::npos) << part;
}

}  // namespace
