// Every registered GEMM chapter against the CPU reference, on shapes that exercise partial tiles:
// M = 1, 100, 257, N not a multiple of 128. Adding a chapter to chapters/registry.cu adds it here.
#include <gtest/gtest.h>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

const Shape kShapes[] = {{1, 2112, 7168}, {100, 264, 512}, {257, 136, 1024},
                         {128, 256, 384}, {64, 7168, 2048}, {300, 1032, 1536}};

class ChapterVsReference : public ::testing::TestWithParam<std::tuple<int, Shape>> {};

TEST_P(ChapterVsReference, MatchesCpuReference) {
  SKIP_WITHOUT_HOPPER();
  const auto [number, s] = GetParam();
  const Chapter& ch = *find_chapter(number);
  const uint64_t seed = testing::test_seed();
  const HostProblem host = make_problem(s, seed, ch.applies_scales ? Scales::Random : Scales::Unit);
  const DeviceProblem dev(host);
  dev.poison();
  ch.launch(dev.args(), nullptr);
  const ReferenceCheck r = check_against_reference(host, dev.download_d(), ch.tolerance(s),
                                                   testing::kCpuReferenceMacs);
  testing::expect_matches_reference(r, ch.max_rel_diff,
                                    std::string(ch.dir) + " " + s.str() + " seed " +
                                        std::to_string(seed));
}

std::vector<int> gemm_chapters() {
  std::vector<int> v;
  for (const Chapter& c : chapters())
    if (c.launch) v.push_back(c.number);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, ChapterVsReference,
                         ::testing::Combine(::testing::ValuesIn(gemm_chapters()),
                                            ::testing::ValuesIn(kShapes)),
                         [](const auto& info) {
                           return std::string(find_chapter(std::get<0>(info.param))->dir) + "_" +
                                  testing::shape_param_name(std::get<1>(info.param));
                         });

TEST(Chapter00, RejectsIllegalShapeWithAMessage) {
  // No GPU needed: the shape is checked before anything touches the device.
  GemmArgs args;
  args.shape = {64, 100, 128};
  try {
    find_chapter(0)->launch(args, nullptr);
    FAIL() << "an illegal shape was accepted";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("N must be a positive multiple of 8"), std::string::npos);
  }
}

}  // namespace
}  // namespace gemm
