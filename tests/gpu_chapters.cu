// Every registered GEMM chapter against the CPU reference, on shapes that exercise partial tiles:
// M = 1, 100, 257, N not a multiple of 128. Adding a chapter to chapters/registry.cu adds it here.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

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

// Chapters 02-05 sum all of K in the tensor core's accumulator and take K up to kMaxKUnpromoted
// (common/reference.hpp); the others take any K the shape allows. Checked before the device too:
// past the K check a launch with null pointers meets "the pointer to A is null".
TEST_P(ChapterRejects, KBeyondTheTensorCoresReachOnlyWithoutPromotion) {
  const Chapter& ch = *find_chapter(GetParam());
  const bool sums_all_of_k = !ch.applies_scales && !ch.side;
  for (const int64_t k : {kMaxKUnpromoted, kMaxKUnpromoted + 128}) {
    GemmArgs args;  // every pointer null
    args.shape = {64, 128, k};
    std::string why;
    try {
      ch.launch(args, nullptr);
    } catch (const UnsupportedError& e) {
      why = e.what();
    }
    if (sums_all_of_k && k > kMaxKUnpromoted)
      EXPECT_NE(why.find("K must be at most " + std::to_string(kMaxKUnpromoted)), std::string::npos)
          << ch.dir << " K=" << k << ": " << why;
    else
      EXPECT_NE(why.find("the pointer to A is null"), std::string::npos)
          << ch.dir << " K=" << k << ": " << why;
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

// The inputs of one shape, drawn once per process and shared by every chapter checked on it: the
// problem on the host and the device, the CPU reference on its bands, and chapter 00's D with its
// own check against that reference, each made on first use. Most of a case's cost is here (the
// draw, the upload, the reference, chapter 00 at 4096 x 7168 x 16384): a process that checks
// several chapters pays it once per shape and kind of scales, not once per chapter.
class SharedProblem {
 public:
  SharedProblem(const Shape& s, Scales scales, uint64_t seed)
      : shape(s), scales(scales), seed(seed), host(make_problem(s, seed, scales)), dev(host) {}

  const BandReference& reference() const {
    if (!reference_) reference_ = reference_on_bands(host, kCpuReferenceMacs);
    return *reference_;
  }
  // Chapter 00's D on these inputs (D poisoned first), and its check against the CPU reference.
  const std::vector<uint16_t>& d00() const {
    if (d00_.empty()) d00_ = run_and_download(*find_chapter(0), dev);
    return d00_;
  }
  const ReferenceCheck& d00_check() const {
    if (!d00_check_)
      d00_check_ = check_against_reference(reference(), d00(), find_chapter(0)->tolerance(shape));
    return *d00_check_;
  }

  const Shape shape;
  const Scales scales;
  const uint64_t seed;
  const HostProblem host;
  const DeviceProblem dev;

 private:
  mutable std::optional<BandReference> reference_;
  mutable std::vector<uint16_t> d00_;
  mutable std::optional<ReferenceCheck> d00_check_;
};

// The seed of a shape's inputs: the same for every chapter, moved by GEMM_TEST_SEED.
uint64_t shape_seed(const Shape& s) {
  return testing::seed_for("ChapterVsChapter00." + testing::shape_param_name(s));
}

class ChapterVsChapter00 : public ::testing::TestWithParam<std::tuple<Shape, int>> {
 protected:
  // The problems of the last shape or two, most recent first: the cases run shape by shape, so
  // each shape's two problems (unit and random scales) are drawn once, and device memory holds
  // no more than those (about 0.5 GB at 4096 x 7168 x 16384).
  static constexpr size_t kKept = 2;
  static std::list<SharedProblem>& cache() {
    static std::list<SharedProblem> problems;
    return problems;
  }
  static const SharedProblem& shared_problem(const Shape& s, Scales scales) {
    auto& problems = cache();
    const uint64_t seed = shape_seed(s);
    for (auto it = problems.begin(); it != problems.end(); ++it)
      if (it->shape.m == s.m && it->shape.n == s.n && it->shape.k == s.k && it->scales == scales &&
          it->seed == seed) {
        problems.splice(problems.begin(), problems, it);
        return problems.front();
      }
    while (problems.size() >= kKept) problems.pop_back();  // before the next allocation
    problems.emplace_front(s, scales, seed);
    return problems.front();
  }
  static void TearDownTestSuite() { cache().clear(); }  // device memory freed while CUDA lives
};

TEST_P(ChapterVsChapter00, AgreesWithReferencesAndPredecessor) {
  SKIP_WITHOUT_HOPPER();
  const auto [s, number] = GetParam();
  const Chapter& ch = *find_chapter(number);
  const SharedProblem& shared = shared_problem(s, scales_for(ch));
  const DeviceProblem& dev = shared.dev;
  const std::string inputs =
      s.str() + " seed " + std::to_string(shared.seed) +
      (shared.scales == Scales::Unit ? " (unit scales)" : " (random scales)");
  const std::string context = std::string(ch.dir) + " " + inputs;

  // Chapter 00 itself against the CPU reference, on these inputs: the yardstick below.
  testing::expect_matches_reference(shared.d00_check(), find_chapter(0)->max_rel_diff,
                                    "00_reference " + inputs + " vs CPU reference");

  const std::vector<uint16_t> d = run_and_download(ch, dev);
  const Comparison vs00 = compare_outputs(d, shared.d00(), Tolerance{INFINITY, 0, 0});
  EXPECT_EQ(vs00.unwritten, 0) << context;
  EXPECT_EQ(vs00.nan, 0) << context;
  EXPECT_LE(vs00.rel_diff, ch.max_rel_diff) << context << " vs chapter 00: " << vs00.str();

  testing::expect_matches_reference(check_against_reference(shared.reference(), d, ch.tolerance(s)),
                                    ch.max_rel_diff, context + " vs CPU reference");

  if (ch.bitwise_equal_to_previous) {
    const Chapter& prev = *previous_gemm(ch);
    const std::vector<uint16_t> dp = run_and_download(prev, dev);
    const int64_t differ = count_bit_differences(d, dp);
    const int64_t first =
        differ ? int64_t(std::mismatch(d.begin(), d.end(), dp.begin()).first - d.begin()) : -1;
    EXPECT_EQ(differ, 0) << context << ": differs from " << prev.dir << " first at row "
                         << first / s.n << " col " << first % s.n;
  }
}

// Shape by shape (every chapter on one shape, then the next shape), so that the chapters share each
// shape's inputs; named chapter first, so that --gtest_filter='*/06_fp8_promotion*' picks one
// chapter.
INSTANTIATE_TEST_SUITE_P(All, ChapterVsChapter00,
                         ::testing::Combine(::testing::ValuesIn(benchmark_and_ragged_shapes()),
                                            ::testing::ValuesIn(gemm_chapters(2))),
                         [](const auto& info) {
                           return std::string(find_chapter(std::get<1>(info.param))->dir) + "_" +
                                  testing::shape_param_name(std::get<0>(info.param));
                         });

}  // namespace
}  // namespace gemm
