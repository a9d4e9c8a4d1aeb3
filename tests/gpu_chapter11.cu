// Chapter 11's own GPU checks: every compiled variant, not only those the heuristic picks for the
// registry's shapes, against chapter 10 bit for bit, on ragged shapes whose tiles pair up for its
// multicast; the refusal of a multicast the shape cannot pair; the benchmark's ablation entries.
#include <string>
#include <vector>

#include "chapters/11_configuration/config.hpp"
#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace ch11 {
void gemm_variant(const gemm::GemmArgs& args, Variant v, cudaStream_t stream);  // kernel.cu
}

namespace gemm {
namespace {

std::string name_of(const ch11::Variant& v) {
  return std::to_string(v.block_m) + "x" + std::to_string(v.block_n) + " multicast " +
         ch11::name(v.multicast);
}

// Two rows and six columns of tiles, the last of each ragged (M and N stop 7 rows and 8 columns
// short): every multicast pairs up, and the TMA clipping of loads and stores is exercised; then
// twelve rows and 72 columns, more tiles than CTAs, so that clusters walk several pairs. Four K
// blocks each, so consecutive tiles share the ring at every stage count.
TEST(Chapter11, EveryVariantMatchesChapter10) {
  SKIP_WITHOUT_HOPPER();
  for (const ch11::Variant& v : ch11::kVariants) {
    for (const int rows : {2, 12}) {
      const Shape s{int64_t(rows) * v.block_m - 7, int64_t(6 * rows) * v.block_n - 8, 512};
      const uint64_t seed = testing::test_seed() + uint64_t(v.block_n) + uint64_t(rows);
      const std::string what = name_of(v) + " " + s.str() + " seed " + std::to_string(seed);
      const HostProblem host = make_problem(s, seed, Scales::Random);
      const DeviceProblem dev(host);
      const std::vector<uint16_t> d10 = run_and_download(*find_chapter(10), dev);
      dev.poison();
      ch11::gemm_variant(dev.args(), v, nullptr);
      EXPECT_EQ(count_bit_differences(dev.download_d(), d10), 0) << what;
    }
  }
}

// Multicast on A at M = 1: the rank-1 CTA's half of the A tile (rows 32-63 or 64-127) lies wholly
// below M, a box the TMA fills with zeros and still counts in full.
TEST(Chapter11, MulticastOnAWithAHalfTilePastM) {
  SKIP_WITHOUT_HOPPER();
  for (const ch11::Variant v :
       {ch11::Variant{64, 16, ch11::Multicast::A}, ch11::Variant{128, 32, ch11::Multicast::A}}) {
    const Shape s{1, 16 * int64_t(v.block_n), 384};
    const uint64_t seed = testing::test_seed() + uint64_t(v.block_m);
    const DeviceProblem dev(make_problem(s, seed, Scales::Random));
    const std::vector<uint16_t> d10 = run_and_download(*find_chapter(10), dev);
    dev.poison();
    ch11::gemm_variant(dev.args(), v, nullptr);
    EXPECT_EQ(count_bit_differences(dev.download_d(), d10), 0)
        << name_of(v) << " " << s.str() << " seed " << seed;
  }
}

// Multicast on B with an odd number of tile rows, on A with an odd number of tile columns:
// refused before anything launches.
TEST(Chapter11, RefusesAMulticastTheTilesCannotPair) {
  SKIP_WITHOUT_HOPPER();
  const Shape s{3 * 128, 3 * 160, 256};
  const DeviceProblem dev(make_problem(s, testing::test_seed(), Scales::Random));
  for (const ch11::Variant v :
       {ch11::Variant{128, 160, ch11::Multicast::B}, ch11::Variant{128, 160, ch11::Multicast::A}}) {
    dev.poison();
    try {
      ch11::gemm_variant(dev.args(), v, nullptr);
      ADD_FAILURE() << name_of(v) << " was accepted on " << s.str();
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("pair up"), std::string::npos) << e.what();
    }
    for (uint16_t bits : dev.download_d()) ASSERT_EQ(bits, kPoisonBits) << name_of(v);
  }
}

// The benchmark's ablation entries (registry.cu): chapters 06-10's tile, the heuristic's tile with
// the multicast forced, and the heuristic with BLOCK_M forced to 64, 128 or 256. Each either matches
// the chapter bit for bit or, where the tiles do not pair up for a forced multicast, is refused
// before anything launches. Shapes where A and B are each refused somewhere.
TEST(Chapter11, TheAblationsMatchTheChapterOrRefuse) {
  SKIP_WITHOUT_HOPPER();
  const Chapter& ch = *find_chapter(11);
  ASSERT_EQ(ch.ablations.size(), 7u);
  for (const Shape& s :
       {Shape{257, 1168, 1024}, Shape{256, 320, 512}, Shape{64, 2112, 512}, Shape{1, 256, 384}}) {
    const DeviceProblem dev(make_problem(s, testing::test_seed(), Scales::Random));
    const std::vector<uint16_t> d11 = run_and_download(ch, dev);
    for (const Ablation& a : ch.ablations) {
      dev.poison();
      try {
        a.launch(dev.args(), nullptr);
        EXPECT_EQ(count_bit_differences(dev.download_d(), d11), 0) << a.name << " " << s.str();
      } catch (const UnsupportedError& e) {
        EXPECT_NE(std::string(e.what()).find("pair up"), std::string::npos) << e.what();
        for (uint16_t bits : dev.download_d()) ASSERT_EQ(bits, kPoisonBits) << a.name << s.str();
      }
    }
  }
}

}  // namespace
}  // namespace gemm
