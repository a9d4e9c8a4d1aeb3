// Every registered GEMM chapter against the CPU reference, on shapes that exercise partial tiles:
// M = 1, 100, 257, N not a multiple of 128. Adding a chapter to chapters/registry.cu adds it here.
#include <gtest/gtest.h>

#include "chapters/registry.hpp"
#include "tests/gpu.hpp"

namespace gemm {
namespace {

// One chapter run on fresh inputs for one shape (D poisoned first): what every test here starts
// from. `context` names the chapter, the shape and the seed for the failure messages.
struct ChapterRun {
  ChapterRun(int number, const Shape& s)
      : ch(*find_chapter(number)),
        seed(testing::test_seed()),
        context(std::string(ch.dir) + " " + s.str() + " seed " + std::to_string(seed)),
        host(make_problem(s, seed, scales_for(ch))),
        dev(host),
        d(run_and_download(ch, dev)) {}

  const Chapter& ch;
  const uint64_t seed;
  const std::string context;
  const HostProblem host;
  const DeviceProblem dev;
  const std::vector<uint16_t> d;
};

// The registered GEMM chapters numbered `first` or more.
std::vector<int> gemm_chapters(int first = 0) {
  std::vector<int> v;
  for (const Chapter& c : chapters())
    if (c.launch && c.number >= first) v.push_back(c.number);
  return v;
}

const Shape kShapes[] = {{1, 2112, 7168}, {100, 264, 512},  {257, 136, 1024},
                         {128, 256, 384}, {64, 7168, 2048}, {300, 1032, 1536}};

class ChapterVsReference : public ::testing::TestWithParam<std::tuple<int, Shape>> {};

TEST_P(ChapterVsReference, MatchesCpuReference) {
  SKIP_WITHOUT_HOPPER();
  const auto [number, s] = GetParam();
  const ChapterRun run(number, s);
  testing::expect_matches_reference(
      check_against_reference(run.host, run.d, run.ch.tolerance(s), kCpuReferenceMacs),
      run.ch.max_rel_diff, run.context);
}

INSTANTIATE_TEST_SUITE_P(All, ChapterVsReference,
                         ::testing::Combine(::testing::ValuesIn(gemm_chapter_numbers()),
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

INSTANTIATE_TEST_SUITE_P(All, ChapterRejects, ::testing::ValuesIn(gemm_chapter_numbers()),
                         [](const auto& info) {
                           return std::string(find_chapter(info.param)->dir);
                         });

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
  const ChapterRun run(number, s);
  const auto& [ch, seed, context, host, dev, d] = run;

  const std::vector<uint16_t> d00 = run_and_download(*find_chapter(0), dev);
  const Comparison vs00 = compare_outputs(d, d00, Tolerance{INFINITY, 0, 0});
  EXPECT_EQ(vs00.unwritten, 0) << context;
  EXPECT_EQ(vs00.nan, 0) << context;
  EXPECT_LE(vs00.rel_diff, ch.max_rel_diff) << context << " vs chapter 00: " << vs00.str();

  testing::expect_matches_reference(
      check_against_reference(host, d, ch.tolerance(s), kCpuReferenceMacs), ch.max_rel_diff,
      context + " vs CPU reference");

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

INSTANTIATE_TEST_SUITE_P(All, ChapterVsChapter00,
                         ::testing::Combine(::testing::ValuesIn(gemm_chapters(2)),
                                            ::testing::ValuesIn(benchmark_and_ragged_shapes())),
                         [](const auto& info) {
                           return std::string(find_chapter(std::get<0>(info.param))->dir) + "_" +
                                  testing::shape_param_name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace gemm
