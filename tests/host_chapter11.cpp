// Chapter 11's plain arithmetic: the configuration heuristic on DeepGEMM's 18 shapes (the table in
// the README), the compiled variants against what the heuristic and its overrides can choose (both
// ways), the shared-memory budget of every variant, and the walk of the clusters over the pairs of
// tiles for every configuration (every tile exactly once, both CTAs of a cluster always busy
// together) on several SM counts.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/11_configuration/config.hpp"
#include "tests/cluster_walk.hpp"

namespace {

using ch11::Multicast;

struct Expected {
  gemm::Shape shape;
  int block_m, block_n;
  Multicast multicast;
  int stages, group, grid;
};

// What choose_config returns for the benchmark shapes on 132 SMs (README, "The choice, printed").
const Expected kExpected[] = {
    {{64, 2112, 7168}, 64, 16, Multicast::None, 16, 1, 132},
    {{64, 24576, 1536}, 64, 96, Multicast::None, 10, 1, 128},
    {{64, 32768, 512}, 64, 128, Multicast::None, 8, 1, 128},
    {{64, 7168, 16384}, 64, 64, Multicast::None, 13, 1, 112},
    {{64, 4096, 7168}, 64, 32, Multicast::None, 16, 1, 128},
    {{64, 7168, 2048}, 64, 64, Multicast::None, 13, 1, 112},
    {{128, 2112, 7168}, 128, 16, Multicast::None, 12, 1, 132},
    {{128, 24576, 1536}, 128, 96, Multicast::None, 7, 1, 128},
    {{128, 32768, 512}, 128, 128, Multicast::None, 5, 1, 128},
    {{128, 7168, 16384}, 128, 64, Multicast::None, 8, 1, 112},
    {{128, 4096, 7168}, 128, 32, Multicast::None, 10, 1, 128},
    {{128, 7168, 2048}, 128, 64, Multicast::None, 8, 1, 112},
    {{4096, 2112, 7168}, 128, 192, Multicast::None, 4, 1, 118},
    {{4096, 24576, 1536}, 128, 192, Multicast::None, 4, 16, 132},
    {{4096, 32768, 512}, 128, 192, Multicast::None, 4, 16, 132},
    {{4096, 7168, 16384}, 256, 128, Multicast::A, 3, 8, 128},
    {{4096, 4096, 7168}, 256, 128, Multicast::None, 3, 8, 128},
    {{4096, 7168, 2048}, 256, 128, Multicast::None, 3, 8, 128},
};

TEST(Chapter11, ConfigurationOfTheBenchmarkShapes) {
  ASSERT_EQ(std::size(kExpected), std::size(gemm::kDeepGemmShapes));
  for (size_t i = 0; i < std::size(kExpected); ++i) {
    const Expected& e = kExpected[i];
    EXPECT_EQ(e.shape.str(), gemm::kDeepGemmShapes[i].str()) << "the table follows kDeepGemmShapes";
    const ch11::Config c = ch11::choose_config(e.shape);
    const std::string what = ch11::describe(e.shape, c);
    EXPECT_EQ(c.variant.block_m, e.block_m) << what;
    EXPECT_EQ(c.variant.block_n, e.block_n) << what;
    EXPECT_EQ(c.variant.multicast, e.multicast) << what;
    EXPECT_EQ(c.stages, e.stages) << what;
    EXPECT_EQ(c.group, e.group) << what;
    EXPECT_EQ(c.grid, e.grid) << what;
    // The M = 4096 shapes take the tall tile with chapter 07's rule over its two widths, or the
    // 128 x 192 tile.
    if (e.shape.m == 4096 && e.block_m == 256) {
      EXPECT_EQ(c.variant.block_n, ch07::best_block_n_among(ch11::kBlockNChoices256, e.shape, 256))
          << what;
    }
    if (e.shape.m == 4096 && e.block_m == 128) {
      EXPECT_EQ(c.variant.block_n, 192) << what;
    }
    // Small M fills the SMs with narrow tiles: at least 112 of 132 SMs get a tile.
    if (e.shape.m <= 128) {
      EXPECT_GE(c.tiles_m * c.tiles_n, 112) << what;
    }
  }
}

// The printed line names every choice.
TEST(Chapter11, DescribeNamesEveryChoice) {
  const gemm::Shape s{4096, 7168, 16384};
  const std::string line = ch11::describe(s, ch11::choose_config(s));
  for (const char* part : {"BLOCK_M 256", "BLOCK_N 128", "multicast A (cluster of 2)", "3 stages",
                           "16 x 56 tiles", "7 waves", "over 16 x 28 pairs", "group 8", "128 CTAs"})
    EXPECT_NE(line.find(part), std::string::npos) << part << " in: " << line;
}

// The rules, one by one.
TEST(Chapter11, TheRules) {
  EXPECT_EQ(ch11::block_m_for({1, 7168, 1024}), 64);
  EXPECT_EQ(ch11::block_m_for({64, 7168, 1024}), 64);
  EXPECT_EQ(ch11::block_m_for({65, 7168, 1024}), 128);
  EXPECT_EQ(ch11::block_m_for({128, 7168, 1024}), 128);
  // Above 128 rows the tall tile, unless a 128-row width fills the last wave better by more than
  // ch07::kTallTileMargin: at 4096 x 7168, 896 tiles of 256 x 128 (efficiency 0.970) against 1440 of
  // 128 x 160 (0.987); at 129 x 7168, 56 tiles of 256 x 128 fill 0.42 of the SMs, 2 x 52 of
  // 128 x 144 fill 0.79.
  EXPECT_EQ(ch11::block_m_for({4096, 7168, 16384}), 256);
  EXPECT_EQ(ch11::block_m_for({129, 7168, 1024}), 128);
  // And the 128 x 192 tile where it fills the waves within ch11::kWideTileSlack of the tall tile:
  // 4096 x 2112, 352 tiles either way (0.889); 4096 x 24576, 4096 tiles of 128 x 192 against 3072
  // of 256 x 128 (0.970 both). Not at 4096 x 7168 (0.905 against 0.970). At 2048 x 2112 the
  // 128-row width is 144, not 192: the same two waves, fuller (0.853 against 0.667).
  EXPECT_EQ(ch11::block_n_for({4096, 2112, 7168}, 128, 132), 192);
  EXPECT_EQ(ch11::block_m_for({4096, 2112, 7168}), 128);
  EXPECT_EQ(ch11::block_m_for({4096, 24576, 1536}), 128);
  EXPECT_EQ(ch11::block_n_for({4096, 7168, 16384}, 128, 132), 192);
  EXPECT_EQ(ch11::block_m_for({4096, 7168, 16384}), 256);
  EXPECT_EQ(ch11::block_n_for({2048, 2112, 7168}, 128, 132), 144);
  EXPECT_EQ(ch11::block_m_for({2048, 2112, 7168}), 128);
  // The slack: 33920 x 4096 (chapter 15's contiguous groups), 0.952 against 0.973.
  EXPECT_EQ(ch11::block_m_for({33920, 4096, 4096}), 128);
  // At M <= 128 the widths stay chapter 07's: no 192.
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    if (s.m <= 128) {
      EXPECT_EQ(ch11::block_n_for(s, 128, 132), ch07::best_block_n(s, 128)) << s.str();
    }
  }
  // No cluster (step 3; README, "The heuristic, step by step") where K is short (1024), where the
  // tiles do not pair up along N (55 columns), on the 128 x 192 tile and at M <= 128; the override
  // still reaches multicast on A.
  for (const gemm::Shape& s : {gemm::Shape{4096, 7168, 1024}, gemm::Shape{4097, 7168, 1024},
                               gemm::Shape{4096, 7040, 16384}, gemm::Shape{4096, 2112, 7168},
                               gemm::Shape{64, 2112, 7168}, gemm::Shape{128, 4096, 7168}}) {
    const ch11::Config c = ch11::choose_config(s);
    EXPECT_EQ(c.variant.multicast, Multicast::None) << s.str();
    EXPECT_EQ(c.cluster_size, 1) << s.str();
  }
  const gemm::Shape paired{4096, 7168, 1024};
  EXPECT_EQ(ch11::choose_config(paired).variant.block_m, 256);
  EXPECT_EQ(ch11::choose_config(paired).variant.block_n, 128);
  EXPECT_EQ(
      ch11::apply_multicast_override(paired, ch11::choose_config(paired), "A").variant.multicast,
      Multicast::A);
  // Fewer SMs: fewer CTAs, same tiles.
  const ch11::Config d = ch11::choose_config({4096, 7168, 1024}, 114);
  EXPECT_LE(d.grid, 114);
  EXPECT_EQ(d.grid % d.cluster_size, 0);
}

// Step 3's rule (multicast_for): multicast on A on the 256 x 128 tile where K >= 8192, the tiles
// make 4 waves or more and pair up along N. Each boundary on both sides, as the heuristic chooses.
TEST(Chapter11, MulticastRule) {
  struct Row {
    gemm::Shape shape;
    Multicast multicast;
  };
  const Row rows[] = {
      {{4096, 7168, 16384}, Multicast::A},    // 16 x 56 tiles, 7 waves: the headline
      {{4096, 7168, 8192}, Multicast::A},     // K at the threshold
      {{4096, 7168, 8064}, Multicast::None},  // one K block below it
      {{4096, 7168, 4096}, Multicast::None},
      {{4096, 4096, 8192}, Multicast::A},      // 16 x 32 tiles, 512 > 3 x 132: 4 waves
      {{2048, 8192, 16384}, Multicast::A},     // 8 x 64 tiles, 4 waves
      {{8192, 2048, 16384}, Multicast::A},     // 32 x 16 tiles, 4 waves
      {{2048, 4096, 16384}, Multicast::None},  // 8 x 32 tiles, 2 waves
      {{4096, 2048, 16384}, Multicast::None},  // 16 x 16 tiles, 2 waves
      {{4096, 7040, 16384}, Multicast::None},  // 55 columns of tiles: no pairs along N
      {{4096, 2112, 7168}, Multicast::None},   // the 128 x 192 tile
      {{8192, 6144, 16384}, Multicast::None},  // the 128 x 192 tile, long K
      {{128, 7168, 16384}, Multicast::None},   // M <= 128
  };
  for (const Row& r : rows) {
    const ch11::Config c = ch11::choose_config(r.shape);
    const std::string what = ch11::describe(r.shape, c);
    EXPECT_EQ(c.variant.multicast, r.multicast) << what;
    EXPECT_EQ(c.cluster_size, r.multicast == Multicast::None ? 1 : 2) << what;
    if (r.multicast == Multicast::A) {
      EXPECT_EQ(c.variant.block_m, 256) << what;
      EXPECT_EQ(c.variant.block_n, 128) << what;
    }
    EXPECT_EQ(ch11::multicast_for(r.shape, c.variant.block_m, c.variant.block_n), r.multicast)
        << what;
  }
  // The waves count the device's SMs: 4096 x 4096 x 8192 is 4 waves on 132 SMs, 3 on 171.
  EXPECT_EQ(ch11::multicast_for({4096, 4096, 8192}, 256, 128, 171), Multicast::None);
  // One SM: no pair fits.
  EXPECT_EQ(ch11::multicast_for({4096, 7168, 16384}, 256, 128, 1), Multicast::None);
  // Off the 256 x 128 tile, never.
  EXPECT_EQ(ch11::multicast_for({4096, 7168, 16384}, 256, 96), Multicast::None);
  EXPECT_EQ(ch11::multicast_for({4096, 7168, 16384}, 128, 192), Multicast::None);
}

// CH11_MULTICAST: unset or empty keeps the choice; off, A and B replace step 3 where the tiles
// pair up; anything else, or a multicast that cannot pair, is refused naming the variable or the
// pairing.
TEST(Chapter11, MulticastOverride) {
  const gemm::Shape s{4096, 7040, 16384};  // 32 x 37 tiles of 128 x 192: B pairs, A does not
  const ch11::Config chosen = ch11::choose_config(s);
  EXPECT_EQ(ch11::apply_multicast_override(s, chosen, nullptr).variant, chosen.variant);
  EXPECT_EQ(ch11::apply_multicast_override(s, chosen, "").variant, chosen.variant);
  const ch11::Config off = ch11::apply_multicast_override(s, chosen, "off");
  EXPECT_EQ(off.variant.multicast, Multicast::None);
  EXPECT_EQ(off.variant.block_n, chosen.variant.block_n);
  EXPECT_EQ(off.cluster_size, 1);
  EXPECT_EQ(off.grid, 132);  // 32 x 37 tiles: 9 rounds of 132 (chapter 09's persistent_grid)
  EXPECT_EQ(ch11::apply_multicast_override(s, chosen, "B").variant.multicast, Multicast::B);
  auto refusal = [&](const char* text) {
    try {
      ch11::apply_multicast_override(s, chosen, text);
    } catch (const gemm::UnsupportedError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal("A").find("pair up"), std::string::npos) << refusal("A");
  for (const char* bad : {"a", "on", "AB", "0", " B"})
    EXPECT_NE(refusal(bad).find("CH11_MULTICAST must be off, A or B"), std::string::npos)
        << bad << ": " << refusal(bad);
}

// CH11_BLOCK_M: unset or empty keeps the choice; 64, 128 and 256 replace step 1 and steps 2 and 3
// follow; anything else is refused naming the variable. At M = 4096, 256 gives DeepGEMM's tile.
TEST(Chapter11, BlockMOverride) {
  struct Row {
    gemm::Shape shape;
    int block_n;
    Multicast multicast;
    int stages, grid;
  };
  // BLOCK_M = 256 at the six M = 4096 shapes; step 3 follows: multicast on A where K >= 8192.
  const Row rows[] = {{{4096, 2112, 7168}, 96, Multicast::None, 3, 118},
                      {{4096, 24576, 1536}, 128, Multicast::None, 3, 132},
                      {{4096, 32768, 512}, 128, Multicast::None, 3, 132},
                      {{4096, 7168, 16384}, 128, Multicast::A, 3, 128},
                      {{4096, 4096, 7168}, 128, Multicast::None, 3, 128},
                      {{4096, 7168, 2048}, 128, Multicast::None, 3, 128}};
  for (const Row& r : rows) {
    const ch11::Config c =
        ch11::apply_block_m_override(r.shape, ch11::choose_config(r.shape), "256");
    const std::string what = ch11::describe(r.shape, c);
    EXPECT_EQ(c.variant.block_m, 256) << what;
    EXPECT_EQ(c.variant.block_n, r.block_n) << what;
    EXPECT_EQ(c.variant.multicast, r.multicast) << what;
    EXPECT_EQ(c.stages, r.stages) << what;
    EXPECT_EQ(c.grid, r.grid) << what;
  }
  // BLOCK_M = 64 at M = 128: two rows of tiles, which multicast on B could pair (the override).
  const gemm::Shape s{128, 7168, 16384};
  const ch11::Config c64 = ch11::apply_block_m_override(s, ch11::choose_config(s), "64");
  EXPECT_EQ(c64.variant.block_m, 64);
  EXPECT_EQ(c64.variant.block_n, ch07::best_block_n(s, 64));
  EXPECT_EQ(c64.tiles_m, 2);
  EXPECT_EQ(c64.variant.multicast, Multicast::None) << ch11::describe(s, c64);
  EXPECT_EQ(ch11::apply_multicast_override(s, c64, "B").variant.multicast, Multicast::B);
  const ch11::Config chosen = ch11::choose_config(s);
  EXPECT_EQ(ch11::apply_block_m_override(s, chosen, nullptr).variant, chosen.variant);
  EXPECT_EQ(ch11::apply_block_m_override(s, chosen, "").variant, chosen.variant);
  EXPECT_EQ(ch11::apply_block_m_override(s, chosen, "128").variant, chosen.variant);
  for (const char* bad : {"32", "512", "0", "256 ", "x"}) {
    try {
      ch11::apply_block_m_override(s, chosen, bad);
      ADD_FAILURE() << bad << " was accepted";
    } catch (const gemm::UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("CH11_BLOCK_M must be 64, 128 or 256"),
                std::string::npos)
          << e.what();
    }
  }
}

// Every variant fits in the shared-memory budget with at least two stages, and its layout is the
// kernel's (kernel.cu static_asserts the same against TileConfig).
TEST(Chapter11, EveryVariantFitsTheBudget) {
  for (const ch11::Variant& v : ch11::kVariants) {
    const int stages = ch11::stages_for(v.block_m, v.block_n);
    EXPECT_GE(stages, 2) << v.block_m << " x " << v.block_n;
    EXPECT_LE(stages, ch11::kMaxStages);
    EXPECT_LE(ch11::smem_bytes(v.block_m, v.block_n), ch11::kSmemBudget);
    // One more stage would not fit (or the cap binds).
    if (stages < ch11::kMaxStages) {
      EXPECT_GT(ch11::smem_bytes(v.block_m, v.block_n) + ch11::stage_bytes(v.block_m, v.block_n),
                ch11::kSmemBudget);
    }
  }
}

// The variants compiled are exactly those the heuristic chooses over a sweep of shapes, on its
// own and with CH11_BLOCK_M and CH11_MULTICAST: no choice without a kernel, no kernel never chosen.
TEST(Chapter11, CompiledVariantsAreExactlyTheChoices) {
  std::set<std::tuple<int, int, int>> chosen;
  const int64_t ms[] = {1,    7,    16,   32,   48,   63,   64,   65,   100,   127,
                        128,  129,  200,  256,  257,  384,  512,  640,  768,   1000,
                        1024, 1500, 2048, 3000, 4096, 4097, 6000, 8192, 12288, 16384};
  for (const char* multicast : {static_cast<const char*>(nullptr), "A", "B"})
    for (const char* block_m : {static_cast<const char*>(nullptr), "64", "128", "256"})
      for (int64_t m : ms)
        for (int64_t n = 8; n <= 32768; n += multicast ? 40 : 8) {
          const gemm::Shape s{m, n, 512};
          ch11::Config c = ch11::apply_block_m_override(s, ch11::choose_config(s), block_m);
          try {
            c = ch11::apply_multicast_override(s, c, multicast);
          } catch (const gemm::UnsupportedError&) {
            continue;  // the tiles do not pair up for it: refused, nothing to compile
          }
          bool compiled = false;
          for (const ch11::Variant& v : ch11::kVariants) compiled = compiled || v == c.variant;
          ASSERT_TRUE(compiled) << ch11::describe(s, c) << (block_m ? block_m : "")
                                << (multicast ? multicast : "");
          chosen.insert({c.variant.block_m, c.variant.block_n, int(c.variant.multicast)});
        }
  for (const ch11::Variant& v : ch11::kVariants)
    EXPECT_TRUE(chosen.count({v.block_m, v.block_n, int(v.multicast)}))
        << "never chosen: " << v.block_m << " x " << v.block_n << " multicast "
        << ch11::name(v.multicast);
  EXPECT_EQ(chosen.size(), std::size(ch11::kVariants));
}

// Other Hopper parts have fewer SMs; the launch takes the device's count (gemm_with). On every
// count the heuristic returns a compiled kernel, never more CTAs than SMs, whole clusters, and no
// cluster where there is no room for two CTAs.
TEST(Chapter11, TheConfigurationOnOtherSmCounts) {
  std::vector<gemm::Shape> shapes(std::begin(gemm::kDeepGemmShapes),
                                  std::end(gemm::kDeepGemmShapes));
  shapes.insert(shapes.end(),
                {{1, 8, 128}, {129, 2112, 1024}, {4097, 7176, 256}, {300, 1032, 1536}});
  for (const int num_sms : {132, 114, 78, 66, 16, 2, 1})
    for (const gemm::Shape& s : shapes) {
      const ch11::Config c = ch11::choose_config(s, num_sms);
      const std::string what = ch11::describe(s, c) + " on " + std::to_string(num_sms) + " SMs";
      bool compiled = false;
      for (const ch11::Variant& v : ch11::kVariants) compiled = compiled || v == c.variant;
      EXPECT_TRUE(compiled) << what;
      EXPECT_GE(c.grid, 1) << what;
      EXPECT_LE(c.grid, num_sms) << what;
      EXPECT_EQ(c.grid % c.cluster_size, 0) << what;
      if (num_sms < 2) {
        EXPECT_EQ(c.variant.multicast, Multicast::None) << what;
      }
    }
}

// The kernel's walk (tests/cluster_walk.hpp: every tile once, both CTAs of a cluster busy
// together, a pair sharing its multicast operand), for every configuration and forced multicast.
TEST(Chapter11, ClustersVisitEveryTileOnce) {
  for (const char* multicast : {static_cast<const char*>(nullptr), "A", "B"})
    for (const int num_sms : {132, 114, 8, 1})
      for (const gemm::Shape& s : gemm::testing::walk_shapes()) {
        ch11::Config c = ch11::choose_config(s, num_sms);
        try {
          c = ch11::apply_multicast_override(s, c, multicast, num_sms);
        } catch (const gemm::UnsupportedError&) {
          continue;  // refused: the tiles do not pair up (or one SM)
        }
        ASSERT_EQ(c.multicast, c.variant.multicast);
        gemm::testing::expect_every_tile_once(
            c, num_sms, ch11::describe(s, c) + " on " + std::to_string(num_sms) + " SMs");
      }
}

}  // namespace
