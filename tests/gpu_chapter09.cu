// Chapter 09's own GPU checks: the group size reorders the tiles among the CTAs and in time, and
// must never change D. The registry-driven tests (gpu_chapters.cu, gpu_fuzz.cu, ...) run chapter
// 09 with the group pick_group chooses; these force others through CH09_GROUP.
#include <cstdlib>
#include <string>
#include <vector>

#include "chapters/registry.hpp"
#include "common/reference.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

using testing::EnvOverride;  // tests/gpu.hpp

// Bit for bit equal to chapter 08 for every group size: 1 (row-major), sizes that leave a ragged
// last group, one larger than tiles_m (column-major) and a huge one. The shapes: fewer tiles than
// SMs; several tiles per CTA with M and N ragged and a ragged last wave; a single tile.
TEST(Chapter09, EveryGroupSizeGivesChapter08sD) {
  SKIP_WITHOUT_HOPPER();
  for (const Shape s : {Shape{257, 2120, 512}, Shape{4097, 7176, 256}, Shape{1, 136, 128}}) {
    const uint64_t seed = testing::test_seed() + uint64_t(s.m);
    const HostProblem host = make_problem(s, seed, Scales::Random);
    const DeviceProblem dev(host);
    const std::vector<uint16_t> d08 = run_and_download(*find_chapter(8), dev);
    for (const int group : {1, 2, 3, 7, 16, 33, 1 << 30}) {
      const EnvOverride override_group("CH09_GROUP", std::to_string(group));
      EXPECT_EQ(count_bit_differences(run_and_download(*find_chapter(9), dev), d08), 0)
          << s.str() << " seed " << seed << " CH09_GROUP=" << group;
    }
  }
}

// A malformed override is refused before anything launches: D keeps its poison.
TEST(Chapter09, RefusesAMalformedGroupOverride) {
  SKIP_WITHOUT_HOPPER();
  const Shape s{256, 256, 256};
  const DeviceProblem dev(make_problem(s, testing::test_seed(), Scales::Random));
  for (const char* bad : {"0", "-3", "abc", "4x", "99999999999"}) {
    const EnvOverride override_group("CH09_GROUP", bad);
    dev.poison();
    try {
      find_chapter(9)->launch(dev.args(), nullptr);
      ADD_FAILURE() << "CH09_GROUP=" << bad << " was accepted";
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find("CH09_GROUP"), std::string::npos) << e.what();
    }
    for (uint16_t bits : dev.download_d()) ASSERT_EQ(bits, kPoisonBits) << "CH09_GROUP=" << bad;
  }
}

}  // namespace
}  // namespace gemm
