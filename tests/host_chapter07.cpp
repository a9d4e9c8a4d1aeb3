// Chapter 07's plain arithmetic: which B scale each accumulator group of a tile takes, which
// BLOCK_N keep a tile within two scale blocks, the compile-time dispatch over num_former_iters,
// and the wave counts. Everything is checked against a column-by-column brute force.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <vector>

#include "chapters/07_two_scale_b/scale_blocks.hpp"
#include "common/ptx/descriptor.hpp"

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

}  // namespace
