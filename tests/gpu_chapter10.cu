// Chapter 10's own GPU checks: each of chapter 09's four tiles with each multicast, against chapter
// 09 bit for bit, on ragged shapes whose tiles pair up (several pairs per cluster, the TMA
// clipping the loads and stores past M and N); multicast on A with the rank-1 CTA's half of the A
// tile wholly past M; the refusal of a multicast the shape cannot pair; the benchmark's ablations.
#include <string>
#include <vector>

#include "chapters/10_tma_multicast/cluster.hpp"
#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace ch10 {
void gemm_variant(const gemm::GemmArgs& args, int block_m, int block_n, Multicast m,
                  cudaStream_t stream);  // kernel.cu
}

namespace gemm {
namespace {

struct Tile {
  int block_m, block_n;
};
constexpr Tile kTiles[] = {{256, 128}, {128, 128}, {128, 144}, {128, 160}};

std::string name_of(Tile t, ch10::Multicast m) {
  return std::to_string(t.block_m) + "x" + std::to_string(t.block_n) + " multicast " +
         ch10::name(m);
}

// Two and twelve rows of tiles, six and 72 columns, the last of each ragged (7 rows and 8 columns
// short): every multicast pairs up; at twelve rows clusters walk several pairs. Four K blocks, so
// consecutive tiles share the ring at every stage count.
TEST(Chapter10, EveryTileAndMulticastMatchesChapter09) {
  SKIP_WITHOUT_HOPPER();
  for (const Tile t : kTiles)
    for (const ch10::Multicast m : {ch10::Multicast::None, ch10::Multicast::A, ch10::Multicast::B})
      for (const int rows : {2, 12}) {
        const Shape s{int64_t(rows) * t.block_m - 7, int64_t(6 * rows) * t.block_n - 8, 512};
        const uint64_t seed = testing::test_seed() + uint64_t(t.block_n) + uint64_t(rows);
        const std::string what = name_of(t, m) + " " + s.str() + " seed " + std::to_string(seed);
        const DeviceProblem dev(make_problem(s, seed, Scales::Random));
        const std::vector<uint16_t> d09 = run_and_download(*find_chapter(9), dev);
        dev.poison();
        ch10::gemm_variant(dev.args(), t.block_m, t.block_n, m, nullptr);
        EXPECT_EQ(count_bit_differences(dev.download_d(), d09), 0) << what;
      }
}

// Multicast on A at M = 1: the rank-1 CTA's half of the A tile (rows 64-127 or 128-255) lies wholly
// below M, a box the TMA fills with zeros and still counts in full.
TEST(Chapter10, MulticastOnAWithAHalfTilePastM) {
  SKIP_WITHOUT_HOPPER();
  for (const Tile t : {Tile{128, 128}, Tile{256, 128}}) {
    const Shape s{1, 16 * int64_t(t.block_n), 384};
    const uint64_t seed = testing::test_seed() + uint64_t(t.block_m);
    const DeviceProblem dev(make_problem(s, seed, Scales::Random));
    const std::vector<uint16_t> d09 = run_and_download(*find_chapter(9), dev);
    dev.poison();
    ch10::gemm_variant(dev.args(), t.block_m, t.block_n, ch10::Multicast::A, nullptr);
    EXPECT_EQ(count_bit_differences(dev.download_d(), d09), 0)
        << name_of(t, ch10::Multicast::A) << " " << s.str() << " seed " << seed;
  }
}

// Multicast on B with an odd number of tile rows, on A with an odd number of tile columns, and a
// tile chapter 09 does not compile: refused before anything launches.
TEST(Chapter10, RefusesWhatItCannotRun) {
  SKIP_WITHOUT_HOPPER();
  const Shape s{3 * 128, 3 * 160, 256};
  const DeviceProblem dev(make_problem(s, testing::test_seed(), Scales::Random));
  struct Case {
    Tile tile;
    ch10::Multicast m;
    const char* message;
  };
  for (const Case c : {Case{{128, 160}, ch10::Multicast::B, "pair up"},
                       Case{{128, 160}, ch10::Multicast::A, "pair up"},
                       Case{{128, 96}, ch10::Multicast::None, "no kernel compiled"}}) {
    dev.poison();
    try {
      ch10::gemm_variant(dev.args(), c.tile.block_m, c.tile.block_n, c.m, nullptr);
      ADD_FAILURE() << name_of(c.tile, c.m) << " was accepted on " << s.str();
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
    for (uint16_t bits : dev.download_d()) ASSERT_EQ(bits, kPoisonBits) << name_of(c.tile, c.m);
  }
}

// The benchmark's ablation entries (registry.cu): the multicast forced. Each either matches the
// chapter bit for bit or, where the tiles do not pair up for it, is refused before anything
// launches. Shapes where A and B are each refused somewhere.
TEST(Chapter10, TheAblationsMatchTheChapterOrRefuse) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(10);
  ASSERT_EQ(ch.ablations.size(), 3u);
  for (const Shape& s :
       {Shape{257, 1168, 1024}, Shape{256, 320, 512}, Shape{64, 2112, 512}, Shape{1, 256, 384}}) {
    const DeviceProblem dev(make_problem(s, testing::test_seed(), Scales::Random));
    const std::vector<uint16_t> d10 = run_and_download(ch, dev);
    for (const Ablation& a : ch.ablations) {
      dev.poison();
      try {
        a.launch(dev.args(), nullptr);
        EXPECT_EQ(count_bit_differences(dev.download_d(), d10), 0) << a.name << " " << s.str();
      } catch (const UnsupportedError& e) {
        EXPECT_NE(std::string(e.what()).find("pair up"), std::string::npos) << e.what();
        for (uint16_t bits : dev.download_d()) ASSERT_EQ(bits, kPoisonBits) << a.name << s.str();
      }
    }
  }
}

}  // namespace
}  // namespace gemm
