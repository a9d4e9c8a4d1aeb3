// Every registered GEMM chapter against the CPU reference, on shapes that exercise partial tiles:
// M = 1, 100, 257, N not a multiple of 128. Adding a chapter to chapters/registry.cu adds it here.
#include <gtest/gtest.h>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

const Shape kShapes[] = {{1, 2112, 7168}, {100, 264, 512},  {257, 136, 1024},
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
  const ReferenceCheck r =
      check_against_reference(host, dev.download_d(), ch.tolerance(s), kCpuReferenceMacs);
  testing::expect_matches_reference(
      r, ch.max_rel_diff, std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed));
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

class ChapterRejects : public ::testing::TestWithParam<int> {};

TEST_P(ChapterRejects, IllegalShapeWithAMessage) {
  // No GPU needed: the shape is checked before anything touches the device.
  const Chapter& ch = *find_chapter(GetParam());
  for (auto [shape, words] :
       {std::pair<Shape, const char*>{{64, 100, 128}, "N must be a positive multiple of 8"},
        {{64, 128, 100}, "K must be a positive multiple of 128"},
        {{0, 128, 128}, "M must be at least 1"}}) {
    GemmArgs args;
    args.shape = shape;
    try {
      ch.launch(args, nullptr);
      ADD_FAILURE() << ch.dir << " accepted " << shape.str();
    } catch (const UnsupportedError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(All, ChapterRejects, ::testing::ValuesIn(gemm_chapters()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

}  // namespace
}  // namespace gemm

namespace gemm {
namespace {

// From chapter 02 on: every chapter against chapter 00 (the GPU reference, all of D) and against
// the CPU reference (bands of rows), on DeepGEMM's 18 shapes and ragged ones; and bit for bit
// against its predecessor where the registry says the arithmetic is the same.
// DeepGEMM's 18 shapes, then ragged ones: M = 1, 100, 4097 and N = 2112 + 8.
std::vector<Shape> benchmark_and_ragged_shapes() {
  std::vector<Shape> v(std::begin(kDeepGemmShapes), std::end(kDeepGemmShapes));
  v.insert(v.end(), {{1, 2120, 7168}, {100, 2120, 7168}, {4097, 2120, 7168}});
  return v;
}

class ChapterVsChapter00 : public ::testing::TestWithParam<std::tuple<int, Shape>> {};

TEST_P(ChapterVsChapter00, AgreesWithReferencesAndPredecessor) {
  SKIP_WITHOUT_HOPPER();
  const auto [number, s] = GetParam();
  const Chapter& ch = *find_chapter(number);
  const uint64_t seed = testing::test_seed();
  const std::string context = std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed);
  const HostProblem host = make_problem(s, seed, ch.applies_scales ? Scales::Random : Scales::Unit);
  const DeviceProblem dev(host);
  const std::vector<uint16_t> d = run_and_download(ch, dev);

  const std::vector<uint16_t> d00 = run_and_download(*find_chapter(0), dev);
  const Comparison vs00 = compare_outputs(d, d00, Tolerance{INFINITY, 0, 0});
  EXPECT_EQ(vs00.unwritten, 0) << context;
  EXPECT_EQ(vs00.nan, 0) << context;
  EXPECT_LE(vs00.rel_diff, ch.max_rel_diff) << context << " vs chapter 00: " << vs00.str();

  testing::expect_matches_reference(
      check_against_reference(host, d, ch.tolerance(s), kCpuReferenceMacs),
      ch.max_rel_diff, context + " vs CPU reference");

  if (ch.bitwise_equal_to_previous) {
    const Chapter& prev = *previous_gemm(ch);
    const std::vector<uint16_t> dp = run_and_download(prev, dev);
    int64_t differ = 0, first = -1;
    for (size_t i = 0; i < d.size(); ++i)
      if (d[i] != dp[i] && differ++ == 0) first = int64_t(i);
    EXPECT_EQ(differ, 0) << context << ": differs from " << prev.dir << " first at row "
                         << first / s.n << " col " << first % s.n;
  }
}

std::vector<int> tensor_core_chapters() {
  std::vector<int> v;
  for (const Chapter& c : chapters())
    if (c.launch && c.number >= 2) v.push_back(c.number);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, ChapterVsChapter00,
                         ::testing::Combine(::testing::ValuesIn(tensor_core_chapters()),
                                            ::testing::ValuesIn(benchmark_and_ragged_shapes())),
                         [](const auto& info) {
                           return std::string(find_chapter(std::get<0>(info.param))->dir) + "_" +
                                  testing::shape_param_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace gemm
