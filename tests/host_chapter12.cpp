// Chapter 12's plain arithmetic: the slices of K, which CTA reduces which columns, the compiled
// split variants against what the heuristic and its override can choose, the shared-memory budget,
// and the heuristic on DeepGEMM's 18 shapes and on other SM counts.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/12_split_k/config.hpp"

namespace {

using ch12::Multicast;

TEST(Chapter12, KSlicesCoverKOnceAndEvenly) {
  for (int num_k_blocks = 0; num_k_blocks <= 70; ++num_k_blocks) {
    for (int split = 1; split <= ch12::kMaxSplit; ++split) {
      int next = 0;
      for (int rank = 0; rank < split; ++rank) {
        const ch12::KSlice s = ch12::k_slice(num_k_blocks, split, rank);
        EXPECT_EQ(s.begin, next) << num_k_blocks << " blocks, split " << split << " rank " << rank;
        const int size = s.end - s.begin;
        EXPECT_GE(size, num_k_blocks / split);
        EXPECT_LE(size, (num_k_blocks + split - 1) / split);
        // The first slice is the longest (bytes_per_sm counts it).
        EXPECT_LE(size, ch12::k_slice(num_k_blocks, split, 0).end);
        next = s.end;
      }
      EXPECT_EQ(next, num_k_blocks) << num_k_blocks << " blocks, split " << split;
    }
  }
  // K shorter than the split: some CTAs get nothing.
  EXPECT_EQ(ch12::k_slice(1, 4, 0).end, 1);
  EXPECT_EQ(ch12::k_slice(1, 4, 3).begin, ch12::k_slice(1, 4, 3).end);
}

TEST(Chapter12, EveryGroupIsReducedByOneRankInPairs) {
  for (const int block_n : {16, 32, 64, 96, 112, 128, 144, 160}) {
    for (int split = 1; split <= ch12::kMaxSplit; ++split) {
      if (!ch12::splits_evenly(block_n, split)) continue;
      std::vector<int> per_rank(split, 0);
      for (int g = 0; g < block_n / 8; ++g) {
        const int r = ch12::reducing_rank(g, block_n, split);
        ASSERT_GE(r, 0);
        ASSERT_LT(r, split);
        ++per_rank[r];
        // stmatrix.x4 stores groups j and j + 1 (j even): one CTA must own both.
        if (g % 2 == 1) {
          EXPECT_EQ(r, ch12::reducing_rank(g - 1, block_n, split));
        }
        // A rank's columns are contiguous: the groups of rank r come before those of r + 1.
        if (g > 0) {
          EXPECT_GE(r, ch12::reducing_rank(g - 1, block_n, split));
        }
      }
      for (int r = 0; r < split; ++r)
        EXPECT_EQ(per_rank[r], ch12::groups_per_rank(block_n, split)) << block_n << " / " << split;
    }
  }
  EXPECT_FALSE(ch12::splits_evenly(96, 4));   // 6 pairs of groups over 4 CTAs
  EXPECT_FALSE(ch12::splits_evenly(112, 2));  // 7 pairs
  EXPECT_TRUE(ch12::splits_evenly(96, 6));
}

// kSplitVariants lists, for BLOCK_M 64 and 128, exactly the widths of kSplitBlockN with every
// split from 2 to kMaxSplit that splits them evenly.
TEST(Chapter12, TheSplitVariantsAreEveryEvenSplitOfTheWidths) {
  std::set<std::tuple<int, int, int>> listed, expected;
  for (const ch12::Variant& v : ch12::kSplitVariants)
    listed.insert({v.block_m, v.block_n, v.split});
  for (const int block_m : {64, 128})
    for (const int block_n : ch12::kSplitBlockN)
      for (int split = 2; split <= ch12::kMaxSplit; ++split)
        if (ch12::splits_evenly(block_n, split)) expected.insert({block_m, block_n, split});
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(listed.size(), size_t(ch12::kNumSplitVariants));
}

TEST(Chapter12, EverySplitVariantFitsTheBudget) {
  for (const ch12::Variant& v : ch12::kSplitVariants) {
    const std::string what = std::to_string(v.block_m) + "x" + std::to_string(v.block_n) +
                             " split " + std::to_string(v.split);
    EXPECT_TRUE(ch12::splits_evenly(v.block_n, v.split)) << what;
    EXPECT_EQ(v.multicast, Multicast::None) << what;
    EXPECT_GE(ch12::stages_for(v.block_m, v.block_n, v.split), 2) << what;
    EXPECT_LE(ch12::smem_bytes(v.block_m, v.block_n, v.split), ch12::kSmemBudget) << what;
    EXPECT_EQ(ch12::partial_bytes(v.block_m, v.block_n, v.split),
              uint32_t(v.block_m * v.block_n * 4 + 16))
        << what;
  }
  // Split 1 is chapter 11's layout, byte for byte.
  for (const ch11::Variant& v : ch11::kVariants)
    EXPECT_EQ(ch12::smem_bytes(v.block_m, v.block_n, 1), ch11::smem_bytes(v.block_m, v.block_n));
}

// What choose_config returns for the benchmark shapes on our H100 (README): a split of 2 over
// 32-column tiles on the same 132 SMs where chapter 11's tiles are 16 wide (N = 2112), chapter 11's
// configuration elsewhere; and a split where chapter 11 would leave more than half of the SMs idle
// (shapes measured in NOTES.md, "The split, measured again (2026-11-24)", not benchmark shapes).
TEST(Chapter12, ConfigurationOfTheBenchmarkShapes) {
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    const ch12::Config c = ch12::choose_config(s);
    const ch11::Config c11 = ch11::choose_config(s);
    const std::string what = ch12::describe(s, c);
    EXPECT_GT(c11.grid, 132 / 2) << what;
    if (s.n == 2112 && s.m <= 128) {
      EXPECT_EQ(ch12::variant_of(c), (ch12::Variant{c11.variant.block_m, 32, Multicast::None, 2}))
          << what;
      EXPECT_EQ(c.grid, c11.grid) << what;
      EXPECT_EQ(c.cluster_size, 2) << what;
      continue;
    }
    EXPECT_EQ(c.split, 1) << what;
    EXPECT_EQ(c.variant.block_m, c11.variant.block_m) << what;
    EXPECT_EQ(c.variant.block_n, c11.variant.block_n) << what;
    EXPECT_EQ(c.grid, c11.grid) << what;
    EXPECT_EQ(c.stages, c11.stages) << what;
  }
  const ch12::Config a = ch12::choose_config({64, 512, 16384});
  EXPECT_EQ(ch12::variant_of(a), (ch12::Variant{64, 128, Multicast::None, 8}));
  const ch12::Config b = ch12::choose_config({128, 1024, 7168});
  EXPECT_EQ(ch12::variant_of(b), (ch12::Variant{128, 96, Multicast::None, 6}));
  // Split 8 would leave 4 K blocks a slice: split 4, 8.
  const ch12::Config c = ch12::choose_config({64, 1024, 4096});
  EXPECT_EQ(c.split, 4) << ch12::describe({64, 1024, 4096}, c);
  EXPECT_EQ(c.k_blocks_per_slice, 8);
  // Chapter 11's 32-wide tiles on 128 SMs: no split.
  EXPECT_EQ(ch12::choose_config({128, 4096, 7168}).split, 1);
}

TEST(Chapter12, DescribeNamesTheSplit) {
  const std::string d = ch12::describe({64, 512, 16384}, ch12::choose_config({64, 512, 16384}));
  for (const char* words : {"BLOCK_N 128", "split 8", "cluster of 8", "16 K blocks per slice"})
    EXPECT_NE(d.find(words), std::string::npos) << words << " not in: " << d;
}

TEST(Chapter12, SplitOverride) {
  const gemm::Shape s{64, 7168, 2048};
  const ch12::Config chosen = ch12::choose_config(s);
  EXPECT_EQ(ch12::variant_of(ch12::apply_split_override(s, chosen, nullptr)),
            ch12::variant_of(chosen));
  EXPECT_EQ(ch12::variant_of(ch12::apply_split_override(s, chosen, "")), ch12::variant_of(chosen));
  for (const char* bad : {"0", "9", "x", "12", "-1", " 2", "2 "}) {
    try {
      ch12::apply_split_override(s, chosen, bad);
      ADD_FAILURE() << "CH12_SPLIT=\"" << bad << "\" accepted";
    } catch (const gemm::UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("CH12_SPLIT must be 1 to 8"), std::string::npos)
          << e.what();
    }
  }
  try {
    ch12::apply_split_override(s, chosen, "7");
    ADD_FAILURE() << "CH12_SPLIT=7 accepted";
  } catch (const gemm::UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel is compiled for a split of 7"),
              std::string::npos)
        << e.what();
  }
  // 1 is chapter 11's configuration, also where the heuristic splits.
  const gemm::Shape narrow{64, 512, 16384};
  const ch12::Config one = ch12::apply_split_override(narrow, ch12::choose_config(narrow), "1");
  const ch11::Config c11 = ch11::choose_config(narrow);
  EXPECT_EQ(ch12::variant_of(one),
            (ch12::Variant{c11.variant.block_m, c11.variant.block_n, c11.variant.multicast, 1}));
  // Every other compiled split, forced on every benchmark shape: a compiled variant of that split.
  for (const gemm::Shape& shape : gemm::kDeepGemmShapes)
    for (const char* text : {"2", "3", "4", "5", "6", "8"}) {
      const ch12::Config c = ch12::apply_split_override(shape, ch12::choose_config(shape), text);
      EXPECT_EQ(c.split, text[0] - '0') << shape.str();
      EXPECT_TRUE(ch12::compiled(ch12::variant_of(c))) << ch12::describe(shape, c);
      EXPECT_EQ(c.cluster_size, c.split);
    }
}

// B's L2 policy: evict_first exactly where there is one row of tiles, whatever the split; the
// override sets it either way and refuses anything else.
TEST(Chapter12, EvictFirstWhereBIsReadOnce) {
  for (const gemm::Shape& s : gemm::kDeepGemmShapes) {
    const ch12::Config c = ch12::choose_config(s);
    EXPECT_EQ(c.b_evict_first, s.m <= 128) << ch12::describe(s, c);
    EXPECT_EQ(c.b_evict_first, c.tiles_m == 1) << ch12::describe(s, c);
    for (const char* text : {"1", "2", "4", "8"}) {
      const ch12::Config f = ch12::apply_split_override(s, c, text);
      EXPECT_EQ(f.b_evict_first, f.tiles_m == 1) << ch12::describe(s, f);
    }
  }
  // Ragged shapes: the rule follows the tile rows the configuration chose (BLOCK_M 64, 128 or 256).
  for (const gemm::Shape& s :
       {gemm::Shape{1, 7168, 2048}, gemm::Shape{65, 2112, 7168}, gemm::Shape{100, 4096, 7168},
        gemm::Shape{129, 7168, 2048}, gemm::Shape{256, 7168, 2048}, gemm::Shape{257, 1024, 1024}}) {
    const ch12::Config c = ch12::choose_config(s);
    EXPECT_EQ(c.b_evict_first, c.tiles_m == 1) << ch12::describe(s, c);
    EXPECT_EQ(c.tiles_m, (s.m + c.variant.block_m - 1) / c.variant.block_m);
  }
  EXPECT_NE(ch12::describe({64, 7168, 2048}, ch12::choose_config({64, 7168, 2048}))
                .find("B loaded evict_first"),
            std::string::npos);
  EXPECT_NE(ch12::describe({4096, 7168, 2048}, ch12::choose_config({4096, 7168, 2048}))
                .find("B loaded evict_normal"),
            std::string::npos);
}

TEST(Chapter12, EvictBOverride) {
  const ch12::Config small = ch12::choose_config({64, 7168, 2048});
  const ch12::Config large = ch12::choose_config({4096, 7168, 2048});
  EXPECT_TRUE(ch12::apply_evict_b_override(small, nullptr).b_evict_first);
  EXPECT_TRUE(ch12::apply_evict_b_override(small, "").b_evict_first);
  EXPECT_FALSE(ch12::apply_evict_b_override(small, "normal").b_evict_first);
  EXPECT_TRUE(ch12::apply_evict_b_override(large, "first").b_evict_first);
  EXPECT_FALSE(ch12::apply_evict_b_override(large, nullptr).b_evict_first);
  // Only the policy changes.
  EXPECT_EQ(ch12::variant_of(ch12::apply_evict_b_override(small, "normal")),
            ch12::variant_of(small));
  for (const char* bad : {"First", "last", "0", "1", " first", "normal "}) {
    try {
      ch12::apply_evict_b_override(small, bad);
      ADD_FAILURE() << "CH12_EVICT_B=\"" << bad << "\" accepted";
    } catch (const gemm::UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("CH12_EVICT_B must be first or normal"),
                std::string::npos)
          << e.what();
    }
  }
}

// Over a sweep of shapes and SM counts (with clusters fitting as if the SMs could be grouped
// freely, and as on our H100): every choice, forced or not, is a compiled kernel; never more CTAs
// than SMs; a split only where chapter 11 leaves more than half of the SMs idle or runs 16-wide
// tiles, on at least as many SMs as chapter 11, with one wave of clusters and slices of at least
// kMinSliceKBlocks; and every split variant is reached by the heuristic or the override.
TEST(Chapter12, TheConfigurationOnOtherSmCounts) {
  std::set<std::tuple<int, int, int>> reached;
  const int64_t ms[] = {1, 64, 100, 128, 200, 256, 1000, 4096};
  const int64_t ns[] = {8, 256, 1024, 2112, 2120, 4096, 7168, 24576};
  const int64_t ks[] = {128, 512, 2048, 7168};
  for (const int num_sms : {132, 114, 78, 66, 16, 2, 1}) {
    const ch12::ClusterFit fit =
        num_sms == 132 ? ch12::kH100ClusterFit : ch12::ClusterFit::for_sms(num_sms);
    for (int64_t m : ms)
      for (int64_t n : ns)
        for (int64_t k : ks) {
          const gemm::Shape s{m, n, k};
          const ch12::Config c = ch12::choose_config(s, num_sms, fit);
          const std::string what = ch12::describe(s, c) + " on " + std::to_string(num_sms);
          EXPECT_TRUE(ch12::compiled(ch12::variant_of(c))) << what;
          EXPECT_LE(c.grid, num_sms) << what;
          EXPECT_GE(c.grid, 1) << what;
          if (c.split > 1) {
            const ch11::Config c11 = ch11::choose_config(s, num_sms);
            EXPECT_TRUE(c11.grid <= num_sms * ch12::kSplitBelowOccupancy ||
                        c11.variant.block_n < ch12::kSplitBelowBlockN)
                << what;
            EXPECT_GE(c.grid, c11.grid) << what;
            EXPECT_LE(int64_t(c.tiles_m) * c.tiles_n, fit.clusters[c.split]) << what;
            EXPECT_GE(int(k / 128) / c.split, ch12::kMinSliceKBlocks) << what;
            EXPECT_GE(c.stages, ch12::kMinSplitStages) << what;
          }
          reached.insert({c.variant.block_m, c.variant.block_n, c.split});
          for (const char* text : {"2", "3", "4", "5", "6", "8"}) {
            const int split = text[0] - '0';
            if (fit.clusters[split] < 1) {  // more CTAs than SMs: refused with a sentence
              EXPECT_THROW(ch12::apply_split_override(s, c, text, num_sms, fit),
                           gemm::UnsupportedError)
                  << what;
              continue;
            }
            const ch12::Config f = ch12::apply_split_override(s, c, text, num_sms, fit);
            EXPECT_TRUE(ch12::compiled(ch12::variant_of(f))) << what;
            EXPECT_LE(f.grid, num_sms) << ch12::describe(s, f);
            reached.insert({f.variant.block_m, f.variant.block_n, f.split});
          }
        }
  }
  for (const ch12::Variant& v : ch12::kSplitVariants)
    EXPECT_TRUE(reached.count({v.block_m, v.block_n, v.split}))
        << v.block_m << "x" << v.block_n << " split " << v.split << " is never chosen";
}

}  // namespace
